//! The `endpoint` decision model: an OpenAI-compatible chat server.
//!
//! One POST to `<endpoint>/v1/chat/completions` per round, with a timeout of
//! the time left before the deadline, no redirects, and the reply read to at
//! most [`MAX_REPLY_BYTES`] (`lode_http::JsonClient`); no retry, the round's
//! deadline leaves no time for one. The reply's message must hold one JSON object
//! `{"keep": [ids], "expand": [ids], "stop": bool}` (code fences and text
//! around it are tolerated). The request carries repository text and the
//! trace, so it is never logged; errors name a status or a cause, never a body.

use std::fmt::Write;
use std::time::Duration;

use lode_http::JsonClient;
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
    model: Option<String>,
    client: JsonClient,
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
        let mut client = JsonClient::new(completions_url(endpoint)?, MAX_REPLY_BYTES);
        if let Some(var) = api_key_env {
            client = client.bearer_key_env(var, "api_key_env");
        }
        Ok(Endpoint {
            model: model.map(str::to_string),
            client,
        })
    }

    /// The chat completions URL requests go to.
    pub fn url(&self) -> &str {
        self.client.url()
    }

    fn call(&self, body: &Value, timeout: Duration) -> Result<String, ModelError> {
        self.client
            .post(&body.to_string(), timeout)
            .map_err(|e| match e {
                lode_http::Error::Timeout => ModelError::Timeout,
                // Plain `HTTP <status>`, a 3xx included: the gather fallback
                // messages kept their wording when the client moved to lode-http.
                lode_http::Error::Status(status) => ModelError::Failed(format!("HTTP {status}")),
                other => ModelError::Failed(other.to_string()),
            })
    }
}

/// The chat completions URL for a configured endpoint.
pub fn completions_url(endpoint: &str) -> Result<String, String> {
    let base = lode_http::base_url(endpoint, "gather.endpoint")?;
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
            None => n.kind.to_string(),
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
        format!("endpoint {} {:?}", self.url(), self.model)
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
