//! The `endpoint` decision model: an OpenAI-compatible chat server.
//!
//! One POST to `<endpoint>/v1/chat/completions` per round, with a timeout of
//! the time left before the deadline, no redirects, and the reply read to at
//! most [`MAX_REPLY_BYTES`]. The reply's message must hold one JSON object
//! `{"keep": [ids], "expand": [ids], "stop": bool}` (code fences and text
//! around it are tolerated). The request carries repository text and the
//! trace, so it is never logged; errors name a status or a cause, never a body.

use std::fmt::Write;
use std::time::Duration;

use serde_json::{Value, json};

use crate::decide::{Decision, DecisionModel, ModelError, Request};

/// The longest reply read.
pub const MAX_REPLY_BYTES: u64 = 1024 * 1024;

const SYSTEM: &str = "You pick code to show a coding agent next to its search results. \
You get the agent's recent work (the trace), its search query, and a frontier: code symbols \
one call away from the search hits or from symbols picked before, each with an id and the \
call that links it. Answer with one JSON object and nothing else: \
{\"keep\": [ids], \"expand\": [ids], \"stop\": true|false}. \
keep: ids worth showing for the task, best first (no more than the round allows). \
expand: ids whose own callers and callees should be looked at next. \
stop: true when what is kept is enough. Use only ids from the frontier.";

/// An OpenAI-compatible chat completions endpoint.
pub struct Endpoint {
    url: String,
    model: Option<String>,
    api_key_env: Option<String>,
    agent: ureq::Agent,
}

impl Endpoint {
    /// `endpoint` is a base URL (`http://127.0.0.1:8080`, `https://host/v1`)
    /// or a full `…/chat/completions` URL; only `http` and `https` are accepted.
    /// `model` is sent when given (single-model servers do without).
    pub fn new(
        endpoint: &str,
        model: Option<&str>,
        api_key_env: Option<&str>,
    ) -> Result<Endpoint, String> {
        let url = completions_url(endpoint)?;
        let agent: ureq::Agent = ureq::Agent::config_builder()
            // Another host must not receive the request (and its key): no redirects.
            .max_redirects(0)
            .http_status_as_error(false)
            .user_agent(format!("lode/{}", lode_core::LODE_VERSION))
            .build()
            .into();
        Ok(Endpoint {
            url,
            model: model.map(str::to_string),
            api_key_env: api_key_env.map(str::to_string),
            agent,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    fn call(&self, body: &Value, timeout: Duration) -> Result<String, ModelError> {
        let mut req = self
            .agent
            .post(&self.url)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .header("Content-Type", "application/json");
        if let Some(var) = &self.api_key_env {
            let key = std::env::var(var)
                .ok()
                .filter(|k| !k.is_empty())
                .ok_or_else(|| ModelError::Failed(format!("${var} (api_key_env) is not set")))?;
            req = req.header("Authorization", &format!("Bearer {key}"));
        }
        let mut resp = req.send(body.to_string()).map_err(http_error)?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(ModelError::Failed(format!("HTTP {status}")));
        }
        resp.body_mut()
            .with_config()
            .limit(MAX_REPLY_BYTES)
            .read_to_string()
            .map_err(http_error)
    }
}

fn http_error(e: ureq::Error) -> ModelError {
    match e {
        ureq::Error::Timeout(_) => ModelError::Timeout,
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => ModelError::Timeout,
        ureq::Error::BodyExceedsLimit(n) => ModelError::Failed(format!("reply over {n} bytes")),
        other => ModelError::Failed(other.to_string()),
    }
}

/// The chat completions URL for a configured endpoint.
pub fn completions_url(endpoint: &str) -> Result<String, String> {
    let e = endpoint.trim();
    let lower = e.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
        .ok_or_else(|| format!("gather.endpoint must be an http or https URL, not {e:?}"))?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err(format!("gather.endpoint has no host: {e:?}"));
    }
    let base = e.trim_end_matches('/');
    Ok(if base.ends_with("/chat/completions") {
        base.to_string()
    } else if base.ends_with("/v1") {
        format!("{base}/chat/completions")
    } else {
        format!("{base}/v1/chat/completions")
    })
}

/// The user message: trace, query, and the frontier one node a paragraph,
/// each starting `[id] name  kind  path:line  edge`.
pub fn prompt(r: &Request) -> String {
    let mut out = String::new();
    if !r.trace.trim().is_empty() {
        let _ = write!(out, "Trace (most recent last):\n{}\n\n", r.trace.trim_end());
    }
    let _ = write!(
        out,
        "Query: {}\n\nRound {} of {}. Keep at most {}.\nFrontier:\n",
        r.query, r.round, r.max_rounds, r.quota
    );
    for n in &r.frontier {
        let kind = match &n.container {
            Some(c) => format!("{} in {c}", n.kind),
            None => n.kind.clone(),
        };
        let shown = if n.in_results {
            " (already in the results)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "[{}] {}  {kind}  {}:{}  {}{shown}",
            n.id,
            n.name,
            n.path,
            n.line,
            n.edge.text()
        );
        if !n.signature.is_empty() {
            let _ = writeln!(out, "    {}", n.signature);
        }
        for d in &n.doc {
            let _ = writeln!(out, "    // {d}");
        }
    }
    out
}

/// The decision inside a chat completion reply.
pub fn parse_reply(body: &str) -> Result<Decision, ModelError> {
    let v: Value = serde_json::from_str(body).map_err(|e| invalid("reply is not JSON", &e))?;
    let content = v["choices"][0]["message"]["content"]
        .as_str()
        .ok_or_else(|| ModelError::InvalidJson("reply has no choices[0].message.content".into()))?;
    parse_decision(content)
}

/// A decision from a message that should be one JSON object.
pub fn parse_decision(content: &str) -> Result<Decision, ModelError> {
    let (Some(start), Some(end)) = (content.find('{'), content.rfind('}')) else {
        return Err(ModelError::InvalidJson(
            "no JSON object in the message".into(),
        ));
    };
    if end < start {
        return Err(ModelError::InvalidJson(
            "no JSON object in the message".into(),
        ));
    }
    serde_json::from_str(&content[start..=end]).map_err(|e| invalid("not a decision", &e))
}

/// A parse error by position only: serde's messages may quote the reply,
/// which may quote the request.
fn invalid(what: &str, e: &serde_json::Error) -> ModelError {
    ModelError::InvalidJson(format!(
        "{what} ({:?} error at line {} column {})",
        e.classify(),
        e.line(),
        e.column()
    ))
}

impl DecisionModel for Endpoint {
    fn name(&self) -> &str {
        "endpoint"
    }

    fn cache_identity(&self) -> String {
        format!("endpoint {} {:?}", self.url, self.model)
    }

    fn decide(&self, request: &Request, timeout: Duration) -> Result<Decision, ModelError> {
        let mut body = json!({
            "temperature": 0,
            "max_tokens": 400,
            "stream": false,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": prompt(request)},
            ],
        });
        if let Some(m) = &self.model {
            body["model"] = json!(m);
        }
        parse_reply(&self.call(&body, timeout)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_urls_and_the_completions_path() {
        assert_eq!(
            completions_url("http://127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(
            completions_url("https://h.example/v1/").unwrap(),
            "https://h.example/v1/chat/completions"
        );
        assert_eq!(
            completions_url("https://h.example/api/chat/completions").unwrap(),
            "https://h.example/api/chat/completions"
        );
        for bad in [
            "file:///etc/passwd",
            "ftp://h",
            "127.0.0.1:8080",
            "http://",
            "http:///x",
        ] {
            assert!(completions_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn replies_yield_decisions_or_say_why_not() {
        let ok = r#"{"choices":[{"message":{"role":"assistant","content":"```json\n{\"keep\":[2],\"expand\":[],\"stop\":true}\n```"}}]}"#;
        assert_eq!(
            parse_reply(ok).unwrap(),
            Decision {
                keep: vec![2],
                expand: vec![],
                stop: true
            }
        );
        for bad in [
            "<html>oops</html>",
            r#"{"choices":[]}"#,
            r#"{"choices":[{"message":{"content":"I would keep the first one."}}]}"#,
            r#"{"choices":[{"message":{"content":"{\"keep\": \"all\"}"}}]}"#,
        ] {
            assert!(
                matches!(parse_reply(bad), Err(ModelError::InvalidJson(_))),
                "{bad}"
            );
        }
    }
}
