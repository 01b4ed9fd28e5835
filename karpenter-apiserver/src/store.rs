//! Objects, the global resourceVersion, the event history and the write
//! semantics (create, update, patch, delete with finalizers).

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::patch::{self, PatchError};
use crate::resources::{ResourceType, StatusOnCreate};
use crate::selector::Filter;
use crate::status::ApiError;

/// A served resource, as an index into the store's table.
pub(crate) type ResourceId = usize;

/// `(namespace or "", name)`.
type Key = (String, String);

/// What happened to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One change, as watches replay it.
#[derive(Clone, Debug)]
pub(crate) struct Event {
    pub(crate) rv: u64,
    pub(crate) resource: ResourceId,
    pub(crate) kind: EventType,
    /// The object after the change (as last seen, for a deletion).
    pub(crate) object: Arc<Value>,
    /// The object before a modification.
    pub(crate) previous: Option<Arc<Value>>,
}

/// Which part of a sent object an update takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Write {
    /// The main resource: `.status` is kept as stored when the kind has a
    /// status subresource.
    Main,
    /// The `/status` subresource: only `.status` is taken.
    Status,
    /// Everything as sent (the test helpers' `put`).
    Whole,
}

/// How a PATCH body applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatchKind {
    /// RFC 7386 (strategic merge patches are read as this too).
    Merge,
    /// RFC 6902.
    Json,
    /// Server-side apply, read as a merge patch that creates a missing object.
    Apply,
}

/// The preconditions of a DeleteOptions.
#[derive(Clone, Debug, Default)]
pub(crate) struct Preconditions {
    pub(crate) uid: Option<String>,
    pub(crate) resource_version: Option<String>,
}

impl Preconditions {
    /// Reads `preconditions` from a DeleteOptions object.
    pub(crate) fn of(options: &Value) -> Self {
        let field = |name: &str| {
            options
                .pointer(&format!("/preconditions/{name}"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        Self {
            uid: field("uid"),
            resource_version: field("resourceVersion"),
        }
    }
}

/// What a delete did.
#[derive(Clone, Debug)]
pub(crate) struct Deleted {
    pub(crate) object: Value,
    /// `false` when finalizers hold the object (it only got a deletionTimestamp).
    pub(crate) removed: bool,
}

/// Every object, the resourceVersion counter and the retained history.
#[derive(Debug)]
pub(crate) struct Store {
    types: Vec<ResourceType>,
    objects: Vec<BTreeMap<Key, Value>>,
    rv: u64,
    history: VecDeque<Event>,
    history_limit: usize,
    /// Watches from a resourceVersion below this one have lost events.
    horizon: u64,
    hasher: RandomState,
    draws: u64,
}

impl Store {
    pub(crate) fn new(types: Vec<ResourceType>, history_limit: usize) -> Self {
        Self {
            objects: vec![BTreeMap::new(); types.len()],
            types,
            rv: 1,
            history: VecDeque::new(),
            history_limit,
            horizon: 1,
            hasher: RandomState::new(),
            draws: 0,
        }
    }

    pub(crate) fn resource(&self, group: &str, plural: &str) -> Option<ResourceId> {
        self.types
            .iter()
            .position(|ty| ty.group == group && ty.plural == plural)
    }

    pub(crate) fn resource_type(&self, id: ResourceId) -> &ResourceType {
        &self.types[id]
    }

    /// The latest resourceVersion.
    pub(crate) fn resource_version(&self) -> u64 {
        self.rv
    }

    pub(crate) fn get(
        &self,
        id: ResourceId,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<&Value, ApiError> {
        self.objects[id]
            .get(&key(namespace, name))
            .ok_or_else(|| self.not_found(id, name))
    }

    /// At most `limit` matching objects after the key `after` (namespace,
    /// name), by namespace then name, and whether more match beyond them.
    pub(crate) fn list_page(
        &self,
        id: ResourceId,
        filter: &Filter,
        after: Option<(&str, &str)>,
        limit: usize,
    ) -> (Vec<Value>, bool) {
        use std::ops::Bound;
        let start = match after {
            Some((namespace, name)) => Bound::Excluded((namespace.to_owned(), name.to_owned())),
            None => Bound::Unbounded,
        };
        let mut matching = self.objects[id]
            .range((start, Bound::Unbounded))
            .map(|(_, object)| object)
            .filter(|object| filter.matches(object));
        let page: Vec<Value> = matching.by_ref().take(limit).cloned().collect();
        let more = matching.next().is_some();
        (page, more)
    }

    /// The matching objects, by namespace then name.
    pub(crate) fn list(&self, id: ResourceId, filter: &Filter) -> Vec<Value> {
        self.objects[id]
            .values()
            .filter(|object| filter.matches(object))
            .cloned()
            .collect()
    }

    /// Creates an object; `keep_status` skips the kind's create strategy
    /// for `.status` (the test helpers seed status as they like).
    pub(crate) fn create(
        &mut self,
        id: ResourceId,
        namespace: Option<&str>,
        mut body: Value,
        keep_status: bool,
    ) -> Result<Value, ApiError> {
        let ty = self.types[id].clone();
        ensure_object(&mut body)?;
        let namespace = self.check_namespace(&ty, namespace, &body)?;
        let name = match meta(&body, "name").filter(|name| !name.is_empty()) {
            Some(name) => name.to_owned(),
            None => {
                let prefix = meta(&body, "generateName")
                    .filter(|prefix| !prefix.is_empty())
                    .ok_or_else(|| {
                        ApiError::invalid(format!(
                            "{} is invalid: metadata.name: Required value: name or generateName is required",
                            ty.kind
                        ))
                    })?
                    .to_owned();
                self.generate_name(id, namespace.as_deref(), &prefix)
            }
        };
        check_name(&ty, &name)?;
        let key = key(namespace.as_deref(), &name);
        if self.objects[id].contains_key(&key) {
            return Err(ApiError::already_exists(&ty.qualified_plural(), &name));
        }
        let uid = self.uid();
        let rv = self.next_rv();
        set_type(&mut body, &ty);
        let object = body.as_object_mut().expect("checked to be an object");
        if !keep_status {
            match ty.status_on_create {
                StatusOnCreate::Keep => {}
                StatusOnCreate::Drop => {
                    object.remove("status");
                }
                StatusOnCreate::Pending => {
                    object.insert("status".into(), json!({ "phase": "Pending" }));
                }
            }
        }
        let meta = metadata_mut(&mut body);
        meta.insert("name".into(), name.into());
        match namespace {
            Some(namespace) => meta.insert("namespace".into(), namespace.into()),
            None => meta.remove("namespace"),
        };
        meta.insert("uid".into(), uid.into());
        meta.insert("creationTimestamp".into(), now().into());
        meta.insert("generation".into(), 1.into());
        meta.insert("resourceVersion".into(), rv.to_string().into());
        if !keep_status {
            meta.remove("deletionTimestamp");
            meta.remove("deletionGracePeriodSeconds");
        }
        self.objects[id].insert(key, body.clone());
        self.record(rv, id, EventType::Added, body.clone(), None);
        Ok(body)
    }

    /// Replaces an object; `check_rv` makes a resourceVersion in the body a
    /// precondition.
    pub(crate) fn update(
        &mut self,
        id: ResourceId,
        namespace: Option<&str>,
        name: &str,
        mut body: Value,
        write: Write,
        check_rv: bool,
    ) -> Result<Value, ApiError> {
        let ty = self.types[id].clone();
        let key = key(namespace, name);
        let old = self.get(id, namespace, name)?.clone();
        ensure_object(&mut body)?;
        if check_rv
            && let Some(rv) = meta(&body, "resourceVersion").filter(|rv| !rv.is_empty())
            && Some(rv) != meta(&old, "resourceVersion")
        {
            return Err(ApiError::conflict(&ty.qualified_plural(), name));
        }
        if let Some(sent) = meta(&body, "name").filter(|sent| *sent != name) {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({sent}) does not match the name on the URL ({name})"
            )));
        }
        self.check_namespace(&ty, namespace, &body)?;
        let mut new = match write {
            Write::Status => {
                let mut new = old.clone();
                set_field(&mut new, "status", body.get("status").cloned());
                new
            }
            Write::Main => {
                if ty.status_subresource {
                    set_field(&mut body, "status", old.get("status").cloned());
                }
                for field in [
                    "uid",
                    "creationTimestamp",
                    "deletionTimestamp",
                    "deletionGracePeriodSeconds",
                ] {
                    set_meta(&mut body, field, old.pointer(&format!("/metadata/{field}")));
                }
                body
            }
            Write::Whole => {
                for field in ["uid", "creationTimestamp"] {
                    if meta(&body, field).is_none() {
                        set_meta(&mut body, field, old.pointer(&format!("/metadata/{field}")));
                    }
                }
                body
            }
        };
        set_type(&mut new, &ty);
        let meta_new = metadata_mut(&mut new);
        meta_new.insert("name".into(), name.into());
        if let Some(namespace) = namespace {
            meta_new.insert("namespace".into(), namespace.into());
        }
        if write != Write::Whole && meta(&old, "deletionTimestamp").is_some() {
            let before = finalizers(&old);
            if finalizers(&new).iter().any(|f| !before.contains(f)) {
                return Err(ApiError::invalid(format!(
                    "{} \"{name}\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted",
                    ty.kind
                )));
            }
        }
        let generation = old
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let generation = if without_spec_free_parts(&old, &ty) == without_spec_free_parts(&new, &ty)
        {
            generation
        } else {
            generation + 1
        };
        set_meta(&mut new, "generation", Some(&generation.into()));
        set_meta(
            &mut new,
            "resourceVersion",
            old.pointer("/metadata/resourceVersion"),
        );
        if new == old {
            return Ok(old);
        }
        Ok(self.commit(id, key, old, new))
    }

    /// Creates or replaces an object as given, status included.
    pub(crate) fn put(&mut self, id: ResourceId, body: Value) -> Result<Value, ApiError> {
        let namespace = meta(&body, "namespace").map(str::to_owned);
        let namespace = namespace.as_deref().filter(|_| self.types[id].namespaced);
        let name = meta(&body, "name").unwrap_or_default().to_owned();
        if self.objects[id].contains_key(&key(namespace, &name)) {
            self.update(id, namespace, &name, body, Write::Whole, false)
        } else {
            self.create(id, namespace, body, true)
        }
    }

    /// Patches an object; answers whether an apply patch created it.
    pub(crate) fn patch(
        &mut self,
        id: ResourceId,
        namespace: Option<&str>,
        name: &str,
        kind: PatchKind,
        patch: &Value,
        status: bool,
    ) -> Result<(Value, bool), ApiError> {
        let Some(old) = self.objects[id].get(&key(namespace, name)).cloned() else {
            if kind == PatchKind::Apply && !status {
                let mut body = json!({});
                patch::merge(&mut body, patch);
                ensure_object(&mut body)?;
                if let Some(sent) = meta(&body, "name").filter(|sent| *sent != name) {
                    return Err(ApiError::bad_request(format!(
                        "the name of the object ({sent}) does not match the name on the URL ({name})"
                    )));
                }
                set_meta(&mut body, "name", Some(&name.into()));
                return Ok((self.create(id, namespace, body, false)?, true));
            }
            return Err(self.not_found(id, name));
        };
        let mut patched = old.clone();
        match kind {
            PatchKind::Merge | PatchKind::Apply => {
                if !patch.is_object() {
                    return Err(ApiError::bad_request("a merge patch must be a JSON object"));
                }
                patch::merge(&mut patched, patch);
            }
            PatchKind::Json => {
                patch::json_patch(&mut patched, patch).map_err(|error| match error {
                    PatchError::Malformed(_) => ApiError::bad_request(error.to_string()),
                    PatchError::NoSuchPath(_) | PatchError::TestFailed(_) => {
                        ApiError::invalid(error.to_string())
                    }
                })?
            }
        }
        if let Some(rv) = meta(&patched, "resourceVersion").filter(|rv| !rv.is_empty())
            && Some(rv) != meta(&old, "resourceVersion")
        {
            return Err(ApiError::conflict(&self.types[id].qualified_plural(), name));
        }
        let write = if status { Write::Status } else { Write::Main };
        Ok((
            self.update(id, namespace, name, patched, write, false)?,
            false,
        ))
    }

    /// Deletes an object: removed at once without finalizers, marked with a
    /// deletionTimestamp otherwise.
    pub(crate) fn delete(
        &mut self,
        id: ResourceId,
        namespace: Option<&str>,
        name: &str,
        preconditions: &Preconditions,
    ) -> Result<Deleted, ApiError> {
        let old = self.get(id, namespace, name)?.clone();
        let resource = self.types[id].qualified_plural();
        for (field, wanted, label) in [
            ("uid", &preconditions.uid, "UID"),
            (
                "resourceVersion",
                &preconditions.resource_version,
                "ResourceVersion",
            ),
        ] {
            if let Some(wanted) = wanted
                && Some(wanted.as_str()) != meta(&old, field)
            {
                let why = format!(
                    "Precondition failed: {label} in precondition: {wanted}, {label} in object meta: {}",
                    meta(&old, field).unwrap_or_default()
                );
                return Err(ApiError::conflict_because(&resource, name, &why));
            }
        }
        let key = key(namespace, name);
        if finalizers(&old).is_empty() {
            let object = self.remove_key(id, &key).expect("the object was just read");
            return Ok(Deleted {
                object,
                removed: true,
            });
        }
        if meta(&old, "deletionTimestamp").is_some() {
            return Ok(Deleted {
                object: old,
                removed: false,
            });
        }
        let mut new = old.clone();
        set_meta(&mut new, "deletionTimestamp", Some(&now().into()));
        set_meta(&mut new, "deletionGracePeriodSeconds", Some(&0.into()));
        let object = self.commit(id, key, old, new);
        Ok(Deleted {
            object,
            removed: false,
        })
    }

    /// Removes an object at once, finalizers or not.
    pub(crate) fn remove(
        &mut self,
        id: ResourceId,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        self.remove_key(id, &key(namespace, name))
    }

    /// Drops the history: watches from any resourceVersion up to now get 410
    /// Expired (open ones included). The resourceVersion moves on by one so
    /// that a relist gets a version watches can start from.
    pub(crate) fn compact(&mut self) {
        self.rv += 1;
        self.history.clear();
        self.horizon = self.rv;
    }

    /// The retained events after `rv`, or 410 Expired when some are gone.
    pub(crate) fn events_after(&self, rv: u64) -> Result<Vec<Event>, ApiError> {
        if rv < self.horizon {
            return Err(ApiError::expired(rv, self.horizon));
        }
        let start = self.history.partition_point(|event| event.rv <= rv);
        Ok(self.history.range(start..).cloned().collect())
    }

    fn remove_key(&mut self, id: ResourceId, key: &Key) -> Option<Value> {
        let mut object = self.objects[id].remove(key)?;
        let rv = self.next_rv();
        set_meta(&mut object, "resourceVersion", Some(&rv.to_string().into()));
        self.record(rv, id, EventType::Deleted, object.clone(), None);
        Some(object)
    }

    /// Stores a changed object under a new resourceVersion; an object being
    /// deleted whose last finalizer is gone goes away.
    fn commit(&mut self, id: ResourceId, key: Key, old: Value, mut new: Value) -> Value {
        let rv = self.next_rv();
        set_meta(&mut new, "resourceVersion", Some(&rv.to_string().into()));
        if meta(&new, "deletionTimestamp").is_some() && finalizers(&new).is_empty() {
            self.objects[id].remove(&key);
            self.record(rv, id, EventType::Deleted, new.clone(), None);
        } else {
            self.objects[id].insert(key, new.clone());
            self.record(rv, id, EventType::Modified, new.clone(), Some(old));
        }
        new
    }

    fn record(
        &mut self,
        rv: u64,
        resource: ResourceId,
        kind: EventType,
        object: Value,
        previous: Option<Value>,
    ) {
        self.history.push_back(Event {
            rv,
            resource,
            kind,
            object: Arc::new(object),
            previous: previous.map(Arc::new),
        });
        while self.history.len() > self.history_limit {
            if let Some(dropped) = self.history.pop_front() {
                self.horizon = dropped.rv;
            }
        }
    }

    fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    fn random(&mut self) -> u64 {
        self.draws += 1;
        self.hasher.hash_one(self.draws)
    }

    /// A random (version 4) UUID.
    fn uid(&mut self) -> String {
        let (high, low) = (self.random(), self.random());
        let high = (high & !0xf000) | 0x4000;
        let low = (low & !(0xc << 60)) | (0x8 << 60);
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            high >> 32,
            (high >> 16) & 0xffff,
            high & 0xffff,
            low >> 48,
            low & 0xffff_ffff_ffff
        )
    }

    /// `prefix` and five random characters, as the real server draws them.
    fn generate_name(&mut self, id: ResourceId, namespace: Option<&str>, prefix: &str) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        loop {
            let mut draw = self.random();
            let mut name = prefix.to_owned();
            for _ in 0..5 {
                name.push(char::from(
                    ALPHABET[(draw % ALPHABET.len() as u64) as usize],
                ));
                draw /= ALPHABET.len() as u64;
            }
            if !self.objects[id].contains_key(&key(namespace, &name)) {
                return name;
            }
        }
    }

    fn not_found(&self, id: ResourceId, name: &str) -> ApiError {
        let ty = &self.types[id];
        ApiError::not_found(&ty.qualified_plural(), name)
            .with_details(json!({ "name": name, "group": ty.group, "kind": ty.plural }))
    }

    /// The namespace an object of `ty` is stored under: the request's, which
    /// the body must not contradict.
    fn check_namespace(
        &self,
        ty: &ResourceType,
        namespace: Option<&str>,
        body: &Value,
    ) -> Result<Option<String>, ApiError> {
        if !ty.namespaced {
            return Ok(None);
        }
        let namespace = namespace
            .ok_or_else(|| ApiError::bad_request("a namespace is required for this resource"))?;
        match meta(body, "namespace") {
            Some(sent) if !sent.is_empty() && sent != namespace => Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            )),
            _ => Ok(Some(namespace.to_owned())),
        }
    }
}

fn key(namespace: Option<&str>, name: &str) -> Key {
    (namespace.unwrap_or_default().to_owned(), name.to_owned())
}

fn check_name(ty: &ResourceType, name: &str) -> Result<(), ApiError> {
    if name.contains('/') || name.contains('%') || name == "." || name == ".." {
        return Err(ApiError::invalid(format!(
            "{} \"{name}\" is invalid: metadata.name: Invalid value: may not contain '/' or '%' or be '.' or '..'",
            ty.kind
        )));
    }
    Ok(())
}

/// The current time as Kubernetes writes timestamps.
pub(crate) fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// A string field of `metadata`.
pub(crate) fn meta<'v>(object: &'v Value, field: &str) -> Option<&'v str> {
    object.get("metadata")?.get(field)?.as_str()
}

fn finalizers(object: &Value) -> Vec<&str> {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// 400 unless the body is an object whose metadata (if any) is an object.
fn ensure_object(body: &mut Value) -> Result<(), ApiError> {
    let object = body
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("the body must be a JSON object"))?;
    match object.get("metadata") {
        None | Some(Value::Null) => {
            object.insert("metadata".into(), json!({}));
            Ok(())
        }
        Some(Value::Object(_)) => Ok(()),
        Some(_) => Err(ApiError::bad_request("metadata must be an object")),
    }
}

/// The metadata map of an object checked by [`ensure_object`].
fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    object["metadata"]
        .as_object_mut()
        .expect("metadata was just made an object")
}

fn set_meta(object: &mut Value, field: &str, value: Option<&Value>) {
    let meta = metadata_mut(object);
    match value {
        Some(value) => meta.insert(field.to_owned(), value.clone()),
        None => meta.remove(field),
    };
}

fn set_field(object: &mut Value, field: &str, value: Option<Value>) {
    if let Some(object) = object.as_object_mut() {
        match value {
            Some(value) => object.insert(field.to_owned(), value),
            None => object.remove(field),
        };
    }
}

fn set_type(object: &mut Value, ty: &ResourceType) {
    object["apiVersion"] = ty.api_version().into();
    object["kind"] = ty.kind.clone().into();
}

/// The object without what does not count as a spec change (metadata, and
/// the status of a kind with a status subresource).
fn without_spec_free_parts(object: &Value, ty: &ResourceType) -> Value {
    let mut object = object.clone();
    if let Some(map) = object.as_object_mut() {
        map.remove("metadata");
        if ty.status_subresource {
            map.remove("status");
        }
    }
    object
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (Store, ResourceId) {
        let store = Store::new(ResourceType::defaults(), 3);
        let claims = store.resource("karpenter.sh", "nodeclaims").unwrap();
        (store, claims)
    }

    #[test]
    fn history_is_bounded() {
        let (mut store, claims) = store();
        for name in ["a", "b", "c", "d", "e"] {
            store
                .create(claims, None, json!({ "metadata": { "name": name } }), false)
                .unwrap();
        }
        assert_eq!(store.resource_version(), 6);
        assert!(store.events_after(2).is_err());
        assert_eq!(store.events_after(3).unwrap().len(), 3);
        store.compact();
        assert!(store.events_after(6).is_err());
        assert!(store.events_after(7).unwrap().is_empty());
    }

    #[test]
    fn uids_are_v4_and_generated_names_unique() {
        let (mut store, claims) = store();
        let uid = store.uid();
        assert_eq!(uid.len(), 36);
        assert_eq!(&uid[14..15], "4");
        let a = store
            .create(
                claims,
                None,
                json!({ "metadata": { "generateName": "x-" } }),
                false,
            )
            .unwrap();
        let name = meta(&a, "name").unwrap();
        assert!(name.starts_with("x-") && name.len() == 7, "{name}");
    }
}
