//! The static drift hash of an `EC2NodeClass`: what upstream's node class
//! hash controller (`pkg/controllers/nodeclass/hash/controller.go`) writes as
//! `karpenter.k8s.aws/ec2nodeclass-hash`, computed by a scheme of our own.
//!
//! [`EC2NodeClass::static_hash`] says what is hashed and where it departs
//! from upstream; [`EC2NodeClass::annotate_hash`] and
//! [`EC2NodeClass::rehash_claim`] are the controller's two rules.

use std::collections::BTreeMap;

use karpenter_core::api::{Conditions as _, condition_types};
use karpenter_core::api::{NodeClaim, fnv1a64};
use serde_json::Value;

use super::EC2NodeClass;
use super::spec::EC2NodeClassSpec;

/// The annotation holding the node class's hash, on the class and on the
/// claims launched from it.
pub const HASH_ANNOTATION: &str = "karpenter.k8s.aws/ec2nodeclass-hash";
/// The annotation holding the version of the scheme behind the hash.
pub const HASH_VERSION_ANNOTATION: &str = "karpenter.k8s.aws/ec2nodeclass-hash-version";
/// The version of this crate's hash scheme.
///
/// Not upstream's [`UPSTREAM_HASH_VERSION`]: the values differ from
/// upstream's, so sharing its version would make every claim upstream
/// launched look drifted; under a version of our own such claims are
/// re-hashed instead ([`EC2NodeClass::rehash_claim`]).
pub const HASH_VERSION: &str = "rs-v1";
/// Upstream's hash version at the snapshot followed (main at 1d92708; `v5`
/// at release v1.14.1). Kept to say which field set [`HASH_VERSION`] follows.
pub const UPSTREAM_HASH_VERSION: &str = "v6";

impl EC2NodeClass {
    /// The hash of the fields upstream hashes for static drift, in decimal;
    /// `ca_bundle` is the cluster CA bundle the controller was started with.
    ///
    /// # What is hashed
    ///
    /// Upstream (`EC2NodeClass.Hash`, `pkg/apis/v1/ec2nodeclass.go`) hashes,
    /// with hashstructure's `SlicesAsSets`, `IgnoreZeroValue` and `ZeroNil`:
    ///
    /// - the spec without the fields tagged `hash:"ignore"`: the four kinds of
    ///   selector terms (subnets, security groups, capacity reservations,
    ///   AMIs; what they resolve to drifts dynamically), `ipPrefixCount`,
    ///   the literal `amiFamily` and `kubelet`. So `role`,
    ///   `instanceProfile`, `userData`, `tags`, `blockDeviceMappings`,
    ///   `instanceStorePolicy`, `networkInterfaces`, `detailedMonitoring`,
    ///   `metadataOptions`, `associatePublicIPAddress`,
    ///   `connectionTracking`, `context`, `placementGroupSelector` and
    ///   `cpuOptions` count, lists in them as sets;
    /// - the resolved AMI family ([`ami_family`](Self::ami_family), `Custom`
    ///   when none), so that adding `amiFamily: AL2023` beside the alias
    ///   `al2023@latest` drifts nothing;
    /// - the CA bundle;
    /// - the kubelet configuration as its JSON text (keys sorted, lists in
    ///   order, zero values kept), `null` when empty.
    ///
    /// Fields this crate does not know are left out (upstream drops them on
    /// decoding), except in `kubelet`, which upstream keeps as an open map.
    ///
    /// # Where it departs from upstream
    ///
    /// The value is our own, not hashstructure's (a hash of Go structs by
    /// reflection, which only Go's type layout can reproduce), hence the
    /// version [`HASH_VERSION`]. It is FNV-1a (64 bits) over a canonical JSON
    /// text. Beyond the value: an absent list, map or string and an empty one
    /// hash alike (upstream tells a set empty one from an absent one), a
    /// repeated list element counts once, and `volumeSize` is hashed as
    /// written (upstream hashes its canonical form, so `20Gi` and `20480Mi`
    /// are equal there and not here). A `rootVolume: false` is as absent,
    /// as upstream's plain bool; other `false` and `0` values count, as
    /// upstream's pointers do (`associatePublicIPAddress: false` is not
    /// "unset").
    pub fn static_hash(&self, ca_bundle: Option<&str>) -> String {
        let spec = canonical(&hashed_spec(&self.spec)).unwrap_or(Value::Null);
        let family = self.ami_family().map_or("Custom", super::AmiFamily::as_str);
        let kubelet = kubelet_text(&self.spec);
        let text = format!(
            "{spec}\u{0}{family}\u{0}{}\u{0}{kubelet}",
            ca_bundle.unwrap_or("")
        );
        fnv1a64(text.as_bytes()).to_string()
    }

    /// Sets [`HASH_ANNOTATION`] to [`static_hash`](Self::static_hash) and
    /// [`HASH_VERSION_ANNOTATION`] to [`HASH_VERSION`], as upstream's hash
    /// controller does on each reconcile; returns whether either changed.
    ///
    /// Call [`needs_claim_rehash`](Self::needs_claim_rehash) first: when it
    /// is true, apply [`rehash_claim`](Self::rehash_claim) to this class's
    /// claims, as upstream does before it re-annotates the class.
    pub fn annotate_hash(&mut self, ca_bundle: Option<&str>) -> bool {
        let hash = self.static_hash(ca_bundle);
        let annotations = self.metadata.annotations.get_or_insert_with(BTreeMap::new);
        let hash_changed = set_annotation(annotations, HASH_ANNOTATION, &hash);
        let version_changed = set_annotation(annotations, HASH_VERSION_ANNOTATION, HASH_VERSION);
        hash_changed || version_changed
    }

    /// Whether the class's version annotation is missing or not
    /// [`HASH_VERSION`]: its claims were hashed by another scheme.
    pub fn needs_claim_rehash(&self) -> bool {
        annotation(&self.metadata, HASH_VERSION_ANNOTATION) != Some(HASH_VERSION)
    }

    /// Upstream's rule for a claim of this class hashed by another scheme:
    /// when its version annotation is not [`HASH_VERSION`], it gets this
    /// version and, unless it has a `Drifted` condition, this class's hash.
    /// Returns whether the claim changed.
    ///
    /// So a change of scheme never drifts a node; a claim already drifted
    /// keeps its old hash, and its drift, since hashes of two schemes cannot
    /// be compared.
    pub fn rehash_claim(&self, claim: &mut NodeClaim, ca_bundle: Option<&str>) -> bool {
        if annotation(&claim.metadata, HASH_VERSION_ANNOTATION) == Some(HASH_VERSION) {
            return false;
        }
        let drifted = claim
            .status
            .as_ref()
            .is_some_and(|status| status.conditions.find(condition_types::DRIFTED).is_some());
        let hash = (!drifted).then(|| self.static_hash(ca_bundle));
        let annotations = claim.metadata.annotations.get_or_insert_with(BTreeMap::new);
        let mut changed = set_annotation(annotations, HASH_VERSION_ANNOTATION, HASH_VERSION);
        if let Some(hash) = hash {
            changed |= set_annotation(annotations, HASH_ANNOTATION, &hash);
        }
        changed
    }
}

/// The annotation `key` of an object, if set.
pub(crate) fn annotation<'a>(
    meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    key: &str,
) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

/// Sets `key` to `value`; whether it changed.
fn set_annotation(annotations: &mut BTreeMap<String, String>, key: &str, value: &str) -> bool {
    if annotations.get(key).map(String::as_str) == Some(value) {
        return false;
    }
    annotations.insert(key.to_owned(), value.to_owned());
    true
}

/// The spec as JSON with upstream's ignored fields and the fields this crate
/// does not know taken out.
fn hashed_spec(spec: &EC2NodeClassSpec) -> Value {
    let mut spec = spec.clone();
    spec.subnet_selector_terms.clear();
    spec.security_group_selector_terms.clear();
    spec.capacity_reservation_selector_terms = None;
    spec.ami_selector_terms.clear();
    spec.ip_prefix_count = None;
    spec.ami_family = None;
    spec.kubelet = None;
    spec.other.clear();
    for mapping in spec.block_device_mappings.iter_mut().flatten() {
        mapping.other.clear();
        if mapping.root_volume == Some(false) {
            mapping.root_volume = None;
        }
        if let Some(ebs) = &mut mapping.ebs {
            ebs.other.clear();
        }
    }
    for interface in spec.network_interfaces.iter_mut().flatten() {
        interface.other.clear();
    }
    let nested = [
        spec.metadata_options.as_mut().map(|m| &mut m.other),
        spec.connection_tracking.as_mut().map(|c| &mut c.other),
        spec.placement_group_selector.as_mut().map(|p| &mut p.other),
        spec.cpu_options.as_mut().map(|c| &mut c.other),
    ];
    for other in nested.into_iter().flatten() {
        other.clear();
    }
    serde_json::to_value(&spec).unwrap_or(Value::Null)
}

/// The kubelet configuration as upstream hashes it: its JSON text, `null`
/// when absent or empty.
fn kubelet_text(spec: &EC2NodeClassSpec) -> String {
    match spec.kubelet.as_ref().map(serde_json::to_value) {
        Some(Ok(Value::Object(map))) if !map.is_empty() => Value::Object(map).to_string(),
        _ => "null".to_owned(),
    }
}

/// Drops what the hash ignores (null, empty strings, lists and maps) and
/// sorts lists, whose order does not matter; repeated elements count once.
fn canonical(value: &Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Array(items) => {
            let mut kept: Vec<Value> = items.iter().filter_map(canonical).collect();
            kept.sort_by_cached_key(Value::to_string);
            kept.dedup();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        Value::Object(map) => {
            let kept: serde_json::Map<String, Value> = map
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), canonical(v)?)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        other => Some(other.clone()),
    }
}

#[cfg(test)]
mod tests;
