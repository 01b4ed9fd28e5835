//! A JSON value written as block YAML the way upstream's `sigs.k8s.io/yaml`
//! writes a NodeConfig (keys sorted, sequences at their key's indentation,
//! empty maps as `{}`), and a test of whether text reads as a YAML mapping.

use serde_json::Value;

/// `value` as a YAML document (ending in a line break).
pub(crate) fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => write_map(&mut out, map, 0),
        Value::Array(items) if !items.is_empty() => write_seq(&mut out, items, 0),
        scalar => {
            out.push_str(&scalar_text(scalar));
            out.push('\n');
        }
    }
    out
}

fn write_map(out: &mut String, map: &serde_json::Map<String, Value>, indent: usize) {
    // Sorted whatever the map's own order: the output must be deterministic.
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    for (index, key) in keys.into_iter().enumerate() {
        // The first key of a sequence item sits after its "- ".
        if index > 0 || indent == 0 || !out.ends_with("- ") {
            push_indent(out, indent);
        }
        out.push_str(&string_text(key));
        out.push(':');
        write_value_after_key(out, &map[key], indent);
    }
}

fn write_value_after_key(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Object(inner) if !inner.is_empty() => {
            out.push('\n');
            write_map(out, inner, indent + 2);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            write_seq(out, items, indent);
        }
        scalar => {
            out.push(' ');
            out.push_str(&scalar_text(scalar));
            out.push('\n');
        }
    }
}

fn write_seq(out: &mut String, items: &[Value], indent: usize) {
    for item in items {
        push_indent(out, indent);
        out.push_str("- ");
        match item {
            Value::Object(map) if !map.is_empty() => write_map(out, map, indent + 2),
            Value::Array(inner) if !inner.is_empty() => {
                out.push('\n');
                write_seq(out, inner, indent + 2);
            }
            scalar => {
                out.push_str(&scalar_text(scalar));
                out.push('\n');
            }
        }
    }
}

fn push_indent(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string_text(s),
        Value::Object(_) => "{}".to_owned(),
        Value::Array(_) => "[]".to_owned(),
    }
}

/// A string plain when YAML reads it back as the same string, else
/// double-quoted (JSON's escapes are valid in YAML's double quotes).
fn string_text(s: &str) -> String {
    if plain_is_safe(s) {
        s.to_owned()
    } else {
        serde_json::Value::String(s.to_owned()).to_string()
    }
}

fn plain_is_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let second = s.chars().nth(1);
    let indicator_start =
        "?:,[]{}#&*!|>'\"%@`".contains(first) || (first == '-' && second.is_none_or(|c| c == ' '));
    !indicator_start
        && !s.starts_with(' ')
        && !s.ends_with([' ', ':'])
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.chars().any(char::is_control)
        && !resolves_to_non_string(s)
}

/// Whether YAML 1.1 (go-yaml's reading) takes a plain `s` as a bool, null
/// or number.
fn resolves_to_non_string(s: &str) -> bool {
    const WORDS: [&str; 12] = [
        "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", ".inf", ".nan",
    ];
    let lower = s.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    WORDS.contains(&lower.as_str())
        || WORDS.contains(&unsigned)
        || lower.replace('_', "").parse::<f64>().is_ok()
        || unsigned.starts_with("0x")
        || unsigned.starts_with("0o")
        || unsigned.starts_with("0b")
}

/// Whether `text` reads as a YAML mapping (or an empty document), which is
/// how upstream tells a NodeConfig from a shell script: every significant
/// line is indented, a sequence item, or a top-level `key:`; the first is a
/// `key:` or a flow mapping. A line-level test, not a full YAML parser.
pub(crate) fn looks_like_mapping(text: &str) -> bool {
    let mut significant = text.lines().filter(|line| {
        let trimmed = line.trim();
        !trimmed.is_empty() && !trimmed.starts_with('#') && trimmed != "---"
    });
    let Some(first) = significant.next() else {
        return true;
    };
    if first.starts_with('{') {
        return true;
    }
    is_top_level_key(first)
        && significant.all(|line| {
            line.starts_with([' ', '\t']) || line.starts_with('-') || is_top_level_key(line)
        })
}

fn is_top_level_key(line: &str) -> bool {
    if line.starts_with([' ', '\t', '-', '#']) {
        return false;
    }
    let line = line.trim_end();
    line.match_indices(':')
        .any(|(at, _)| at > 0 && line[at + 1..].chars().next().is_none_or(|c| c == ' '))
}
