//! A watch cache ordered by namespace and name: what a reflector's store
//! holds, kept in a `BTreeMap` so that reading every object in a
//! deterministic order takes no sort (75,000 pods sorted by name cost more
//! than the rest of a snapshot read together).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, PoisonError, RwLock};

use kube::Resource;
use kube::runtime::watcher::Event;
use serde::de::DeserializeOwned;
use tokio::sync::watch;

/// A kind the caches hold.
pub(crate) trait Watched:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

impl<K> Watched for K where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

/// The key of an object: namespace (empty for a cluster-scoped kind) and
/// name.
pub(crate) type Key = (String, String);

/// The key of `object`.
pub(crate) fn key_of<K: Watched>(object: &K) -> Key {
    let meta = object.meta();
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

/// The key of the object `name` in `namespace`.
pub(crate) fn key(namespace: Option<&str>, name: &str) -> Key {
    (namespace.unwrap_or_default().to_owned(), name.to_owned())
}

/// The reading side: cheap to clone, shared with the writer.
#[derive(Clone, Debug)]
pub(crate) struct Ordered<K> {
    objects: Arc<RwLock<BTreeMap<Key, Arc<K>>>>,
    ready: watch::Receiver<bool>,
}

/// The writing side, fed the watcher's events.
#[derive(Debug)]
pub(crate) struct Writer<K> {
    objects: Arc<RwLock<BTreeMap<Key, Arc<K>>>>,
    /// A relist in progress: the objects listed so far.
    relisting: Option<BTreeMap<Key, Arc<K>>>,
    ready: watch::Sender<bool>,
}

/// An empty cache and its writer.
pub(crate) fn ordered<K>() -> (Ordered<K>, Writer<K>) {
    let objects = Arc::new(RwLock::new(BTreeMap::new()));
    let (ready_tx, ready) = watch::channel(false);
    (
        Ordered {
            objects: Arc::clone(&objects),
            ready,
        },
        Writer {
            objects,
            relisting: None,
            ready: ready_tx,
        },
    )
}

impl<K: Watched> Ordered<K> {
    /// Every object, by namespace then name.
    pub(crate) fn state(&self) -> Vec<Arc<K>> {
        self.read().values().cloned().collect()
    }

    /// The object `name` in `namespace`.
    pub(crate) fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        self.read().get(&key(namespace, name)).cloned()
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

impl<K: Watched> Writer<K> {
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
                *self.write() = listed;
                self.ready.send_replace(true);
            }
            Event::Apply(object) => {
                self.write().insert(key_of(&object), Arc::new(object));
            }
            Event::Delete(object) => {
                self.write().remove(&key_of(&object));
            }
        }
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
        let (cache, mut writer) = ordered::<Pod>();
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
        let (cache, mut writer) = ordered::<Pod>();
        writer.apply(Event::Init);
        writer.apply(Event::InitApply(pod("a", "gone")));
        writer.apply(Event::InitApply(pod("a", "kept")));
        writer.apply(Event::InitDone);
        writer.apply(Event::Init);
        writer.apply(Event::InitApply(pod("a", "kept")));
        writer.apply(Event::InitDone);
        assert_eq!(names(&cache), ["a/kept"]);
    }
}
