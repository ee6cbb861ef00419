//! Tool arguments, checked one by one so that an error names the argument
//! and what it should be (serde's type errors name neither).

use serde_json::Value;

use crate::ToolError;
use crate::tools::{Arg, Kind};

pub type JsonObject = serde_json::Map<String, Value>;

/// Longest string argument accepted (a query, a pattern, a path).
pub const MAX_STRING: usize = 2_000;

/// A call's arguments, each read by the [`Arg`] that declares it.
pub struct Args {
    map: JsonObject,
}

impl Args {
    /// Refuses arguments the tool does not take. `null` counts as absent.
    pub fn new(tool: &str, map: JsonObject, accepted: &[Arg]) -> Result<Args, ToolError> {
        let known = |k: &str| accepted.iter().any(|a| a.name == k);
        if let Some(k) = map.keys().find(|k| !known(k)) {
            let names: Vec<&str> = accepted.iter().map(|a| a.name).collect();
            return Err(ToolError::bad_argument(format!(
                "unknown argument {:?}; {tool} takes {}",
                clip(k, 40),
                names.join(", ")
            )));
        }
        Ok(Args { map })
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn string(&self, arg: &Arg) -> Result<Option<String>, ToolError> {
        let key = arg.name;
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

    pub fn required_string(&self, arg: &Arg) -> Result<String, ToolError> {
        self.string(arg)?
            .ok_or_else(|| ToolError::bad_argument(format!("missing argument {}", arg.name)))
    }

    /// A required string that is not blank (`lode.bad_query`: `empty NAME`).
    pub fn non_blank(&self, arg: &Arg) -> Result<String, ToolError> {
        let text = self.required_string(arg)?;
        if text.trim().is_empty() {
            return Err(lode_core::Error::BadQuery(format!("empty {}", arg.name)).into());
        }
        Ok(text)
    }

    pub fn bool(&self, arg: &Arg) -> Result<Option<bool>, ToolError> {
        match self.get(arg.name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(wrong_type(arg.name, "true or false", v)),
        }
    }

    /// An integer within the bounds the argument declares.
    pub fn int(&self, arg: &Arg) -> Result<Option<u64>, ToolError> {
        let (min, max) = match arg.kind {
            Kind::Int { min, max, .. } => (min, max),
            _ => (0, u64::MAX),
        };
        match self.get(arg.name) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
                _ => Err(wrong_type(
                    arg.name,
                    &format!("an integer from {min} to {max}"),
                    v,
                )),
            },
        }
    }

    /// One of the strings the argument declares.
    pub fn choice(&self, arg: &Arg) -> Result<Option<&'static str>, ToolError> {
        let values: &[&'static str] = match arg.kind {
            Kind::OneOf(values, _) => values,
            _ => &[],
        };
        let Some(given) = self.string(arg)? else {
            return Ok(None);
        };
        match values.iter().find(|v| **v == given) {
            Some(v) => Ok(Some(v)),
            None => Err(ToolError::bad_argument(format!(
                "{} must be {}, not {:?}",
                arg.name,
                one_of(values),
                clip(&given, 40)
            ))),
        }
    }
}

/// `a, b or c`.
fn one_of(values: &[&str]) -> String {
    match values.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "nothing".into(),
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

    const Q: Arg = Arg::new("q", Kind::Text(None));
    const N: Arg = Arg::new(
        "n",
        Kind::Int {
            min: 1,
            max: 50,
            description: "",
        },
    );
    const B: Arg = Arg::new("b", Kind::Bool(None));
    const C: Arg = Arg::new("c", Kind::OneOf(&["in", "out", "both"], None));
    const Z: Arg = Arg::new("z", Kind::Text(None));

    fn args(v: Value) -> Result<Args, ToolError> {
        Args::new("t", v.as_object().unwrap().clone(), &[Q, N, B, C])
    }

    #[test]
    fn names_the_argument_and_what_it_should_be() {
        let e = args(json!({"x": 1})).err().unwrap();
        assert_eq!(e.code, ToolError::BAD_ARGUMENT);
        assert_eq!(e.message, "unknown argument \"x\"; t takes q, n, b, c");

        let a = args(json!({"q": 5, "n": "ten", "b": "yes", "c": "up"})).unwrap();
        assert_eq!(
            a.string(&Q).unwrap_err().message,
            "q must be a string, not 5"
        );
        assert_eq!(
            a.int(&N).unwrap_err().message,
            "n must be an integer from 1 to 50, not \"ten\""
        );
        assert_eq!(
            a.bool(&B).unwrap_err().message,
            "b must be true or false, not \"yes\""
        );
        assert_eq!(
            a.choice(&C).unwrap_err().message,
            "c must be in, out or both, not \"up\""
        );
        assert_eq!(
            a.required_string(&Z).unwrap_err().message,
            "missing argument z"
        );
        let a = args(json!({"c": "out"})).unwrap();
        assert_eq!(a.choice(&C).unwrap(), Some("out"));
    }

    #[test]
    fn null_is_absent_and_ranges_hold() {
        let a = args(json!({"q": null, "n": 0, "c": null})).unwrap();
        assert_eq!(a.string(&Q).unwrap(), None);
        assert_eq!(a.choice(&C).unwrap(), None);
        assert!(a.int(&N).is_err());
        let a = args(json!({"n": 50})).unwrap();
        assert_eq!(a.int(&N).unwrap(), Some(50));
    }

    #[test]
    fn huge_strings_are_refused_without_being_echoed() {
        let big = "x".repeat(1_000_000);
        let a = args(json!({ "q": big })).unwrap();
        let e = a.string(&Q).unwrap_err();
        assert!(e.message.len() < 100, "{}", e.message);
        let a = args(json!({ "n": [big] })).unwrap();
        let e = a.int(&N).unwrap_err();
        assert!(e.message.len() < 120, "{}", e.message);
    }
}
