//! Why a request failed, as one line that never quotes a body.

use std::fmt;
use std::time::Duration;

/// Why one try failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The environment variable meant to hold the key is unset or empty;
    /// `setting` is the config key that names it (`embed.api_key_env`).
    NoKey {
        /// The variable's name.
        var: String,
        /// The config key that names it.
        setting: &'static str,
    },
    /// No complete answer within the timeout.
    Timeout,
    /// A status outside 2xx (a redirect included: none is followed).
    Status(u16),
    /// The reply is longer than the client reads.
    TooLarge(u64),
    /// Connecting, sending or reading failed.
    Transport(String),
}

impl Error {
    /// Whether trying again may help: a connection failure, HTTP 429 or 5xx.
    /// A timeout is not: the time is spent.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Transport(_) => true,
            Error::Status(s) => *s == 429 || *s >= 500,
            Error::NoKey { .. } | Error::Timeout | Error::TooLarge(_) => false,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoKey { var, setting } => write!(f, "${var} ({setting}) is not set"),
            Error::Timeout => f.write_str("timed out"),
            Error::Status(s) if (300..400).contains(s) => {
                write!(f, "HTTP {s} (redirects are not followed)")
            }
            Error::Status(s) => write!(f, "HTTP {s}"),
            Error::TooLarge(n) => write!(f, "reply over {n} bytes"),
            Error::Transport(cause) => f.write_str(cause),
        }
    }
}

impl std::error::Error for Error {}

impl From<ureq::Error> for Error {
    fn from(e: ureq::Error) -> Error {
        match e {
            ureq::Error::Timeout(_) => Error::Timeout,
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => Error::Timeout,
            ureq::Error::BodyExceedsLimit(n) => Error::TooLarge(n),
            other => Error::Transport(other.to_string()),
        }
    }
}

/// Why [`JsonClient::post_retrying`](crate::JsonClient::post_retrying) stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GaveUp {
    /// The deadline passed before a try could start; the duration is the
    /// time the deadline allowed in all.
    Deadline(Duration),
    /// The last try failed: not transiently, or on the last allowed try.
    Failed {
        /// Why the last try failed.
        error: Error,
        /// Tries made, the last included.
        tries: u32,
    },
}

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GaveUp::Deadline(d) => {
                write!(f, "no answer within the deadline of {} ms", d.as_millis())
            }
            GaveUp::Failed { error, tries } if error.is_transient() => {
                write!(f, "{error} (after {tries} tries)")
            }
            GaveUp::Failed { error, .. } => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for GaveUp {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_failures_are_the_connection_429_and_5xx() {
        assert!(Error::Transport("connection refused".into()).is_transient());
        for s in [429, 500, 503] {
            assert!(Error::Status(s).is_transient(), "{s}");
        }
        for e in [
            Error::Status(400),
            Error::Status(401),
            Error::Status(307),
            Error::Timeout,
            Error::TooLarge(10),
            Error::NoKey {
                var: "K".into(),
                setting: "api_key_env",
            },
        ] {
            assert!(!e.is_transient(), "{e}");
        }
    }

    #[test]
    fn every_failure_is_one_line_naming_a_status_or_a_cause() {
        let no_key = Error::NoKey {
            var: "KEY".into(),
            setting: "embed.api_key_env",
        };
        assert_eq!(no_key.to_string(), "$KEY (embed.api_key_env) is not set");
        assert_eq!(Error::Status(401).to_string(), "HTTP 401");
        assert_eq!(
            Error::Status(307).to_string(),
            "HTTP 307 (redirects are not followed)"
        );
        assert_eq!(Error::TooLarge(5).to_string(), "reply over 5 bytes");
        let gave_up = |error| GaveUp::Failed { error, tries: 3 };
        assert_eq!(
            gave_up(Error::Status(503)).to_string(),
            "HTTP 503 (after 3 tries)"
        );
        assert_eq!(gave_up(Error::Status(401)).to_string(), "HTTP 401");
        assert_eq!(
            GaveUp::Deadline(Duration::from_millis(300)).to_string(),
            "no answer within the deadline of 300 ms"
        );
    }
}
