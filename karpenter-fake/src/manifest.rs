//! Writing generated objects as `kubectl get -o yaml|json` would print them, for
//! loader tests and benchmarks.
//!
//! Keys are sorted, as kubectl sorts them, except that each item starts with
//! `apiVersion` and `kind`: for Kubernetes' own kinds sorting puts them first
//! anyway, and the scenario format's own kinds (`InstanceType`) are written that way
//! by hand.

use std::fmt::Write as _;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

/// The keys of an object, `apiVersion` and `kind` first, then the rest sorted.
fn envelope_first(map: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    let head = ["apiVersion", "kind"]
        .into_iter()
        .filter_map(|k| map.get_key_value(k));
    head.chain(
        map.iter()
            .filter(|(k, _)| *k != "apiVersion" && *k != "kind"),
    )
}

/// An item serialized with its envelope first.
struct Item<'a>(&'a Value);

impl Serialize for Item<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Value::Object(map) = self.0 else {
            return self.0.serialize(serializer);
        };
        let mut out = serializer.serialize_map(Some(map.len()))?;
        for (key, value) in envelope_first(map) {
            out.serialize_entry(key, value)?;
        }
        out.end()
    }
}

/// The list around the items.
struct List<'a>(&'a [Value]);

impl Serialize for List<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let items: Vec<Item<'_>> = self.0.iter().map(Item).collect();
        let mut out = serializer.serialize_map(Some(4))?;
        out.serialize_entry("apiVersion", "v1")?;
        out.serialize_entry("items", &items)?;
        out.serialize_entry("kind", "List")?;
        out.serialize_entry("metadata", &serde_json::json!({"resourceVersion": ""}))?;
        out.end()
    }
}

/// A `kind: List` of `items` as kubectl's JSON (4-space indent).
pub fn to_kubectl_json(items: Vec<Value>) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    List(&items)
        .serialize(&mut serializer)
        .expect("a Value always serializes");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A `kind: List` of `items` as kubectl's YAML (block style, strings quoted only
/// where YAML would read them as something else).
pub fn to_kubectl_yaml(items: &[Value]) -> String {
    let mut out = String::from("apiVersion: v1\nitems:\n");
    for item in items {
        match item {
            Value::Object(map) if !map.is_empty() => {
                for (i, (key, value)) in envelope_first(map).enumerate() {
                    let lead = if i == 0 { "- " } else { "  " };
                    write_entry(&mut out, lead, key, value, 2);
                }
            }
            other => write_seq_item(&mut out, other, 0),
        }
    }
    out.push_str("kind: List\nmetadata:\n  resourceVersion: \"\"\n");
    out
}

fn write_seq_item(out: &mut String, value: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (i, (key, v)) in map.iter().enumerate() {
                let lead = if i == 0 {
                    format!("{pad}- ")
                } else {
                    format!("{pad}  ")
                };
                write_entry(out, &lead, key, v, indent + 2);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let _ = writeln!(out, "{pad}-");
            for item in items {
                write_seq_item(out, item, indent + 2);
            }
        }
        scalar => {
            let _ = writeln!(out, "{pad}- {}", inline(scalar));
        }
    }
}

fn write_entry(out: &mut String, lead: &str, key: &str, value: &Value, indent: usize) {
    let key = scalar_text(key);
    match value {
        Value::Object(map) if !map.is_empty() => {
            let _ = writeln!(out, "{lead}{key}:");
            let pad = " ".repeat(indent + 2);
            for (k, v) in map {
                write_entry(out, &pad, k, v, indent + 2);
            }
        }
        // kubectl writes a list's items at the key's own indentation.
        Value::Array(items) if !items.is_empty() => {
            let _ = writeln!(out, "{lead}{key}:");
            for item in items {
                write_seq_item(out, item, indent);
            }
        }
        scalar => {
            let _ = writeln!(out, "{lead}{key}: {}", inline(scalar));
        }
    }
}

fn inline(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar_text(s),
        Value::Array(_) => "[]".to_string(),
        Value::Object(_) => "{}".to_string(),
    }
}

/// A string as a plain scalar when YAML reads it back as the same string, else
/// double-quoted (JSON's escapes are YAML's).
fn scalar_text(s: &str) -> String {
    let plain = s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._/".contains(c))
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
        );
    if plain {
        s.to_string()
    } else {
        Value::String(s.to_string()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml_output_is_kubectl_shaped() {
        let item = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"app": "web"}, "name": "web-0"},
            "spec": {"containers": [{"name": "app", "ports": [{"containerPort": 80}]}], "tolerations": []}});
        let yaml = to_kubectl_yaml(&[item]);
        let expected = "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    labels:\n      app: web\n    name: web-0\n  spec:\n    containers:\n    - name: app\n      ports:\n      - containerPort: 80\n    tolerations: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";
        assert_eq!(yaml, expected);
    }

    #[test]
    fn ambiguous_strings_are_quoted() {
        assert_eq!(scalar_text("true"), "\"true\"");
        assert_eq!(scalar_text("1"), "\"1\"");
        assert_eq!(scalar_text("100m"), "\"100m\"");
        assert_eq!(scalar_text("a: b"), "\"a: b\"");
        assert_eq!(scalar_text("web-0"), "web-0");
    }
}
