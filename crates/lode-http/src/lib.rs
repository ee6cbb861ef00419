//! HTTP for lode's model servers (the embedding server of `lode-embed`, the
//! decision endpoint of `lode-gather`): what every such client does the same
//! way, so each keeps only its own request and reply shapes.
//!
//! The principal types and how they fit:
//!
//! - [`base_url`]: a configured endpoint checked for an `http`/`https`
//!   scheme and a host, without its trailing `/`; each client appends its
//!   API path. (Which hosts are allowed is `lode_core::endpoint`'s policy,
//!   applied by callers before a client is built.)
//! - [`JsonClient`]: POSTs a JSON body to one URL. No redirect is followed
//!   (another host must not receive the request and its key), a key is read
//!   from an environment variable and sent as a bearer token, a status
//!   outside 2xx is an error, and a reply is read to at most a given number
//!   of bytes. [`JsonClient::post`] is one try within a timeout;
//!   [`JsonClient::post_retrying`] tries again on a transient failure, with
//!   a doubling backoff, within a [`Deadline`].
//! - [`Error`]: why one try failed, and whether it is transient
//!   ([`Error::is_transient`]: a connection failure, HTTP 429 or 5xx);
//!   [`GaveUp`]: why [`JsonClient::post_retrying`] stopped. Both display as
//!   one line that names a status or a cause, never a body (a reply may
//!   quote the request, which may carry repository text).
//! - `test_server` (feature `test-server`): a local HTTP server answering
//!   each request as a closure says, with hangs and truncated replies, for
//!   the tests of the clients.
//!
//! ```no_run
//! use std::time::Duration;
//! use lode_http::{Deadline, JsonClient, base_url};
//!
//! let url = format!("{}/v1/embeddings", base_url("http://127.0.0.1:8080/", "embed.endpoint")?);
//! let client = JsonClient::new(url, 1 << 20).bearer_key_env("OPENAI_API_KEY", "embed.api_key_env");
//! let body = r#"{"model": "m", "input": ["text"]}"#;
//! let reply = client.post_retrying(body, Deadline::after(Duration::from_secs(10)), 3);
//! # Ok::<(), String>(())
//! ```

#![deny(missing_docs)]

mod client;
mod error;
// Also built for this crate's own tests.
#[cfg(any(test, feature = "test-server"))]
pub mod test_server;

pub use client::{Deadline, JsonClient};
pub use error::{Error, GaveUp};

/// `endpoint` trimmed, checked to be an `http` or `https` URL with a host,
/// without its trailing `/`. `setting` names it in the error (`embed.endpoint`).
pub fn base_url<'a>(endpoint: &'a str, setting: &str) -> Result<&'a str, String> {
    let e = endpoint.trim();
    let lower = e.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
        .ok_or_else(|| format!("{setting} must be an http or https URL, not {e:?}"))?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err(format!("{setting} has no host: {e:?}"));
    }
    Ok(e.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_is_http_with_a_host_and_no_trailing_slash() {
        assert_eq!(base_url(" http://h:1/v1/ ", "x").unwrap(), "http://h:1/v1");
        assert_eq!(base_url("HTTPS://h", "x").unwrap(), "HTTPS://h");
        let e = base_url("file:///etc/passwd", "gather.endpoint").unwrap_err();
        assert_eq!(
            e,
            "gather.endpoint must be an http or https URL, not \"file:///etc/passwd\""
        );
        for bad in ["http://", "http:///x"] {
            let e = base_url(bad, "embed.endpoint").unwrap_err();
            assert!(e.starts_with("embed.endpoint has no host"), "{e}");
        }
        assert!(base_url("127.0.0.1:8080", "x").is_err());
    }
}
