//! A small ordered TOML tree for Bottlerocket's settings: read from the
//! class's `userData` through `toml_edit`'s parser, and written back in the
//! layout upstream's encoder (go-toml v2) gives: a table's plain keys
//! first, then its sub-tables under `[a.b]` headers, strings as literal
//! `'...'` where they can be, keys bare where they can be.

use std::fmt::Write as _;

use toml_edit::{DocumentMut, Item, TomlError};

/// One TOML value. Tables keep the order they are built in, so the writer
/// can follow upstream's field order where it has one.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    String(String),
    Integer(i64),
    Float(f64),
    Boolean(bool),
    /// A date-time as TOML spells it (kept as written).
    Datetime(String),
    Array(Vec<Value>),
    Table(Table),
}

/// An ordered table: keys are unique, in the order they should be written.
pub(super) type Table = Vec<(String, Value)>;

/// `text` parsed as a TOML document, its tables in key order (upstream
/// reads them into Go maps, which its encoder writes sorted).
pub(super) fn parse(text: &str) -> Result<Table, TomlError> {
    let document: DocumentMut = text.parse()?;
    Ok(from_table(document.as_table().iter()))
}

fn from_table<'a>(entries: impl Iterator<Item = (&'a str, &'a Item)>) -> Table {
    let mut table: Table = entries
        .filter_map(|(key, item)| from_item(item).map(|value| (key.to_owned(), value)))
        .collect();
    table.sort_by(|a, b| a.0.cmp(&b.0));
    table
}

fn from_item(item: &Item) -> Option<Value> {
    match item {
        Item::None => None,
        Item::Value(value) => Some(from_value(value)),
        Item::Table(table) => Some(Value::Table(from_table(table.iter()))),
        Item::ArrayOfTables(tables) => Some(Value::Array(
            tables
                .iter()
                .map(|table| Value::Table(from_table(table.iter())))
                .collect(),
        )),
    }
}

fn from_value(value: &toml_edit::Value) -> Value {
    use toml_edit::Value as V;
    match value {
        V::String(s) => Value::String(s.value().clone()),
        V::Integer(i) => Value::Integer(*i.value()),
        V::Float(f) => Value::Float(*f.value()),
        V::Boolean(b) => Value::Boolean(*b.value()),
        V::Datetime(d) => Value::Datetime(d.value().to_string()),
        V::Array(array) => Value::Array(array.iter().map(from_value).collect()),
        V::InlineTable(table) => {
            let mut entries: Table = table
                .iter()
                .map(|(key, value)| (key.to_owned(), from_value(value)))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Table(entries)
        }
    }
}

/// The document `root` as TOML text.
pub(super) fn write(root: &Table) -> String {
    let mut writer = Writer::default();
    writer.table(&[], root);
    writer.out
}

#[derive(Default)]
struct Writer {
    out: String,
    /// Whether the last line was a key's value: a header after one gets a
    /// blank line before it, a header after a header does not.
    after_value: bool,
}

impl Writer {
    /// A table's plain keys, then each sub-table under its own header.
    fn table(&mut self, path: &[&str], table: &Table) {
        if !path.is_empty() {
            if self.after_value {
                self.out.push('\n');
            }
            let header: Vec<String> = path.iter().map(|key| key_text(key)).collect();
            let _ = writeln!(self.out, "[{}]", header.join("."));
            self.after_value = false;
        }
        for (key, value) in table {
            if !matches!(value, Value::Table(_)) {
                let _ = writeln!(self.out, "{} = {}", key_text(key), value_text(value));
                self.after_value = true;
            }
        }
        for (key, value) in table {
            if let Value::Table(sub) = value {
                let mut sub_path = path.to_vec();
                sub_path.push(key);
                self.table(&sub_path, sub);
            }
        }
    }
}

/// A key bare when TOML allows it, else quoted.
fn key_text(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if bare {
        key.to_owned()
    } else {
        string_text(key)
    }
}

/// A string literal (`'...'`) when it needs no escapes, else a basic string.
fn string_text(s: &str) -> String {
    if !s.contains('\'') && !s.chars().any(char::is_control) {
        return format!("'{s}'");
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => string_text(s),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => float_text(*f),
        Value::Boolean(b) => b.to_string(),
        Value::Datetime(d) => d.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(value_text).collect();
            format!("[{}]", items.join(", "))
        }
        // Only tables inside arrays get here: written inline.
        Value::Table(table) => {
            let entries: Vec<String> = table
                .iter()
                .map(|(key, value)| format!("{} = {}", key_text(key), value_text(value)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
    }
}

/// A float that reads back as a float (TOML needs a `.` or an exponent).
fn float_text(f: f64) -> String {
    if f.is_nan() {
        "nan".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        let text = format!("{f:?}");
        if text.contains(['.', 'e', 'E']) {
            text
        } else {
            format!("{text}.0")
        }
    }
}
