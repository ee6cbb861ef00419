//! [`JsonClient`]: one URL, JSON POSTs, the policy every model server gets.

use std::time::{Duration, Instant};

use crate::{Error, GaveUp};

/// The wait before the first retry; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// The end of the time allowed for a piece of work (several requests, say),
/// and how long that was, for the message when it passes.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    /// When it passes.
    pub at: Instant,
    /// The time it allowed in all, for messages.
    pub allowed: Duration,
}

impl Deadline {
    /// `allowed` from now.
    pub fn after(allowed: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + allowed,
            allowed,
        }
    }

    /// The time left, zero once it passed.
    pub fn left(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }
}

/// A client of one URL that POSTs JSON (see the crate doc for its policy).
pub struct JsonClient {
    url: String,
    /// The environment variable holding the key, and the config key naming it.
    key_env: Option<(String, &'static str)>,
    max_reply_bytes: u64,
    agent: ureq::Agent,
}

impl std::fmt::Debug for JsonClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonClient")
            .field("url", &self.url)
            .field("max_reply_bytes", &self.max_reply_bytes)
            .finish()
    }
}

impl JsonClient {
    /// A client of `url` reading replies of at most `max_reply_bytes`.
    pub fn new(url: String, max_reply_bytes: u64) -> JsonClient {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            // Another host must not receive the request (and its key): no redirects.
            .max_redirects(0)
            .http_status_as_error(false)
            .user_agent(concat!("lode/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        JsonClient {
            url,
            key_env: None,
            max_reply_bytes,
            agent,
        }
    }

    /// Sends `Authorization: Bearer $var` with each request; `setting` is the
    /// config key that named `var`, for the error when it is not set. The
    /// variable is read at each request, so the key never sits in the client.
    pub fn bearer_key_env(mut self, var: &str, setting: &'static str) -> JsonClient {
        self.key_env = Some((var.to_string(), setting));
        self
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// One POST of `body`, answered within `timeout`: the reply's text.
    pub fn post(&self, body: &str, timeout: Duration) -> Result<String, Error> {
        let mut req = self
            .agent
            .post(&self.url)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .header("Content-Type", "application/json");
        if let Some((var, setting)) = &self.key_env {
            let key = std::env::var(var)
                .ok()
                .filter(|k| !k.is_empty())
                .ok_or_else(|| Error::NoKey {
                    var: var.clone(),
                    setting,
                })?;
            req = req.header("Authorization", &format!("Bearer {key}"));
        }
        let mut resp = req.send(body)?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(Error::Status(status));
        }
        Ok(resp
            .body_mut()
            .with_config()
            .limit(self.max_reply_bytes)
            .read_to_string()?)
    }

    /// POSTs `body` until it is answered, at most `attempts` tries (at least
    /// one), each within the time left before `deadline`. Only a transient
    /// failure ([`Error::is_transient`]) is tried again, after 100 ms, then
    /// 200 ms, … at most 2 s, never past the deadline.
    pub fn post_retrying(
        &self,
        body: &str,
        deadline: Deadline,
        attempts: u32,
    ) -> Result<String, GaveUp> {
        let mut backoff = FIRST_BACKOFF;
        let mut tries = 1;
        loop {
            let left = deadline.left();
            if left.is_zero() {
                return Err(GaveUp::Deadline(deadline.allowed));
            }
            match self.post(body, left) {
                Ok(reply) => return Ok(reply),
                Err(e) if e.is_transient() && tries < attempts.max(1) => {
                    std::thread::sleep(backoff.min(deadline.left()));
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    tries += 1;
                }
                Err(error) => return Err(GaveUp::Failed { error, tries }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_server::{Response, TestServer, refused_url};

    fn client(server: &TestServer) -> JsonClient {
        JsonClient::new(format!("{}/v1/x", server.url), 64)
    }

    fn soon() -> Deadline {
        Deadline::after(Duration::from_secs(5))
    }

    #[test]
    fn a_post_sends_json_and_reads_the_reply() {
        let server = TestServer::start(|_| Response::json(200, r#"{"ok":true}"#));
        let reply = client(&server).post(r#"{"q":1}"#, Duration::from_secs(5));
        assert_eq!(reply.unwrap(), r#"{"ok":true}"#);
        let seen = server.seen();
        assert_eq!(seen[0].path, "/v1/x");
        assert_eq!(seen[0].body, br#"{"q":1}"#);
        assert_eq!(seen[0].header("content-type"), Some("application/json"));
        assert!(seen[0].header("user-agent").unwrap().starts_with("lode/"));
        assert_eq!(seen[0].header("authorization"), None);
    }

    #[test]
    fn transient_failures_are_retried_up_to_the_attempts() {
        let server = TestServer::start(|r| match r.n {
            0 => Response::json(503, ""),
            1 => Response::json(429, ""),
            _ => Response::json(200, "fine"),
        });
        assert_eq!(
            client(&server).post_retrying("{}", soon(), 3).unwrap(),
            "fine"
        );
        assert_eq!(server.requests(), 3);

        let server = TestServer::start(|_| Response::json(500, "secret"));
        let e = client(&server).post_retrying("{}", soon(), 2).unwrap_err();
        assert_eq!(e.to_string(), "HTTP 500 (after 2 tries)");
        assert_eq!(server.requests(), 2);

        let e = JsonClient::new(refused_url(), 64)
            .post_retrying("{}", soon(), 3)
            .unwrap_err();
        assert!(e.to_string().ends_with("(after 3 tries)"), "{e}");
    }

    #[test]
    fn other_failures_are_not_retried() {
        let long = "x".repeat(65);
        let cases = [
            (Response::json(401, "secret"), "HTTP 401"),
            (Response::json(200, long), "reply over 64 bytes"),
        ];
        for (response, want) in cases {
            let response = std::sync::Mutex::new(Some(response));
            let server = TestServer::start(move |_| {
                response
                    .lock()
                    .unwrap()
                    .take()
                    .unwrap_or(Response::json(200, ""))
            });
            let e = client(&server).post_retrying("{}", soon(), 3).unwrap_err();
            assert_eq!(e.to_string(), want);
            assert_eq!(server.requests(), 1, "{want}");
        }
    }

    #[test]
    fn a_redirect_is_not_followed() {
        let target = TestServer::start(|_| Response::json(200, "{}"));
        let location = format!("{}/v1/x", target.url);
        let server = TestServer::start(move |_| {
            Response::json(307, format!(r#"{{"location": "{location}"}}"#))
        });
        let e = client(&server)
            .post("{}", Duration::from_secs(5))
            .unwrap_err();
        assert_eq!(e, Error::Status(307));
        assert_eq!(target.requests(), 0);
    }

    #[test]
    fn a_hang_meets_the_deadline() {
        let server = TestServer::start(|_| Response::Hang(Duration::from_secs(30)));
        let started = Instant::now();
        let e = client(&server)
            .post_retrying("{}", Deadline::after(Duration::from_millis(300)), 3)
            .unwrap_err();
        assert_eq!(
            e,
            GaveUp::Failed {
                error: Error::Timeout,
                tries: 1
            }
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let spent = Deadline {
            at: Instant::now(),
            allowed: Duration::from_millis(300),
        };
        let e = client(&server).post_retrying("{}", spent, 3).unwrap_err();
        assert_eq!(e.to_string(), "no answer within the deadline of 300 ms");
    }

    #[test]
    fn the_key_is_read_from_the_environment_at_each_request() {
        let server = TestServer::start(|_| Response::json(200, "{}"));
        // PATH is set in any test environment; the value only travels to the local server.
        let c = client(&server).bearer_key_env("PATH", "api_key_env");
        c.post("{}", Duration::from_secs(5)).unwrap();
        let want = format!("Bearer {}", std::env::var("PATH").unwrap());
        assert_eq!(
            server.seen()[0].header("Authorization"),
            Some(want.as_str())
        );

        let c = client(&server).bearer_key_env("LODE_TEST_SURELY_UNSET_KEY", "embed.api_key_env");
        let e = c.post_retrying("{}", soon(), 3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "$LODE_TEST_SURELY_UNSET_KEY (embed.api_key_env) is not set"
        );
        assert_eq!(server.requests(), 1, "nothing sent without the key");
    }
}
