//! What a write changes, as a JSON merge patch (RFC 7386): the driver hands
//! the cluster whole objects, edited from the copy it read; the difference
//! between that copy and the edit is the driver's intent, which is applied
//! again to a fresh read when the API server answers `409 Conflict`.

use serde_json::{Map, Value};

/// The merge patch that turns `base` into `desired` (`None` when they are
/// equal). Objects are compared key by key; anything else (arrays among
/// them) is replaced whole.
pub(crate) fn diff(base: &Value, desired: &Value) -> Option<Value> {
    match (base, desired) {
        (Value::Object(base), Value::Object(desired)) => {
            let mut patch = Map::new();
            for (key, value) in desired {
                match base.get(key) {
                    Some(old) => {
                        if let Some(change) = diff(old, value) {
                            patch.insert(key.clone(), change);
                        }
                    }
                    None if !value.is_null() => {
                        patch.insert(key.clone(), value.clone());
                    }
                    None => {}
                }
            }
            for (key, old) in base {
                if !desired.contains_key(key) && !old.is_null() {
                    patch.insert(key.clone(), Value::Null);
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        _ if base == desired => None,
        _ => Some(desired.clone()),
    }
}

/// Applies the merge patch `patch` to `target`.
pub(crate) fn apply(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target) = target else {
        return;
    };
    for (key, value) in patch {
        if value.is_null() {
            target.remove(key);
        } else {
            apply(target.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// The parts of an object a write may change through the main resource:
/// labels, annotations, finalizers, owner references and the spec (the
/// server keeps the rest of the metadata, and the status has its own
/// subresource).
pub(crate) fn writable(object: &Value) -> Value {
    let mut kept = Map::new();
    if let Some(metadata) = object.get("metadata").and_then(Value::as_object) {
        let metadata: Map<String, Value> =
            ["labels", "annotations", "finalizers", "ownerReferences"]
                .into_iter()
                .filter_map(|key| Some((key.to_owned(), metadata.get(key)?.clone())))
                .collect();
        kept.insert("metadata".into(), Value::Object(metadata));
    }
    if let Some(spec) = object.get("spec") {
        kept.insert("spec".into(), spec.clone());
    }
    Value::Object(kept)
}

/// The status of an object, as a value to diff (`null` when it has none).
pub(crate) fn status(object: &Value) -> Value {
    let status = object.get("status").cloned().unwrap_or(Value::Null);
    let mut kept = Map::new();
    kept.insert("status".into(), status);
    Value::Object(kept)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_diff_applied_to_its_base_gives_the_desired_object() {
        let base =
            json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"taints": [1, 2]}});
        let desired =
            json!({"metadata": {"labels": {"a": "1", "c": "3"}}, "spec": {"taints": [1]}});
        let patch = diff(&base, &desired).expect("they differ");
        assert_eq!(
            patch,
            json!({"metadata": {"labels": {"b": null, "c": "3"}}, "spec": {"taints": [1]}})
        );
        let mut patched = base.clone();
        apply(&mut patched, &patch);
        assert_eq!(patched, desired);
    }

    #[test]
    fn equal_objects_have_no_diff() {
        let object = json!({"metadata": {"labels": {"a": "1"}}, "spec": null});
        assert_eq!(diff(&object, &object), None);
    }

    #[test]
    fn a_diff_keeps_what_others_changed_meanwhile() {
        let base = json!({"metadata": {"labels": {"a": "1"}}});
        let desired = json!({"metadata": {"labels": {"a": "1", "mine": "x"}}});
        let fresh = json!({"metadata": {"labels": {"a": "1", "theirs": "y"}}});
        let mut patched = fresh;
        apply(&mut patched, &diff(&base, &desired).expect("they differ"));
        assert_eq!(
            patched,
            json!({"metadata": {"labels": {"a": "1", "mine": "x", "theirs": "y"}}})
        );
    }

    #[test]
    fn only_the_writable_parts_are_compared() {
        let object = json!({
            "metadata": {"name": "n", "resourceVersion": "7", "labels": {"a": "1"}, "deletionTimestamp": "t"},
            "spec": {"x": 1},
            "status": {"y": 2}
        });
        assert_eq!(
            writable(&object),
            json!({"metadata": {"labels": {"a": "1"}}, "spec": {"x": 1}})
        );
        assert_eq!(status(&object), json!({"status": {"y": 2}}));
    }
}
