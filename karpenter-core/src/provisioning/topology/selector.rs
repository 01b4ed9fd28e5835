//! Placed pods' labels as topology groups store them for counting (a
//! group's selector is `scheduling::label_selector`'s, its namespaces are
//! `namespaces.rs`').

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::scheduling::label_selector::LabelSource;

/// A placed pod's labels as stored for later counting: sorted by key, with
/// strings shared among pods that carry the same ones; a copy shares the
/// list.
#[derive(Clone, Debug, Default)]
pub(super) struct StoredLabels(Arc<[(Arc<str>, Arc<str>)]>);

impl StoredLabels {
    /// Stores `labels`, taking each string from `intern` so that equal
    /// strings share one allocation.
    pub(super) fn new(
        labels: &BTreeMap<String, String>,
        mut intern: impl FnMut(&str) -> Arc<str>,
    ) -> StoredLabels {
        // A BTreeMap iterates in key order, so the result is sorted.
        StoredLabels(
            labels
                .iter()
                .map(|(key, value)| (intern(key), intern(value)))
                .collect(),
        )
    }
}

/// The placed pods' namespaces and labels as topology bases stored them,
/// for the next base over a later copy of the cluster to take unread, and
/// the strings they share.
///
/// A disruption plan builds a base for each pass, over every placed pod,
/// and storing each pod's labels was a large share of each build. A pod is
/// known again by its address: the memo holds the pod, so the address stays
/// its own, and a pod shared by an `Arc` cannot change in place (a change
/// copies it first, and the copy is a new pod to the memo).
#[derive(Debug, Default)]
pub(crate) struct LabelMemo {
    /// Every string stored, shared by the pods that carry it.
    strings: crate::fast_hash::HashSet<Arc<str>>,
    /// What each pod was stored as, by the pod's address, with the last
    /// build that read it.
    pods: crate::fast_hash::HashMap<usize, Stored>,
    /// The build reading now (see [`LabelMemo::start`]).
    build: u64,
    /// How many pods the build has read.
    read: usize,
    /// Whether pods are kept for a later base; a one-off base only shares
    /// its strings.
    keeps_pods: bool,
}

/// A pod as a [`LabelMemo`] stored it.
#[derive(Debug)]
struct Stored {
    /// The pod, held so that its address stays its own.
    _pod: Arc<crate::pods::PodInfo>,
    namespace: Arc<str>,
    labels: StoredLabels,
    /// The last build that read it.
    build: u64,
}

impl LabelMemo {
    /// This memo, keeping what it stores for the bases after this one (a
    /// [`LabelMemo::default`] serves one base: it shares strings only).
    pub(crate) fn keeping_pods(self) -> LabelMemo {
        LabelMemo {
            keeps_pods: true,
            ..self
        }
    }

    /// The namespace and labels of a placed pod, as stored for `source`
    /// before when it was, else stored now (and kept, with `source`).
    pub(super) fn read(
        &mut self,
        source: Option<&Arc<crate::pods::PodInfo>>,
        namespace: &str,
        labels: &BTreeMap<String, String>,
    ) -> (Arc<str>, StoredLabels) {
        let source = source.filter(|_| self.keeps_pods);
        let address = source.map(|pod| Arc::as_ptr(pod) as usize);
        let build = self.build;
        if let Some(stored) = address.and_then(|a| self.pods.get_mut(&a)) {
            stored.build = build;
            self.read += 1;
            return (Arc::clone(&stored.namespace), stored.labels.clone());
        }
        let namespace = self.intern(namespace);
        let labels = StoredLabels::new(labels, |s| self.intern(s));
        if let (Some(address), Some(pod)) = (address, source) {
            self.read += 1;
            let stored = Stored {
                _pod: Arc::clone(pod),
                namespace: Arc::clone(&namespace),
                labels: labels.clone(),
                build,
            };
            self.pods.insert(address, stored);
        }
        (namespace, labels)
    }

    /// Starts a build: the pods it does not read are forgotten when it
    /// [finishes](LabelMemo::finish).
    pub(super) fn start(&mut self) {
        self.build += 1;
        self.read = 0;
    }

    /// Ends a build: forgets the pods it did not read (copies replaced since,
    /// pods gone), so that they do not stay alive.
    pub(super) fn finish(&mut self) {
        if self.pods.len() > self.read {
            let build = self.build;
            self.pods.retain(|_, stored| stored.build == build);
        }
    }

    /// The stored copy of `text`.
    fn intern(&mut self, text: &str) -> Arc<str> {
        if let Some(stored) = self.strings.get(text) {
            return Arc::clone(stored);
        }
        let stored: Arc<str> = Arc::from(text);
        self.strings.insert(Arc::clone(&stored));
        stored
    }
}

impl StoredLabels {
    /// The labels, sorted by key.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&Arc<str>, &Arc<str>)> + '_ {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl LabelSource for StoredLabels {
    fn label(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|at| &*self.0[at].1)
    }
}
