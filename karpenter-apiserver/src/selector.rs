//! Label and field selectors: the `labelSelector` and `fieldSelector` query
//! parameters, and the `LabelSelector` objects of PodDisruptionBudgets.

use serde_json::{Map, Value};

use crate::status::ApiError;

/// One term of a label selector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Term {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    Absent(String),
}

impl Term {
    fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let label = |key: &str| labels.and_then(|labels| labels.get(key)?.as_str());
        match self {
            Self::Equals(key, value) => label(key) == Some(value),
            Self::NotEquals(key, value) => label(key) != Some(value),
            Self::In(key, values) => label(key).is_some_and(|l| values.iter().any(|v| v == l)),
            Self::NotIn(key, values) => !label(key).is_some_and(|l| values.iter().any(|v| v == l)),
            Self::Exists(key) => label(key).is_some(),
            Self::Absent(key) => label(key).is_none(),
        }
    }
}

/// A parsed `labelSelector`: `a=b`, `a==b`, `a!=b`, `a`, `!a`,
/// `a in (x,y)`, `a notin (x,y)`, joined by commas.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LabelSelector(Vec<Term>);

impl LabelSelector {
    pub(crate) fn parse(text: &str) -> Result<Self, ApiError> {
        split_top_level(text)
            .into_iter()
            .map(str::trim)
            .filter(|term| !term.is_empty())
            .map(parse_term)
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// Whether an object's `metadata.labels` satisfy every term.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let labels = object
            .pointer("/metadata/labels")
            .and_then(Value::as_object);
        self.0.iter().all(|term| term.matches(labels))
    }
}

/// Splits on the commas outside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn parse_term(term: &str) -> Result<Term, ApiError> {
    let invalid = || ApiError::bad_request(format!("unable to parse requirement: {term:?}"));
    if let Some((head, values)) = term.split_once('(') {
        let values = values.strip_suffix(')').ok_or_else(invalid)?;
        let values = values
            .split(',')
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
            .collect();
        let mut words = head.split_whitespace();
        let (Some(key), Some(op), None) = (words.next(), words.next(), words.next()) else {
            return Err(invalid());
        };
        return match op {
            "in" => Ok(Term::In(key.to_owned(), values)),
            "notin" => Ok(Term::NotIn(key.to_owned(), values)),
            _ => Err(invalid()),
        };
    }
    if let Some(key) = term.strip_prefix('!') {
        return Ok(Term::Absent(key.trim().to_owned()));
    }
    if let Some((key, value)) = term.split_once("!=") {
        return Ok(Term::NotEquals(
            key.trim().to_owned(),
            value.trim().to_owned(),
        ));
    }
    if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return Ok(Term::Equals(key.trim().to_owned(), value.trim().to_owned()));
    }
    if term.contains(char::is_whitespace) {
        return Err(invalid());
    }
    Ok(Term::Exists(term.to_owned()))
}

/// A parsed `fieldSelector`: `path=value`, `path==value`, `path!=value`
/// terms, where the path is dotted (`metadata.name`, `spec.nodeName`). A
/// missing field reads as the empty string, as the real server's do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    pub(crate) fn parse(text: &str) -> Result<Self, ApiError> {
        text.split(',')
            .map(str::trim)
            .filter(|term| !term.is_empty())
            .map(|term| {
                let (path, equal, value) = if let Some((path, value)) = term.split_once("!=") {
                    (path, false, value)
                } else if let Some((path, value)) =
                    term.split_once("==").or_else(|| term.split_once('='))
                {
                    (path, true, value)
                } else {
                    return Err(ApiError::bad_request(format!(
                        "invalid field selector: {term:?}"
                    )));
                };
                Ok((path.trim().to_owned(), equal, value.trim().to_owned()))
            })
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// A selector of the object with this name.
    pub(crate) fn name(name: &str) -> Self {
        Self(vec![("metadata.name".to_owned(), true, name.to_owned())])
    }

    /// Adds the terms of `other`.
    pub(crate) fn and(mut self, other: Self) -> Self {
        self.0.extend(other.0);
        self
    }

    pub(crate) fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(path, equal, value)| {
            let field = path
                .split('.')
                .try_fold(object, |value, key| value.get(key))
                .map_or_else(String::new, |field| match field {
                    Value::String(text) => text.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                });
            (field == *value) == *equal
        })
    }
}

/// Which objects a list or watch returns.
#[derive(Clone, Debug, Default)]
pub(crate) struct Filter {
    /// Only this namespace's objects (all when `None`).
    pub(crate) namespace: Option<String>,
    pub(crate) labels: LabelSelector,
    pub(crate) fields: FieldSelector,
}

impl Filter {
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let in_namespace = self.namespace.as_deref().is_none_or(|namespace| {
            object
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                == Some(namespace)
        });
        in_namespace && self.labels.matches(object) && self.fields.matches(object)
    }
}

/// Whether a `LabelSelector` object (`matchLabels`, `matchExpressions`)
/// selects these labels. An empty selector selects everything; a null one
/// nothing (as policy/v1 PodDisruptionBudgets read them).
pub(crate) fn selects(selector: Option<&Value>, labels: Option<&Map<String, Value>>) -> bool {
    let Some(selector) = selector.filter(|s| s.is_object()) else {
        return false;
    };
    let label = |key: &str| labels.and_then(|labels| labels.get(key)?.as_str());
    let match_labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(key, value)| label(key) == value.as_str());
    let match_expressions = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .all(|expression| {
            let key = expression.get("key").and_then(Value::as_str).unwrap_or("");
            let values: Vec<&str> = expression
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let current = label(key);
            match expression.get("operator").and_then(Value::as_str) {
                Some("In") => current.is_some_and(|l| values.contains(&l)),
                Some("NotIn") => !current.is_some_and(|l| values.contains(&l)),
                Some("Exists") => current.is_some(),
                Some("DoesNotExist") => current.is_none(),
                _ => false,
            }
        });
    match_labels && match_expressions
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labelled(labels: Value) -> Value {
        json!({ "metadata": { "name": "x", "labels": labels }, "spec": { "nodeName": "n1" } })
    }

    #[test]
    fn label_selectors() {
        let object = labelled(json!({ "app": "web", "tier": "front" }));
        for (selector, expected) in [
            ("app=web", true),
            ("app==web,tier", true),
            ("app!=web", false),
            ("!tier", false),
            ("!missing", true),
            ("app in (db, web),tier notin (back)", true),
            ("app notin (web)", false),
            ("", true),
        ] {
            let parsed = LabelSelector::parse(selector).unwrap();
            assert_eq!(parsed.matches(&object), expected, "{selector}");
        }
        assert!(LabelSelector::parse("a b").is_err());
        assert!(LabelSelector::parse("a in (x").is_err());
    }

    #[test]
    fn field_selectors() {
        let object = labelled(json!({}));
        let selector = FieldSelector::parse("metadata.name=x,spec.nodeName!=n2").unwrap();
        assert!(selector.matches(&object));
        assert!(
            FieldSelector::parse("status.phase=")
                .unwrap()
                .matches(&object)
        );
        assert!(!FieldSelector::name("y").matches(&object));
        assert!(FieldSelector::parse("nonsense").is_err());
    }

    #[test]
    fn label_selector_objects() {
        let labels = json!({ "app": "web" });
        let labels = labels.as_object();
        assert!(selects(Some(&json!({})), labels));
        assert!(!selects(None, labels));
        assert!(selects(
            Some(&json!({ "matchLabels": { "app": "web" } })),
            labels
        ));
        let expression = json!({ "matchExpressions": [
            { "key": "app", "operator": "In", "values": ["db"] }
        ] });
        assert!(!selects(Some(&expression), labels));
    }
}
