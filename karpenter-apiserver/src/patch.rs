//! JSON merge patches (RFC 7386) and JSON patches (RFC 6902).

use serde_json::Value;

/// Why a JSON patch does not apply.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PatchError {
    /// The patch is not an array of operations, or an operation is malformed.
    #[error("malformed JSON patch: {0}")]
    Malformed(String),
    /// A path names nothing in the document.
    #[error("the path {0:?} does not exist")]
    NoSuchPath(String),
    /// A `test` operation found another value.
    #[error("the test at {0:?} failed")]
    TestFailed(String),
}

/// Applies a JSON merge patch: objects merge key by key, `null` removes a
/// key, anything else (arrays included) replaces.
pub(crate) fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    let Value::Object(target) = target else {
        return;
    };
    for (key, value) in patch {
        if value.is_null() {
            target.remove(key);
        } else {
            merge(target.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// Applies a JSON patch (`add`, `remove`, `replace`, `move`, `copy`, `test`),
/// all or nothing.
pub(crate) fn json_patch(target: &mut Value, patch: &Value) -> Result<(), PatchError> {
    let operations = patch
        .as_array()
        .ok_or_else(|| PatchError::Malformed("not an array".into()))?;
    let mut result = target.clone();
    for operation in operations {
        apply_operation(&mut result, operation)?;
    }
    *target = result;
    Ok(())
}

fn apply_operation(doc: &mut Value, operation: &Value) -> Result<(), PatchError> {
    let field = |name: &str| {
        operation
            .get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| PatchError::Malformed(format!("an operation lacks {name:?}")))
    };
    let value = || {
        operation
            .get("value")
            .cloned()
            .ok_or_else(|| PatchError::Malformed("an operation lacks \"value\"".into()))
    };
    let path = field("path")?;
    match field("op")? {
        "add" => add(doc, path, value()?),
        "remove" => remove(doc, path).map(drop),
        "replace" => {
            let slot = doc
                .pointer_mut(path)
                .ok_or_else(|| PatchError::NoSuchPath(path.to_owned()))?;
            *slot = value()?;
            Ok(())
        }
        "move" => {
            let from = field("from")?;
            let moved = remove(doc, from)?;
            add(doc, path, moved)
        }
        "copy" => {
            let from = field("from")?;
            let copied = doc
                .pointer(from)
                .cloned()
                .ok_or_else(|| PatchError::NoSuchPath(from.to_owned()))?;
            add(doc, path, copied)
        }
        "test" => match doc.pointer(path) {
            Some(current) if *current == value()? => Ok(()),
            _ => Err(PatchError::TestFailed(path.to_owned())),
        },
        other => Err(PatchError::Malformed(format!(
            "unknown operation {other:?}"
        ))),
    }
}

/// Splits a JSON pointer into its parent and its last token, decoded.
fn split_pointer(path: &str) -> Result<(&str, String), PatchError> {
    let (parent, last) = path
        .rsplit_once('/')
        .ok_or_else(|| PatchError::Malformed(format!("invalid path {path:?}")))?;
    Ok((parent, last.replace("~1", "/").replace("~0", "~")))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), PatchError> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, key) = split_pointer(path)?;
    let no_path = || PatchError::NoSuchPath(path.to_owned());
    match doc.pointer_mut(parent).ok_or_else(no_path)? {
        Value::Object(map) => {
            map.insert(key, value);
            Ok(())
        }
        Value::Array(items) => {
            let index = if key == "-" {
                items.len()
            } else {
                key.parse::<usize>()
                    .ok()
                    .filter(|&i| i <= items.len())
                    .ok_or_else(no_path)?
            };
            items.insert(index, value);
            Ok(())
        }
        _ => Err(no_path()),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, PatchError> {
    let (parent, key) = split_pointer(path)?;
    let no_path = || PatchError::NoSuchPath(path.to_owned());
    match doc.pointer_mut(parent).ok_or_else(no_path)? {
        Value::Object(map) => map.remove(&key).ok_or_else(no_path),
        Value::Array(items) => {
            let index = key
                .parse::<usize>()
                .ok()
                .filter(|&i| i < items.len())
                .ok_or_else(no_path)?;
            Ok(items.remove(index))
        }
        _ => Err(no_path()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patches_merge_objects_and_replace_the_rest() {
        let mut doc = json!({ "a": { "b": 1, "c": 2 }, "list": [1, 2], "keep": true });
        merge(
            &mut doc,
            &json!({ "a": { "b": null, "d": 3 }, "list": [3], "new": { "x": 1 } }),
        );
        assert_eq!(
            doc,
            json!({ "a": { "c": 2, "d": 3 }, "list": [3], "keep": true, "new": { "x": 1 } })
        );
    }

    #[test]
    fn json_patches() {
        let mut doc = json!({ "metadata": { "finalizers": ["a", "b"], "labels": {} } });
        json_patch(
            &mut doc,
            &json!([
                { "op": "test", "path": "/metadata/finalizers/0", "value": "a" },
                { "op": "remove", "path": "/metadata/finalizers/0" },
                { "op": "add", "path": "/metadata/finalizers/-", "value": "c" },
                { "op": "add", "path": "/metadata/labels/x~1y", "value": "1" },
                { "op": "copy", "from": "/metadata/labels", "path": "/copied" },
                { "op": "move", "from": "/copied", "path": "/moved" },
                { "op": "replace", "path": "/moved/x~1y", "value": "2" },
            ]),
        )
        .unwrap();
        assert_eq!(
            doc,
            json!({
                "metadata": { "finalizers": ["b", "c"], "labels": { "x/y": "1" } },
                "moved": { "x/y": "2" },
            })
        );
        let before = doc.clone();
        let failed = json_patch(
            &mut doc,
            &json!([
                { "op": "remove", "path": "/moved" },
                { "op": "test", "path": "/metadata/finalizers/0", "value": "z" },
            ]),
        );
        assert_eq!(
            failed,
            Err(PatchError::TestFailed("/metadata/finalizers/0".into()))
        );
        assert_eq!(doc, before, "a failed patch changes nothing");
        assert!(json_patch(&mut doc, &json!({})).is_err());
        assert!(
            json_patch(
                &mut doc,
                &json!([{ "op": "replace", "path": "/nope", "value": 1 }])
            )
            .is_err()
        );
    }
}
