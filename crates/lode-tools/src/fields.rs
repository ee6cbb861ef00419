//! The searchable text of a tool, by field.

use serde_json::Value;

use crate::catalog::Tool;
use crate::text;

/// The fields of a tool that search scores, each with its own weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The canonical name (with its group), split into words.
    Name,
    Description,
    /// Parameter names, titles, descriptions and enum values, at any depth of the schema.
    Params,
}

impl Field {
    pub const ALL: [Field; 3] = [Field::Name, Field::Description, Field::Params];
    pub const COUNT: usize = Field::ALL.len();
}

/// Schemas nest; deeper than this is generated noise (and a cycle guard).
const MAX_DEPTH: usize = 8;
/// Parameter text kept per tool: enough for any hand-written schema, bounded
/// for generated ones (some servers inline whole API specs).
const MAX_PARAM_TEXT: usize = 8_000;

/// The terms of each field of `tool`, in [`Field::ALL`] order.
pub fn field_terms(tool: &Tool) -> [Vec<String>; Field::COUNT] {
    [
        text::terms(&tool.name),
        text::terms(&tool.description),
        text::terms(&params_text(tool)),
    ]
}

/// Parameter names, titles, descriptions and enum values, one per line.
fn params_text(tool: &Tool) -> String {
    let mut out = String::new();
    schema_text(&tool.input_schema, 0, &mut out);
    out
}

/// What an embedding of the tool sees: name words, description, parameter names.
pub fn embedding_text(tool: &Tool) -> String {
    let words = crate::text::split_identifier(&tool.name).join(" ");
    let mut names = Vec::new();
    param_names(&tool.input_schema, 0, &mut names);
    let mut text = format!("{words}: {}", tool.description.trim());
    if !names.is_empty() {
        text.push_str(" (");
        text.push_str(&names.join(", ").replace('_', " "));
        text.push(')');
    }
    text
}

fn push(out: &mut String, s: &str) {
    if out.len() < MAX_PARAM_TEXT {
        out.push_str(s);
        out.push('\n');
    }
}

fn schema_text(schema: &Value, depth: usize, out: &mut String) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(obj) = schema.as_object() else {
        return;
    };
    // The top-level description repeats the tool's own, usually; nested ones describe parameters.
    if depth > 0 {
        for key in ["title", "description"] {
            if let Some(s) = obj.get(key).and_then(Value::as_str) {
                push(out, s);
            }
        }
        if let Some(values) = obj.get("enum").and_then(Value::as_array) {
            for v in values.iter().filter_map(Value::as_str) {
                push(out, v);
            }
        }
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            push(out, name);
            schema_text(sub, depth + 1, out);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = obj.get(key) {
            schema_text(sub, depth + 1, out);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(subs) = obj.get(key).and_then(Value::as_array) {
            for sub in subs {
                schema_text(sub, depth + 1, out);
            }
        }
    }
    for key in ["$defs", "definitions"] {
        if let Some(defs) = obj.get(key).and_then(Value::as_object) {
            for sub in defs.values() {
                schema_text(sub, depth + 1, out);
            }
        }
    }
}

fn param_names(schema: &Value, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH || out.len() >= 32 {
        return;
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            out.push(name.clone());
            param_names(sub, depth + 1, out);
        }
    }
    if let Some(items) = schema.get("items") {
        param_names(items, depth + 1, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parameter_text_reaches_nested_schemas() {
        let tool = Tool::new(
            "t",
            "top",
            json!({"type": "object", "description": "top", "properties": {
                "filters": {"type": "array", "items": {"type": "object", "properties": {
                    "zipCode": {"type": "string", "description": "postal area"},
                    "unit": {"enum": ["celsius", "fahrenheit"]}}}},
                "mode": {"anyOf": [{"type": "string", "title": "latitude"}]}}}),
        );
        let params = params_text(&tool);
        for word in [
            "filters",
            "zipCode",
            "postal area",
            "celsius",
            "fahrenheit",
            "latitude",
            "mode",
        ] {
            assert!(params.contains(word), "{word} missing from {params:?}");
        }
        assert!(
            !params.contains("top"),
            "the top description is the tool's: {params:?}"
        );
    }

    #[test]
    fn a_self_referencing_depth_is_bounded() {
        let mut schema = json!({"type": "string", "description": "leaf"});
        for _ in 0..50 {
            schema = json!({"type": "object", "properties": {"p": schema}});
        }
        assert!(!params_text(&Tool::new("t", "", schema)).contains("leaf"));
    }
}
