//! Reading one's own writes. A watch store learns of a write only when its
//! watch event arrives, a moment after the API server answered; the driver
//! reads right after it writes (a claim it created, a node it tainted). So
//! every write's answer is kept here and read over the store until the store
//! has caught up with it: it holds that `resourceVersion` (or a later one),
//! or, for a deletion, no longer holds the object. An answer is dropped
//! after [`Overlay::ttl`] whatever the store says, so an object someone else
//! changed meanwhile is never hidden for long.
//!
//! Kubernetes calls resource versions opaque; the API servers there are
//! (etcd's revisions) number them, so where both versions are numbers the
//! later one wins, and otherwise only an equal version counts as caught up.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::ordered::Watched;
use super::ordered::{Key, Ordered, key, key_of};

/// One write's answer.
#[derive(Debug)]
struct Written<K> {
    /// The object as written; `None` once deleted.
    object: Option<Arc<K>>,
    /// Its `resourceVersion` after the write.
    resource_version: Option<String>,
    /// When the answer came.
    at: Instant,
}

/// The answers to this process's writes of one kind, not yet seen in the
/// store.
#[derive(Debug)]
pub(crate) struct Overlay<K> {
    written: Mutex<BTreeMap<Key, Written<K>>>,
    ttl: Duration,
}

impl<K: Watched> Overlay<K> {
    /// An empty overlay whose answers last at most `ttl`.
    pub(crate) fn new(ttl: Duration) -> Self {
        Overlay {
            written: Mutex::new(BTreeMap::new()),
            ttl,
        }
    }

    /// Records the API server's answer to a write of `object`.
    pub(crate) fn wrote(&self, object: K) {
        let key = key_of(&object);
        let resource_version = object.meta().resource_version.clone();
        self.lock().insert(
            key,
            Written {
                object: Some(Arc::new(object)),
                resource_version,
                at: Instant::now(),
            },
        );
    }

    /// Records that the object is gone.
    pub(crate) fn removed(&self, namespace: Option<&str>, name: &str) {
        self.lock().insert(
            key(namespace, name),
            Written {
                object: None,
                resource_version: None,
                at: Instant::now(),
            },
        );
    }

    /// Every object of `store`, with this process's writes read over them,
    /// ordered by namespace and name.
    pub(crate) fn read(&self, store: &Ordered<K>) -> Vec<Arc<K>> {
        let mut written = self.lock();
        self.forget_seen(&mut written, store);
        if written.is_empty() {
            return store.state();
        }
        let mut objects: BTreeMap<Key, Arc<K>> = store
            .state()
            .into_iter()
            .map(|object| (key_of(object.as_ref()), object))
            .collect();
        for (key, answer) in written.iter() {
            match &answer.object {
                Some(object) => {
                    objects.insert(key.clone(), Arc::clone(object));
                }
                None => {
                    objects.remove(key);
                }
            }
        }
        objects.into_values().collect()
    }

    /// The object `name` (in `namespace`), this process's last write of it
    /// first.
    pub(crate) fn get(
        &self,
        store: &Ordered<K>,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Arc<K>> {
        let key = key(namespace, name);
        let mut written = self.lock();
        self.forget_seen(&mut written, store);
        match written.get(&key) {
            Some(answer) => answer.object.clone(),
            None => store.get(namespace, name),
        }
    }

    /// The object `name` (in `namespace`) as it was at `resource_version`:
    /// this process's last write of it, or a version the store holds.
    pub(crate) fn at_version(
        &self,
        store: &Ordered<K>,
        namespace: Option<&str>,
        name: &str,
        resource_version: &str,
    ) -> Option<Arc<K>> {
        let key = key(namespace, name);
        let mut written = self.lock();
        self.forget_seen(&mut written, store);
        if let Some(answer) = written.get(&key)
            && answer.resource_version.as_deref() == Some(resource_version)
        {
            return answer.object.clone();
        }
        drop(written);
        store.at_version(namespace, name, resource_version)
    }

    /// Drops the answers the store has caught up with, and the old ones.
    fn forget_seen(&self, written: &mut BTreeMap<Key, Written<K>>, store: &Ordered<K>) {
        written.retain(|(namespace, name), answer| {
            let namespace = (!namespace.is_empty()).then_some(namespace.as_str());
            if answer.at.elapsed() > self.ttl {
                return false;
            }
            let stored = store.get(namespace, name);
            !caught_up(stored.as_deref(), answer)
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Key, Written<K>>> {
        // A panic elsewhere leaves the map as valid as before it.
        self.written.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether the store, holding `stored`, has seen the write `answer`.
fn caught_up<K: Watched>(stored: Option<&K>, answer: &Written<K>) -> bool {
    match (stored, &answer.object) {
        (None, None) => true,
        (Some(_), None) | (None, Some(_)) => false,
        (Some(stored), Some(_)) => {
            let (Some(seen), Some(wrote)) = (
                stored.meta().resource_version.as_deref(),
                answer.resource_version.as_deref(),
            ) else {
                return false;
            };
            match (seen.parse::<u64>(), wrote.parse::<u64>()) {
                (Ok(seen), Ok(wrote)) => seen >= wrote,
                _ => seen == wrote,
            }
        }
    }
}
