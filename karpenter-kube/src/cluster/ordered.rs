//! A watch cache ordered by namespace and name: what a reflector's store
//! holds, kept in a `BTreeMap` so that reading every object in a
//! deterministic order takes no sort (75,000 pods sorted by name cost more
//! than the rest of a snapshot read together).

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Debug;
use std::sync::{Arc, PoisonError, RwLock};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, PodTemplate,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use karpenter_core::api::{CapacityBuffer, NodeClaim, NodeOverlay, NodePool};
use karpenter_core::pods::PodInfo;
use kube::Resource;
use kube::runtime::watcher::Event;
use serde::de::DeserializeOwned;
use tokio::sync::watch;

/// What a cache holds: an object with metadata, a Kubernetes kind or the
/// engine's reading of one ([`PodInfo`]).
pub(crate) trait Cached: Clone + Debug + Send + Sync + 'static {
    /// Its metadata.
    fn metadata(&self) -> &ObjectMeta;
}

/// `Cached` for the Kubernetes kinds the caches hold as they are.
macro_rules! cached_kinds {
    ($($kind:ty),*) => {$(
        impl Cached for $kind {
            fn metadata(&self) -> &ObjectMeta {
                Resource::meta(self)
            }
        }
    )*};
}

cached_kinds!(
    Node,
    NodeClaim,
    NodePool,
    NodeOverlay,
    Pod,
    DaemonSet,
    PodDisruptionBudget,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    CSINode,
    Namespace,
    CapacityBuffer,
    PodTemplate,
    Deployment,
    StatefulSet,
    ReplicaSet
);

impl Cached for PodInfo {
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
}

/// A Kubernetes kind a cache watches and this process writes.
pub(crate) trait Watched: Cached + Resource<DynamicType = ()> + DeserializeOwned {}

impl<K> Watched for K where K: Cached + Resource<DynamicType = ()> + DeserializeOwned {}

/// The key of an object: namespace (empty for a cluster-scoped kind) and
/// name.
pub(crate) type Key = (String, String);

/// The key of `object`.
pub(crate) fn key_of<K: Cached>(object: &K) -> Key {
    let meta = object.metadata();
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

/// The key of the object `name` in `namespace`.
pub(crate) fn key(namespace: Option<&str>, name: &str) -> Key {
    (namespace.unwrap_or_default().to_owned(), name.to_owned())
}

/// Each object's versions before its current one, newest first.
type Earlier<K> = Arc<RwLock<BTreeMap<Key, VecDeque<Arc<K>>>>>;

/// The reading side: cheap to clone, shared with the writer.
#[derive(Clone, Debug)]
pub(crate) struct Ordered<K> {
    objects: Arc<RwLock<BTreeMap<Key, Arc<K>>>>,
    earlier: Earlier<K>,
    ready: watch::Receiver<bool>,
}

/// The writing side, fed the watcher's events.
#[derive(Debug)]
pub(crate) struct Writer<K> {
    objects: Arc<RwLock<BTreeMap<Key, Arc<K>>>>,
    earlier: Earlier<K>,
    /// How many earlier versions of each object are kept.
    history: usize,
    /// A relist in progress: the objects listed so far.
    relisting: Option<BTreeMap<Key, Arc<K>>>,
    ready: watch::Sender<bool>,
}

/// An empty cache and its writer, keeping each object's current version
/// and up to `history` versions before it.
///
/// A write that changes only what its caller changed needs the version the
/// caller read (the engine reads a snapshot, plans, then writes): the last
/// few versions let it find that one after the cache has moved on.
pub(crate) fn ordered<K>(history: usize) -> (Ordered<K>, Writer<K>) {
    let objects = Arc::new(RwLock::new(BTreeMap::new()));
    let earlier = Arc::new(RwLock::new(BTreeMap::new()));
    let (ready_tx, ready) = watch::channel(false);
    (
        Ordered {
            objects: Arc::clone(&objects),
            earlier: Arc::clone(&earlier),
            ready,
        },
        Writer {
            objects,
            earlier,
            history,
            relisting: None,
            ready: ready_tx,
        },
    )
}

impl<K: Cached> Ordered<K> {
    /// Every object, by namespace then name.
    pub(crate) fn state(&self) -> Vec<Arc<K>> {
        self.read().values().cloned().collect()
    }

    /// The object `name` in `namespace`.
    pub(crate) fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        self.read().get(&key(namespace, name)).cloned()
    }

    /// The object `name` in `namespace` as it was at `resource_version`:
    /// its current version or one of the earlier ones kept.
    pub(crate) fn at_version(
        &self,
        namespace: Option<&str>,
        name: &str,
        resource_version: &str,
    ) -> Option<Arc<K>> {
        let at = |object: &Arc<K>| {
            object.metadata().resource_version.as_deref() == Some(resource_version)
        };
        let key = key(namespace, name);
        if let Some(current) = self.read().get(&key).filter(|object| at(object)) {
            return Some(Arc::clone(current));
        }
        let earlier = self.earlier.read().unwrap_or_else(PoisonError::into_inner);
        earlier.get(&key)?.iter().find(|object| at(object)).cloned()
    }

    /// The first object (by namespace and name) `predicate` accepts.
    pub(crate) fn find(&self, predicate: impl Fn(&K) -> bool) -> Option<Arc<K>> {
        self.read()
            .values()
            .find(|object| predicate(object))
            .cloned()
    }

    /// Waits until the first list is in. `Err` when the writer went first.
    pub(crate) async fn wait_until_ready(&self) -> Result<(), watch::error::RecvError> {
        let mut ready = self.ready.clone();
        ready.wait_for(|ready| *ready).await.map(|_| ())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<Key, Arc<K>>> {
        // A panic while writing leaves a map as valid as before it.
        self.objects.read().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<K: Cached> Writer<K> {
    /// Applies one watcher event. A relist (`Init` .. `InitDone`) replaces
    /// the whole map at its end, so what was deleted meanwhile goes, and
    /// readers never see half a list.
    pub(crate) fn apply(&mut self, event: Event<K>) {
        match event {
            Event::Init => self.relisting = Some(BTreeMap::new()),
            Event::InitApply(object) => {
                let relisting = self.relisting.get_or_insert_with(BTreeMap::new);
                relisting.insert(key_of(&object), Arc::new(object));
            }
            Event::InitDone => {
                let listed = self.relisting.take().unwrap_or_default();
                let replaced = std::mem::replace(&mut *self.write(), listed);
                if self.history > 0 {
                    let mut earlier = self.earlier_mut();
                    earlier.retain(|key, _| self.read_current(key).is_some());
                    for (key, before) in replaced {
                        self.keep(&mut earlier, key, before);
                    }
                }
                self.ready.send_replace(true);
            }
            // Without history (the pods) an event only changes the map.
            Event::Apply(object) if self.history == 0 => {
                self.write().insert(key_of(&object), Arc::new(object));
            }
            Event::Apply(object) => {
                let key = key_of(&object);
                let before = self.write().insert(key.clone(), Arc::new(object));
                if let Some(before) = before {
                    self.keep(&mut self.earlier_mut(), key, before);
                }
            }
            Event::Delete(object) => {
                let key = key_of(&object);
                self.write().remove(&key);
                if self.history > 0 {
                    self.earlier_mut().remove(&key);
                }
            }
        }
    }

    /// Keeps `before`, a version of the object at `key` just replaced, as
    /// its newest earlier one (unless it is the current one still, as after
    /// a relist that found it unchanged).
    fn keep(&self, earlier: &mut BTreeMap<Key, VecDeque<Arc<K>>>, key: Key, before: Arc<K>) {
        let Some(current) = self.read_current(&key) else {
            return;
        };
        let version = |object: &K| object.metadata().resource_version.clone();
        if version(&current) == version(&before) {
            return;
        }
        let versions = earlier.entry(key).or_default();
        versions.push_front(before);
        versions.truncate(self.history);
    }

    fn read_current(&self, key: &Key) -> Option<Arc<K>> {
        self.objects
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }

    fn earlier_mut(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<Key, VecDeque<Arc<K>>>> {
        self.earlier.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<Key, Arc<K>>> {
        self.objects.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;

    use super::*;

    fn pod(namespace: &str, name: &str) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.namespace = Some(namespace.into());
        pod.metadata.name = Some(name.into());
        pod
    }

    fn names(cache: &Ordered<Pod>) -> Vec<String> {
        cache
            .state()
            .iter()
            .map(|p| {
                format!(
                    "{}/{}",
                    p.metadata.namespace.as_deref().unwrap_or_default(),
                    p.metadata.name.as_deref().unwrap_or_default()
                )
            })
            .collect()
    }

    #[tokio::test]
    async fn a_list_then_changes_read_in_name_order() {
        let (cache, mut writer) = ordered::<Pod>(0);
        writer.apply(Event::Init);
        writer.apply(Event::InitApply(pod("b", "x")));
        writer.apply(Event::InitApply(pod("a", "z")));
        assert!(names(&cache).is_empty(), "half a list is not read");
        writer.apply(Event::InitDone);
        cache.wait_until_ready().await.expect("ready");
        writer.apply(Event::Apply(pod("a", "y")));
        assert_eq!(names(&cache), ["a/y", "a/z", "b/x"]);
        writer.apply(Event::Delete(pod("a", "z")));
        assert_eq!(names(&cache), ["a/y", "b/x"]);
        assert!(cache.get(Some("b"), "x").is_some());
        assert!(cache.get(Some("a"), "z").is_none());
    }

    #[test]
    fn a_relist_drops_what_was_deleted_meanwhile() {
        let (cache, mut writer) = ordered::<Pod>(0);
        writer.apply(Event::Init);
        writer.apply(Event::InitApply(pod("a", "gone")));
        writer.apply(Event::InitApply(pod("a", "kept")));
        writer.apply(Event::InitDone);
        writer.apply(Event::Init);
        writer.apply(Event::InitApply(pod("a", "kept")));
        writer.apply(Event::InitDone);
        assert_eq!(names(&cache), ["a/kept"]);
    }

    fn at(namespace: &str, name: &str, version: &str) -> Pod {
        let mut pod = pod(namespace, name);
        pod.metadata.resource_version = Some(version.into());
        pod
    }

    fn listed(writer: &mut Writer<Pod>, pods: Vec<Pod>) {
        writer.apply(Event::Init);
        for pod in pods {
            writer.apply(Event::InitApply(pod));
        }
        writer.apply(Event::InitDone);
    }

    #[test]
    fn the_last_few_versions_are_found_by_resource_version() {
        let (cache, mut writer) = ordered::<Pod>(2);
        listed(&mut writer, vec![at("a", "x", "1")]);
        for version in ["2", "3", "4"] {
            writer.apply(Event::Apply(at("a", "x", version)));
        }
        let found = |version| cache.at_version(Some("a"), "x", version).is_some();
        assert!(found("4"), "the current one");
        assert!(found("3") && found("2"), "two earlier ones");
        assert!(!found("1"), "only two are kept");
        writer.apply(Event::Delete(at("a", "x", "4")));
        assert!(!found("3"), "a deleted object's history goes with it");
    }

    #[test]
    fn a_relist_keeps_what_changed_and_drops_what_went() {
        let (cache, mut writer) = ordered::<Pod>(2);
        listed(&mut writer, vec![at("a", "x", "1"), at("a", "y", "1")]);
        listed(&mut writer, vec![at("a", "x", "2"), at("a", "z", "5")]);
        assert!(cache.at_version(Some("a"), "x", "1").is_some());
        assert!(cache.at_version(Some("a"), "y", "1").is_none());
        // Unchanged across a relist: kept once, as the current version.
        listed(&mut writer, vec![at("a", "x", "2")]);
        assert!(cache.at_version(Some("a"), "x", "1").is_some());
        assert!(cache.at_version(Some("a"), "x", "2").is_some());
    }

    #[test]
    fn without_history_only_the_current_version_is_found() {
        let (cache, mut writer) = ordered::<Pod>(0);
        listed(&mut writer, vec![at("a", "x", "1")]);
        writer.apply(Event::Apply(at("a", "x", "2")));
        assert!(cache.at_version(Some("a"), "x", "1").is_none());
        assert!(cache.at_version(Some("a"), "x", "2").is_some());
    }
}
