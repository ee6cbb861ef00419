//! Tool arguments, checked one by one so that an error names the argument
//! and what it should be (serde's type errors name neither).

use serde_json::Value;

use crate::ToolError;

pub type JsonObject = serde_json::Map<String, Value>;

/// Longest string argument accepted (a query, a pattern, a path).
pub const MAX_STRING: usize = 2_000;

/// A tool's arguments, with the names it accepts.
pub struct Args {
    map: JsonObject,
}

impl Args {
    /// Refuses arguments the tool does not take. `null` counts as absent.
    pub fn new(tool: &str, map: JsonObject, accepted: &[&str]) -> Result<Args, ToolError> {
        if let Some(k) = map.keys().find(|k| !accepted.contains(&k.as_str())) {
            return Err(ToolError::bad_argument(format!(
                "unknown argument {:?}; {tool} takes {}",
                clip(k, 40),
                accepted.join(", ")
            )));
        }
        Ok(Args { map })
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn string(&self, key: &str) -> Result<Option<String>, ToolError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if s.chars().count() > MAX_STRING => {
                Err(ToolError::bad_argument(format!(
                    "{key} is {} characters long; at most {MAX_STRING}",
                    s.chars().count()
                )))
            }
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(wrong_type(key, "a string", v)),
        }
    }

    pub fn required_string(&self, key: &str) -> Result<String, ToolError> {
        self.string(key)?
            .ok_or_else(|| ToolError::bad_argument(format!("missing argument {key}")))
    }

    pub fn bool(&self, key: &str) -> Result<Option<bool>, ToolError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(wrong_type(key, "true or false", v)),
        }
    }

    /// An integer in `min..=max`.
    pub fn int(&self, key: &str, min: u64, max: u64) -> Result<Option<u64>, ToolError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
                _ => Err(wrong_type(
                    key,
                    &format!("an integer from {min} to {max}"),
                    v,
                )),
            },
        }
    }
}

fn wrong_type(key: &str, expected: &str, got: &Value) -> ToolError {
    // Echo only the start of the value: arguments may be huge.
    ToolError::bad_argument(format!(
        "{key} must be {expected}, not {}",
        clip(&got.to_string(), 40)
    ))
}

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Result<Args, ToolError> {
        Args::new("t", v.as_object().unwrap().clone(), &["q", "n", "b"])
    }

    #[test]
    fn names_the_argument_and_what_it_should_be() {
        let e = args(json!({"x": 1})).err().unwrap();
        assert_eq!(e.code, ToolError::BAD_ARGUMENT);
        assert_eq!(e.message, "unknown argument \"x\"; t takes q, n, b");

        let a = args(json!({"q": 5, "n": "ten", "b": "yes"})).unwrap();
        assert_eq!(
            a.string("q").unwrap_err().message,
            "q must be a string, not 5"
        );
        assert_eq!(
            a.int("n", 1, 50).unwrap_err().message,
            "n must be an integer from 1 to 50, not \"ten\""
        );
        assert_eq!(
            a.bool("b").unwrap_err().message,
            "b must be true or false, not \"yes\""
        );
        assert_eq!(
            a.required_string("z").unwrap_err().message,
            "missing argument z"
        );
    }

    #[test]
    fn null_is_absent_and_ranges_hold() {
        let a = args(json!({"q": null, "n": 0})).unwrap();
        assert_eq!(a.string("q").unwrap(), None);
        assert!(a.int("n", 1, 50).is_err());
        let a = args(json!({"n": 50})).unwrap();
        assert_eq!(a.int("n", 1, 50).unwrap(), Some(50));
    }

    #[test]
    fn huge_strings_are_refused_without_being_echoed() {
        let big = "x".repeat(1_000_000);
        let a = args(json!({ "q": big })).unwrap();
        let e = a.string("q").unwrap_err();
        assert!(e.message.len() < 100, "{}", e.message);
        let a = args(json!({ "n": [big] })).unwrap();
        let e = a.int("n", 1, 5).unwrap_err();
        assert!(e.message.len() < 120, "{}", e.message);
    }
}
