//! The NodePool template hash behind static drift: what upstream's NodePool
//! hash controller (`pkg/controllers/nodepool/hash/controller.go`) writes as
//! `karpenter.sh/nodepool-hash`, computed by a scheme of our own.
//!
//! [`NodePool::template_hash`] says what is hashed and how, and where that
//! departs from upstream; [`NodePool::annotate_hash`] and
//! [`NodePool::rehash_claim`] are the controller's two rules.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Taint;

use super::condition::Conditions as _;
use super::condition::types as condition_types;
use super::nodeclaim::NodeClaim;
use super::nodepool::NodePool;
use crate::scheduling::{
    NODE_POOL_HASH_ANNOTATION_KEY, NODE_POOL_HASH_VERSION, NODE_POOL_HASH_VERSION_ANNOTATION_KEY,
};

impl NodePool {
    /// The hash of the fields of `spec.template` that upstream hashes for
    /// static drift, at [`NODE_POOL_HASH_VERSION`], in decimal.
    ///
    /// The same template gives the same hash on every platform and in every
    /// release until the version changes.
    ///
    /// # What is hashed
    ///
    /// Upstream hashes `spec.template` (`NodePool.Hash` in `pkg/apis/v1/nodepool.go`,
    /// unchanged from v1.0.0 to v1.14 at hash version `v3`) with hashstructure's
    /// `SlicesAsSets`, `IgnoreZeroValue` and `ZeroNil`, skipping the fields tagged
    /// `hash:"ignore"`. Of the template, that leaves:
    ///
    /// | Field | Here |
    /// |---|---|
    /// | `metadata.labels` | hashed, as a map |
    /// | `metadata.annotations` | hashed, as a map |
    /// | `spec.taints` | hashed, as a set (key, value, effect, timeAdded) |
    /// | `spec.startupTaints` | hashed, as a set |
    /// | `spec.nodeClassRef` | hashed (group, kind, name) |
    /// | `spec.terminationGracePeriod` | hashed, by value (`60m` = `1h`) |
    /// | `spec.expireAfter` | hashed, by value; absent counts as the CRD default `720h` |
    /// | `spec.requirements` | **not hashed** (`hash:"ignore"`): checked on its own, against the node's labels |
    ///
    /// Everything outside the template is left out too: `weight`, `limits`,
    /// `disruption` (consolidation, budgets), `replicas`, the pool's metadata and
    /// status. Changing them never drifts a node. `expireAfter` and
    /// `terminationGracePeriod` moved into the template in v1 and are hashed
    /// there (upstream's drift tests list both among the fields that drift).
    /// Fields this crate does not know (the `extra` maps) are left out: upstream
    /// drops unknown fields when it decodes, so they cannot take part in its hash
    /// either.
    ///
    /// # Where it departs from upstream
    ///
    /// The value is not upstream's (a hash of Go structs by reflection), hence the
    /// version [`NODE_POOL_HASH_VERSION`] of our own: claims hashed by upstream are
    /// re-hashed rather than drifted. The hash is FNV-1a (64 bits) over a
    /// canonical, length-prefixed encoding of the fields above, written in
    /// decimal as upstream writes its own. Beyond the value:
    ///
    /// - an absent list or map and an empty one hash alike (upstream's
    ///   `IgnoreZeroValue` skips only the absent one), so that a client that
    ///   drops empty fields when it writes, as Go clients do, drifts nothing;
    /// - sets are sets: a repeated taint counts once (upstream combines the
    ///   elements of a set by XOR, so a taint written twice cancels out).
    ///
    /// Like upstream, an empty string field (a taint's `value`, a `nodeClassRef`
    /// field) hashes as if absent, and so does an absent `spec.template.metadata`.
    ///
    /// ```
    /// use karpenter_core::snapshot::build::NodePoolBuilder;
    ///
    /// let pool = NodePoolBuilder::new("default").label("team", "a").build();
    /// let heavier = NodePoolBuilder::new("default").label("team", "a").weight(50).build();
    /// let other_team = NodePoolBuilder::new("default").label("team", "b").build();
    /// assert_eq!(pool.template_hash(), heavier.template_hash());
    /// assert_ne!(pool.template_hash(), other_team.template_hash());
    /// ```
    pub fn template_hash(&self) -> String {
        let template = &self.spec.template;
        let metadata = template.metadata.as_ref();
        let spec = &template.spec;
        let mut encoder = Encoder::default();
        encoder.string_map("labels", metadata.and_then(|m| m.labels.as_ref()));
        encoder.string_map("annotations", metadata.and_then(|m| m.annotations.as_ref()));
        encoder.set("taints", spec.taints(), encode_taint);
        encoder.set("startupTaints", spec.startup_taints(), encode_taint);
        if let Some(reference) = &spec.node_class_ref {
            encoder.nested("nodeClassRef", |e| {
                e.string_field("group", &reference.group);
                e.string_field("kind", &reference.kind);
                e.string_field("name", &reference.name);
            });
        }
        if let Some(period) = &spec.termination_grace_period {
            encoder.nested("terminationGracePeriod", |e| e.duration(period.as_std()));
        }
        encoder.nested("expireAfter", |e| match spec.effective_expire_after() {
            None => e.str("Never"),
            Some(after) => e.duration(after),
        });
        fnv1a64(&encoder.0).to_string()
    }

    /// Sets `karpenter.sh/nodepool-hash` to [`template_hash`](Self::template_hash)
    /// and `karpenter.sh/nodepool-hash-version` to [`NODE_POOL_HASH_VERSION`],
    /// as upstream's hash controller does on every NodePool it reconciles;
    /// returns whether either changed (whether the pool needs writing back).
    ///
    /// When the version annotation was missing or different, the claims of
    /// this pool were hashed by another scheme: apply
    /// [`rehash_claim`](Self::rehash_claim) to each. Upstream does so only
    /// then; applying it on every pass is safe too, as it leaves a claim at
    /// our version alone.
    ///
    /// ```
    /// use karpenter_core::scheduling::{NODE_POOL_HASH_VERSION, NODE_POOL_HASH_VERSION_ANNOTATION_KEY};
    /// use karpenter_core::snapshot::build::NodePoolBuilder;
    ///
    /// let mut pool = NodePoolBuilder::new("default").build();
    /// assert!(pool.annotate_hash());
    /// assert!(!pool.annotate_hash());
    /// let annotations = pool.metadata.annotations.as_ref().unwrap();
    /// assert_eq!(annotations[NODE_POOL_HASH_VERSION_ANNOTATION_KEY], NODE_POOL_HASH_VERSION);
    /// ```
    pub fn annotate_hash(&mut self) -> bool {
        let hash = self.template_hash();
        let annotations = self.metadata.annotations.get_or_insert_with(BTreeMap::new);
        let hash_changed = set_annotation(annotations, NODE_POOL_HASH_ANNOTATION_KEY, &hash);
        let version_changed = set_annotation(
            annotations,
            NODE_POOL_HASH_VERSION_ANNOTATION_KEY,
            NODE_POOL_HASH_VERSION,
        );
        hash_changed || version_changed
    }

    /// Upstream's rule for a NodeClaim of this pool hashed by another scheme:
    /// when the claim's `karpenter.sh/nodepool-hash-version` is not
    /// [`NODE_POOL_HASH_VERSION`] (or is missing), it gets this version and,
    /// unless it carries a `Drifted` condition, this pool's
    /// [`template_hash`](Self::template_hash). Returns whether the claim
    /// changed.
    ///
    /// So a version change never drifts a node, as hashes of two schemes
    /// cannot be compared; a claim already found drifted keeps its old hash,
    /// and with it its drift, since whether it still differs cannot be told
    /// (upstream's `updateNodeClaimHash`). As upstream, "found drifted" is a
    /// `Drifted` condition of any status: upstream's drift controller clears
    /// the condition rather than setting it `False`. A claim at this version
    /// is left alone: its hash is what drift compares.
    pub fn rehash_claim(&self, claim: &mut NodeClaim) -> bool {
        let claim_version = claim
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(NODE_POOL_HASH_VERSION_ANNOTATION_KEY));
        if claim_version.is_some_and(|v| v == NODE_POOL_HASH_VERSION) {
            return false;
        }
        let drifted = claim
            .status
            .as_ref()
            .is_some_and(|s| s.conditions.find(condition_types::DRIFTED).is_some());
        let hash = (!drifted).then(|| self.template_hash());
        let annotations = claim.metadata.annotations.get_or_insert_with(BTreeMap::new);
        let mut changed = set_annotation(
            annotations,
            NODE_POOL_HASH_VERSION_ANNOTATION_KEY,
            NODE_POOL_HASH_VERSION,
        );
        if let Some(hash) = hash {
            changed |= set_annotation(annotations, NODE_POOL_HASH_ANNOTATION_KEY, &hash);
        }
        changed
    }
}

/// Sets `key` to `value`; returns whether that changed anything.
fn set_annotation(annotations: &mut BTreeMap<String, String>, key: &str, value: &str) -> bool {
    if annotations.get(key).is_some_and(|v| v == value) {
        return false;
    }
    annotations.insert(key.to_owned(), value.to_owned());
    true
}

/// A taint: its key, value, effect and `timeAdded`, empty strings left out.
fn encode_taint(encoder: &mut Encoder, taint: &Taint) {
    encoder.string_field("key", &taint.key);
    encoder.string_field("value", taint.value.as_deref().unwrap_or_default());
    encoder.string_field("effect", &taint.effect);
    if let Some(added) = &taint.time_added {
        encoder.nested("timeAdded", |e| {
            e.bytes(&added.0.as_second().to_le_bytes());
            e.bytes(&added.0.subsec_nanosecond().to_le_bytes());
        });
    }
}

/// A canonical encoding: every field is its name then its value, each
/// length-prefixed, in a fixed order, so that two different templates never
/// encode alike. Fields without a value (absent, empty) are not written.
#[derive(Default)]
struct Encoder(Vec<u8>);

impl Encoder {
    /// `bytes`, after their length.
    fn bytes(&mut self, bytes: &[u8]) {
        let len = u64::try_from(bytes.len()).expect("a length fits in 64 bits");
        self.0.extend_from_slice(&len.to_le_bytes());
        self.0.extend_from_slice(bytes);
    }

    fn str(&mut self, text: &str) {
        self.bytes(text.as_bytes());
    }

    /// A duration by value: whole seconds, then nanoseconds.
    fn duration(&mut self, duration: Duration) {
        self.bytes(&duration.as_secs().to_le_bytes());
        self.bytes(&duration.subsec_nanos().to_le_bytes());
    }

    /// Field `name` whose value `encode` writes, as one length-prefixed
    /// value.
    fn nested(&mut self, name: &str, encode: impl FnOnce(&mut Self)) {
        let mut inner = Self::default();
        encode(&mut inner);
        self.str(name);
        self.bytes(&inner.0);
    }

    /// Field `name` with string `value`, unless it is empty.
    fn string_field(&mut self, name: &str, value: &str) {
        if !value.is_empty() {
            self.str(name);
            self.str(value);
        }
    }

    /// Field `name` with a map's entries in key order, unless there are none.
    fn string_map(&mut self, name: &str, map: Option<&BTreeMap<String, String>>) {
        let Some(map) = map.filter(|m| !m.is_empty()) else {
            return;
        };
        self.nested(name, |e| {
            for (key, value) in map {
                e.str(key);
                e.str(value);
            }
        });
    }

    /// Field `name` with `items` as a set (sorted by their encoding, each
    /// once), unless there are none.
    fn set<T>(&mut self, name: &str, items: &[T], encode: impl Fn(&mut Self, &T)) {
        let mut encoded: Vec<Vec<u8>> = items
            .iter()
            .map(|item| {
                let mut inner = Self::default();
                encode(&mut inner, item);
                inner.0
            })
            .collect();
        encoded.sort_unstable();
        encoded.dedup();
        if encoded.is_empty() {
            return;
        }
        self.nested(name, |e| {
            for item in &encoded {
                e.bytes(item);
            }
        });
    }
}

/// FNV-1a, 64 bits (the variant Go's `hash/fnv` calls `New64a`): the stable
/// hash behind every drift hash of this workspace (the NodePool template
/// hash here, the providers' node class hashes), small and the same on every
/// platform and release.
///
/// ```
/// assert_eq!(karpenter_core::api::fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
/// assert_eq!(karpenter_core::api::fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
/// ```
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET_BASIS, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(PRIME)
    })
}

#[cfg(test)]
mod tests;
