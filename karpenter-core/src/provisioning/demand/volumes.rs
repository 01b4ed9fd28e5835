//! Volume topology: where a pod's persistent volumes let it run, as upstream
//! Karpenter's `VolumeTopology` (`scheduling/volumetopology.go`) and its PVC
//! validation decide.
//!
//! Each volume that is a claim (`persistentVolumeClaim`, or `ephemeral`, whose
//! claim is named `<pod>-<volume>`) offers one or more *alternatives*, sets of
//! node requirements any one of which will do:
//! - a bound claim offers its PersistentVolume's `nodeAffinity.required` terms,
//!   one alternative per term; for `local` and `hostPath` volumes the
//!   `kubernetes.io/hostname` expressions are dropped, because the pod is moving to
//!   a new node anyway (a term that was hostname only becomes an unconstrained
//!   alternative);
//! - an unbound claim offers its StorageClass's `allowedTopologies`, one
//!   alternative per entry, each label expression read as `In`.
//!
//! The pod's alternatives are the cross product over its volumes: every pair of an
//! alternative so far and one of the next volume, merged (intersected key by key).
//! Only the pairs that can both hold are kept; when no pair can, every pair is kept,
//! as upstream does, and the scheduler then finds each of them impossible.
//!
//! A pod whose claims kube-scheduler would refuse (missing, being deleted, lost,
//! bound to a missing or deleting volume, not yet bound, or unbound with no usable
//! StorageClass or with an `Immediate` one) gets an error naming the object to fix.

use std::borrow::Cow;
use std::fmt;

use k8s_openapi::api::core::v1::{
    NodeSelectorRequirement, PersistentVolume, PersistentVolumeClaim, Volume,
};
use k8s_openapi::api::storage::v1::StorageClass;

use crate::pods::PodFields;
use crate::scheduling::{LABEL_HOSTNAME, RequirementError, Requirements};
use crate::snapshot::Snapshot;

/// Marks a default StorageClass when set to `"true"`.
const DEFAULT_CLASS_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";
/// The beta spelling of [`DEFAULT_CLASS_ANNOTATION`], still honoured by Kubernetes.
const BETA_DEFAULT_CLASS_ANNOTATION: &str = "storageclass.beta.kubernetes.io/is-default-class";
/// Set by the PersistentVolume controller once a claim's binding is complete;
/// kube-scheduler treats a claim naming a volume without it as unbound.
const BIND_COMPLETED_ANNOTATION: &str = "pv.kubernetes.io/bind-completed";
/// The binding mode that provisions (and binds) a volume before any pod uses it.
const VOLUME_BINDING_IMMEDIATE: &str = "Immediate";
/// The claim phase of a claim whose volume has gone.
const CLAIM_LOST: &str = "Lost";

/// Why a pod's volume keeps it from being scheduled, naming the object to fix.
#[derive(Clone, Debug)]
pub(crate) struct VolumeError {
    /// The volume's name in the pod.
    pub(crate) volume: String,
    /// What is wrong with it (boxed: rare, and large beside a result).
    pub(crate) problem: Box<VolumeProblem>,
}

impl fmt::Display for VolumeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "volume {:?}: {}", self.volume, self.problem)
    }
}

/// What is wrong with a volume.
#[derive(Clone, Debug)]
pub(crate) enum VolumeProblem {
    /// The claim it names does not exist (`namespace/name`).
    ClaimNotFound(String),
    /// Its claim (`namespace/name`) cannot be used.
    Claim(String, ClaimProblem),
    /// Its PersistentVolume's node affinity cannot be read.
    VolumeAffinity(String, RequirementError),
    /// Its StorageClass's `allowedTopologies` cannot be read.
    ClassTopology(String, RequirementError),
}

impl fmt::Display for VolumeProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VolumeProblem::ClaimNotFound(claim) => {
                write!(f, "persistentvolumeclaim \"{claim}\" not found")
            }
            VolumeProblem::Claim(claim, problem) => {
                write!(f, "persistentvolumeclaim \"{claim}\" {problem}")
            }
            VolumeProblem::VolumeAffinity(volume, e) => {
                write!(f, "persistentvolume {volume:?} node affinity: {e}")
            }
            VolumeProblem::ClassTopology(class, e) => {
                write!(f, "storageclass {class:?} allowedTopologies: {e}")
            }
        }
    }
}

/// Why kube-scheduler would refuse a claim.
#[derive(Clone, Debug)]
pub(crate) enum ClaimProblem {
    /// The claim is being deleted.
    Deleting,
    /// The claim is `Lost`: its volume (named) has gone.
    Lost(String),
    /// The volume it is bound to does not exist.
    VolumeMissing(String),
    /// The volume it is bound to is being deleted.
    VolumeDeleting(String),
    /// It names a volume but its binding is not complete.
    NotBoundYet(String),
    /// Unbound, with an empty `storageClassName`.
    EmptyClassName,
    /// Unbound, naming a StorageClass that does not exist.
    ClassMissing(String),
    /// Unbound, naming no StorageClass, and none is the default.
    NoDefaultClass,
    /// Unbound, with a StorageClass (named) that binds `Immediate`ly.
    ImmediateBinding(String),
}

impl fmt::Display for ClaimProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClaimProblem::Deleting => f.write_str("is being deleted"),
            ClaimProblem::Lost(volume) => write!(
                f,
                "is Lost: bound to persistentvolume {volume:?}, which no longer exists"
            ),
            ClaimProblem::VolumeMissing(volume) => write!(
                f,
                "is bound to persistentvolume {volume:?}, which does not exist"
            ),
            ClaimProblem::VolumeDeleting(volume) => write!(
                f,
                "is bound to persistentvolume {volume:?}, which is being deleted"
            ),
            ClaimProblem::NotBoundYet(volume) => write!(
                f,
                "names persistentvolume {volume:?} but lacks the annotation \
                 {BIND_COMPLETED_ANNOTATION}, so it is not bound yet"
            ),
            ClaimProblem::EmptyClassName => f.write_str(
                "is unbound and its storageClassName is empty; an unbound claim needs a storage class",
            ),
            ClaimProblem::ClassMissing(class) => write!(
                f,
                "is unbound and its storageclass {class:?} does not exist"
            ),
            ClaimProblem::NoDefaultClass => write!(
                f,
                "is unbound, names no storage class and there is no default storageclass \
                 (annotation {DEFAULT_CLASS_ANNOTATION}: \"true\")"
            ),
            ClaimProblem::ImmediateBinding(class) => write!(
                f,
                "is unbound and its storageclass {class:?} has volumeBindingMode Immediate; \
                 the claim must be bound before the pod can be scheduled"
            ),
        }
    }
}

/// The volume topology alternatives of a pod: each alternative is a set of
/// requirements a node must meet, and a node meeting any one of them can run the
/// pod as far as its volumes are concerned.
///
/// - A bound claim brings its PersistentVolume's `nodeAffinity.required` terms, one
///   alternative per term (hostname expressions dropped for `local`/`hostPath`).
/// - An unbound claim brings its StorageClass's `allowedTopologies`, one
///   alternative per entry; a claim without `storageClassName` uses the default
///   StorageClass (the newest one annotated
///   `storageclass.kubernetes.io/is-default-class: "true"`).
/// - Across volumes the alternatives are cross-multiplied, keeping the compatible
///   pairs, or every pair when none is compatible.
///
/// An empty `Vec` means the volumes put no constraint on the node. `Err` carries
/// why the pod cannot be scheduled because of one of its claims.
pub(crate) fn volume_requirements(
    snapshot: &Snapshot,
    pod: &(impl PodFields + ?Sized),
) -> Result<Vec<Requirements>, VolumeError> {
    let Some(spec) = pod.scheduling() else {
        return Ok(Vec::new());
    };
    let pod_name = pod.metadata().name.as_deref().unwrap_or_default();
    let namespace = pod.metadata().namespace.as_deref().unwrap_or("default");
    // `None` stands for the single empty alternative no volume has narrowed yet.
    let mut alternatives: Option<Vec<Requirements>> = None;
    for volume in spec.volumes.iter().flatten() {
        let Some(claim_name) = claim_name(pod_name, volume) else {
            continue;
        };
        let error = |problem| VolumeError {
            volume: volume.name.clone(),
            problem: Box::new(problem),
        };
        let claim = find_claim(snapshot, namespace, &claim_name).ok_or_else(|| {
            error(VolumeProblem::ClaimNotFound(format!(
                "{namespace}/{claim_name}"
            )))
        })?;
        let volume_alternatives = claim_alternatives(snapshot, claim).map_err(error)?;
        if volume_alternatives.is_empty() {
            continue;
        }
        alternatives = Some(match alternatives {
            None => volume_alternatives,
            Some(so_far) => cross(&so_far, &volume_alternatives),
        });
    }
    Ok(alternatives.unwrap_or_default())
}

/// The claim a volume uses, if it uses one: its `claimName`, or `<pod>-<volume>`
/// for an ephemeral volume (the name Kubernetes gives the claim it creates).
pub(super) fn claim_name<'a>(pod_name: &str, volume: &'a Volume) -> Option<Cow<'a, str>> {
    if let Some(source) = &volume.persistent_volume_claim {
        return Some(Cow::Borrowed(&source.claim_name));
    }
    volume
        .ephemeral
        .as_ref()
        .map(|_| Cow::Owned(format!("{pod_name}-{}", volume.name)))
}

pub(super) fn find_claim<'a>(
    snapshot: &'a Snapshot,
    namespace: &str,
    name: &str,
) -> Option<&'a PersistentVolumeClaim> {
    snapshot.persistent_volume_claims.iter().find(|claim| {
        claim.metadata.name.as_deref() == Some(name)
            && claim.metadata.namespace.as_deref().unwrap_or("default") == namespace
    })
}

pub(super) fn find_volume<'a>(snapshot: &'a Snapshot, name: &str) -> Option<&'a PersistentVolume> {
    snapshot
        .persistent_volumes
        .iter()
        .find(|volume| volume.metadata.name.as_deref() == Some(name))
}

pub(super) fn find_class<'a>(snapshot: &'a Snapshot, name: &str) -> Option<&'a StorageClass> {
    snapshot
        .storage_classes
        .iter()
        .find(|class| class.metadata.name.as_deref() == Some(name))
}

/// The default StorageClass: among those annotated as default, the newest, then
/// the first by name, as Kubernetes picks it.
pub(super) fn default_class(snapshot: &Snapshot) -> Option<&StorageClass> {
    let is_default = |class: &&StorageClass| {
        class.metadata.annotations.as_ref().is_some_and(|a| {
            [DEFAULT_CLASS_ANNOTATION, BETA_DEFAULT_CLASS_ANNOTATION]
                .iter()
                .any(|key| a.get(*key).is_some_and(|v| v == "true"))
        })
    };
    snapshot
        .storage_classes
        .iter()
        .filter(is_default)
        .min_by(|a, b| {
            let created = |c: &StorageClass| c.metadata.creation_timestamp.as_ref().map(|t| t.0);
            created(b)
                .cmp(&created(a))
                .then_with(|| a.metadata.name.cmp(&b.metadata.name))
        })
}

/// One claim's alternatives, after the checks kube-scheduler (and so upstream's
/// PVC validation) applies to it.
fn claim_alternatives(
    snapshot: &Snapshot,
    claim: &PersistentVolumeClaim,
) -> Result<Vec<Requirements>, VolumeProblem> {
    let claim_ref = format!(
        "{}/{}",
        claim.metadata.namespace.as_deref().unwrap_or("default"),
        claim.metadata.name.as_deref().unwrap_or_default()
    );
    let refused = |problem| VolumeProblem::Claim(claim_ref.clone(), problem);
    let claim_spec = claim.spec.as_ref();
    let volume_name = claim_spec
        .and_then(|s| s.volume_name.as_deref())
        .filter(|n| !n.is_empty());
    if claim.metadata.deletion_timestamp.is_some() {
        return Err(refused(ClaimProblem::Deleting));
    }
    let phase = claim.status.as_ref().and_then(|s| s.phase.as_deref());
    if phase == Some(CLAIM_LOST) {
        return Err(refused(ClaimProblem::Lost(
            volume_name.unwrap_or_default().to_owned(),
        )));
    }
    if let Some(volume_name) = volume_name {
        let volume = find_volume(snapshot, volume_name)
            .ok_or_else(|| refused(ClaimProblem::VolumeMissing(volume_name.to_owned())))?;
        if volume.metadata.deletion_timestamp.is_some() {
            return Err(refused(ClaimProblem::VolumeDeleting(
                volume_name.to_owned(),
            )));
        }
        let bind_completed = claim
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(BIND_COMPLETED_ANNOTATION));
        if !bind_completed {
            return Err(refused(ClaimProblem::NotBoundYet(volume_name.to_owned())));
        }
        return volume_alternatives(volume)
            .map_err(|e| VolumeProblem::VolumeAffinity(volume_name.to_owned(), e));
    }
    let class = match claim_spec.and_then(|s| s.storage_class_name.as_deref()) {
        Some("") => return Err(refused(ClaimProblem::EmptyClassName)),
        Some(name) => find_class(snapshot, name)
            .ok_or_else(|| refused(ClaimProblem::ClassMissing(name.to_owned())))?,
        None => default_class(snapshot).ok_or_else(|| refused(ClaimProblem::NoDefaultClass))?,
    };
    let class_name = class.metadata.name.as_deref().unwrap_or_default();
    if class.volume_binding_mode.as_deref() == Some(VOLUME_BINDING_IMMEDIATE) {
        return Err(refused(ClaimProblem::ImmediateBinding(
            class_name.to_owned(),
        )));
    }
    class_alternatives(class).map_err(|e| VolumeProblem::ClassTopology(class_name.to_owned(), e))
}

/// A PersistentVolume's required node-affinity terms, one alternative each; a term
/// without expressions adds none. For `local` and `hostPath` volumes the hostname
/// expressions are dropped, and a term left empty by that is kept as an
/// unconstrained alternative.
fn volume_alternatives(volume: &PersistentVolume) -> Result<Vec<Requirements>, RequirementError> {
    let Some(spec) = volume.spec.as_ref() else {
        return Ok(Vec::new());
    };
    let Some(selector) = spec
        .node_affinity
        .as_ref()
        .and_then(|a| a.required.as_ref())
    else {
        return Ok(Vec::new());
    };
    let node_local = spec.local.is_some() || spec.host_path.is_some();
    let mut alternatives = Vec::new();
    for term in &selector.node_selector_terms {
        let expressions = term.match_expressions.as_deref().unwrap_or_default();
        let kept: Vec<&NodeSelectorRequirement> = expressions
            .iter()
            .filter(|e| !(node_local && e.key == LABEL_HOSTNAME))
            .collect();
        if kept.is_empty() {
            if node_local && !expressions.is_empty() {
                alternatives.push(Requirements::new());
            }
            continue;
        }
        alternatives.push(Requirements::from_node_selector_requirements(kept)?);
    }
    Ok(alternatives)
}

/// A StorageClass's `allowedTopologies`, one alternative per entry, each
/// expression as `key In values`; an entry without expressions adds none.
fn class_alternatives(class: &StorageClass) -> Result<Vec<Requirements>, RequirementError> {
    let mut alternatives = Vec::new();
    for term in class.allowed_topologies.iter().flatten() {
        let expressions = term.match_label_expressions.as_deref().unwrap_or_default();
        if expressions.is_empty() {
            continue;
        }
        let as_selector: Vec<NodeSelectorRequirement> = expressions
            .iter()
            .map(|e| NodeSelectorRequirement {
                key: e.key.clone(),
                operator: "In".to_owned(),
                values: Some(e.values.clone()),
            })
            .collect();
        alternatives.push(Requirements::from_node_selector_requirements(&as_selector)?);
    }
    Ok(alternatives)
}

/// Every alternative so far merged with every alternative of the next volume, in
/// that order; only the pairs that intersect, unless none does.
fn cross(so_far: &[Requirements], next: &[Requirements]) -> Vec<Requirements> {
    let pairs = || {
        so_far
            .iter()
            .flat_map(|left| next.iter().map(move |right| (left, right)))
    };
    let merge = |(left, right): (&Requirements, &Requirements)| {
        let mut merged = left.clone();
        merged.add_all(right);
        merged
    };
    let compatible: Vec<Requirements> = pairs()
        .filter(|(left, right)| left.is_intersecting(right))
        .map(merge)
        .collect();
    if compatible.is_empty() {
        pairs().map(merge).collect()
    } else {
        compatible
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::{Value, json};

    use super::*;

    /// The alternatives, or the reason a plan would show.
    fn requirements_or_reason(snapshot: &Snapshot, pod: &Pod) -> Result<Vec<Requirements>, String> {
        volume_requirements(snapshot, pod).map_err(|e| e.to_string())
    }
    use crate::scheduling::{CAPACITY_TYPE_LABEL_KEY, LABEL_TOPOLOGY_ZONE, Requirement};

    const ZONE: &str = LABEL_TOPOLOGY_ZONE;

    fn zone_in(zones: &[&str]) -> Requirements {
        [Requirement::in_values(ZONE, zones)].into_iter().collect()
    }

    fn from<T: serde::de::DeserializeOwned>(value: Value) -> T {
        serde_json::from_value(value).expect("valid test object")
    }

    /// A pod in `default` with the given volumes.
    fn pod(name: &str, volumes: Value) -> Pod {
        from(json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app"}], "volumes": volumes},
        }))
    }

    fn pvc_volume(volume: &str, claim: &str) -> Value {
        json!({"name": volume, "persistentVolumeClaim": {"claimName": claim}})
    }

    /// A claim bound to `volume` (binding completed).
    fn bound_claim(name: &str, volume: &str) -> PersistentVolumeClaim {
        from(json!({
            "metadata": {
                "name": name, "namespace": "default",
                "annotations": {BIND_COMPLETED_ANNOTATION: "yes"},
            },
            "spec": {"volumeName": volume, "storageClassName": "standard"},
            "status": {"phase": "Bound"},
        }))
    }

    /// An unbound claim; `class` `None` leaves `storageClassName` out.
    fn unbound_claim(name: &str, class: Option<&str>) -> PersistentVolumeClaim {
        let mut spec = json!({});
        if let Some(class) = class {
            spec["storageClassName"] = json!(class);
        }
        from(json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
            "status": {"phase": "Pending"},
        }))
    }

    /// A CSI volume whose required node affinity has these terms.
    fn volume(name: &str, terms: Value) -> PersistentVolume {
        from(json!({
            "metadata": {"name": name},
            "spec": {
                "csi": {"driver": "test.driver", "volumeHandle": name},
                "nodeAffinity": {"required": {"nodeSelectorTerms": terms}},
            },
        }))
    }

    fn zone_term(zones: &[&str]) -> Value {
        json!({"matchExpressions": [{"key": ZONE, "operator": "In", "values": zones}]})
    }

    /// A WaitForFirstConsumer class with these allowedTopologies entries.
    fn class(name: &str, topologies: Value) -> StorageClass {
        from(json!({
            "metadata": {"name": name},
            "provisioner": "test-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowedTopologies": topologies,
        }))
    }

    fn zone_topology(zones: &[&str]) -> Value {
        json!({"matchLabelExpressions": [{"key": ZONE, "values": zones}]})
    }

    fn snapshot(
        claims: Vec<PersistentVolumeClaim>,
        volumes: Vec<PersistentVolume>,
        classes: Vec<StorageClass>,
    ) -> Snapshot {
        Snapshot {
            persistent_volume_claims: claims,
            persistent_volumes: volumes,
            storage_classes: classes,
            ..Snapshot::default()
        }
    }

    fn requirements(pairs: &[(&str, &[&str])]) -> Requirements {
        pairs
            .iter()
            .map(|(key, values)| Requirement::in_values(key, *values))
            .collect()
    }

    #[test]
    fn pod_without_claims_has_no_constraint() {
        let pod = pod(
            "web",
            json!([{"name": "scratch", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "c"}}]),
        );
        assert_eq!(
            requirements_or_reason(&Snapshot::default(), &pod),
            Ok(vec![])
        );
    }

    #[test]
    fn bound_volume_brings_its_zone_affinity() {
        let snapshot = snapshot(
            vec![bound_claim("data", "pv-1")],
            vec![volume("pv-1", json!([zone_term(&["test-zone-2"])]))],
            vec![],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![zone_in(&["test-zone-2"])])
        );
    }

    #[test]
    fn bound_volume_without_node_affinity_has_no_constraint() {
        let unpinned: PersistentVolume = from(json!({
            "metadata": {"name": "pv-1"},
            "spec": {"nfs": {"server": "fake.server", "path": "/x"}},
        }));
        let snapshot = snapshot(vec![bound_claim("data", "pv-1")], vec![unpinned], vec![]);
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert_eq!(requirements_or_reason(&snapshot, &pod), Ok(vec![]));
    }

    #[test]
    fn each_node_affinity_term_is_an_alternative() {
        let snapshot = snapshot(
            vec![bound_claim("data", "pv-1")],
            vec![volume(
                "pv-1",
                json!([zone_term(&["test-zone-1"]), zone_term(&["test-zone-2"])]),
            )],
            vec![],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![zone_in(&["test-zone-1"]), zone_in(&["test-zone-2"])])
        );
    }

    #[test]
    fn beta_zone_label_is_normalised() {
        let term = json!({"matchExpressions": [{
            "key": "failure-domain.beta.kubernetes.io/zone", "operator": "In", "values": ["test-zone-1"],
        }]});
        let snapshot = snapshot(
            vec![bound_claim("data", "pv-1")],
            vec![volume("pv-1", json!([term]))],
            vec![],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![zone_in(&["test-zone-1"])])
        );
    }

    #[test]
    fn unbound_claim_brings_allowed_topologies_one_alternative_per_entry() {
        let snapshot = snapshot(
            vec![unbound_claim("data", Some("zonal"))],
            vec![],
            vec![class(
                "zonal",
                json!([
                    zone_topology(&["test-zone-3"]),
                    zone_topology(&["test-zone-1", "test-zone-2"]),
                    {}
                ]),
            )],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![
                zone_in(&["test-zone-3"]),
                zone_in(&["test-zone-1", "test-zone-2"])
            ])
        );
    }

    #[test]
    fn storage_class_without_allowed_topologies_has_no_constraint() {
        let snapshot = snapshot(
            vec![unbound_claim("data", Some("anywhere"))],
            vec![],
            vec![class("anywhere", Value::Null)],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert_eq!(requirements_or_reason(&snapshot, &pod), Ok(vec![]));
    }

    #[test]
    fn claim_without_class_uses_the_newest_default_class() {
        let mut old_default = class("old-default", json!([zone_topology(&["test-zone-1"])]));
        old_default.metadata.annotations = Some(
            [(DEFAULT_CLASS_ANNOTATION.to_owned(), "true".to_owned())]
                .into_iter()
                .collect(),
        );
        old_default.metadata.creation_timestamp = Some(from(json!("2024-01-01T00:00:00Z")));
        let mut new_default = class("new-default", json!([zone_topology(&["test-zone-3"])]));
        new_default.metadata.annotations = old_default.metadata.annotations.clone();
        new_default.metadata.creation_timestamp = Some(from(json!("2024-06-01T00:00:00Z")));
        let not_default = class("other", json!([zone_topology(&["test-zone-2"])]));
        let snapshot = snapshot(
            vec![unbound_claim("data", None)],
            vec![],
            vec![old_default, not_default, new_default],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![zone_in(&["test-zone-3"])])
        );
    }

    #[test]
    fn claim_without_class_and_no_default_is_an_error() {
        let snapshot = snapshot(
            vec![unbound_claim("data", None)],
            vec![],
            vec![class("other", json!([zone_topology(&["test-zone-2"])]))],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
        assert!(error.contains("no default storageclass"), "{error}");
    }

    #[test]
    fn unbound_claim_with_empty_class_name_is_an_error() {
        let snapshot = snapshot(vec![unbound_claim("data", Some(""))], vec![], vec![]);
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
        assert!(error.contains("storageClassName is empty"), "{error}");
    }

    #[test]
    fn unbound_claim_with_missing_class_is_an_error() {
        let snapshot = snapshot(vec![unbound_claim("data", Some("gone"))], vec![], vec![]);
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Err(
                "volume \"data\": persistentvolumeclaim \"default/data\" is unbound and its \
                 storageclass \"gone\" does not exist"
                    .to_owned()
            )
        );
    }

    #[test]
    fn bound_claim_ignores_its_class() {
        // Upstream schedules a bound claim whose StorageClass is missing.
        let snapshot = snapshot(
            vec![bound_claim("data", "pv-1")],
            vec![volume("pv-1", json!([zone_term(&["test-zone-1"])]))],
            vec![],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![zone_in(&["test-zone-1"])])
        );
    }

    #[test]
    fn unbound_claim_with_immediate_binding_is_an_error() {
        let mut immediate = class("fast", json!([zone_topology(&["test-zone-1"])]));
        immediate.volume_binding_mode = Some("Immediate".to_owned());
        let snapshot = snapshot(
            vec![unbound_claim("data", Some("fast"))],
            vec![],
            vec![immediate],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
        assert!(error.contains("volumeBindingMode Immediate"), "{error}");
    }

    #[test]
    fn unset_binding_mode_is_not_immediate() {
        // Upstream rejects only an explicit Immediate (the API server fills the
        // field in, so a manifest without it is read as written).
        let mut unset = class("plain", json!([zone_topology(&["test-zone-1"])]));
        unset.volume_binding_mode = None;
        let snapshot = snapshot(
            vec![unbound_claim("data", Some("plain"))],
            vec![],
            vec![unset],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![zone_in(&["test-zone-1"])])
        );
    }

    #[test]
    fn missing_claim_is_an_error() {
        let pod = pod("web", json!([pvc_volume("data", "nowhere")]));
        assert_eq!(
            requirements_or_reason(&Snapshot::default(), &pod),
            Err("volume \"data\": persistentvolumeclaim \"default/nowhere\" not found".to_owned())
        );
    }

    #[test]
    fn claim_in_another_namespace_is_not_found() {
        let mut claim = bound_claim("data", "pv-1");
        claim.metadata.namespace = Some("other".to_owned());
        let snapshot = snapshot(
            vec![claim],
            vec![volume("pv-1", json!([zone_term(&["test-zone-1"])]))],
            vec![],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert!(requirements_or_reason(&snapshot, &pod).is_err());
    }

    #[test]
    fn deleting_claim_is_an_error() {
        let mut claim = unbound_claim("data", Some("zonal"));
        claim.metadata.deletion_timestamp = Some(from(json!("2024-01-01T00:00:00Z")));
        let snapshot = snapshot(
            vec![claim],
            vec![],
            vec![class("zonal", json!([zone_topology(&["test-zone-1"])]))],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
        assert!(error.contains("is being deleted"), "{error}");
    }

    #[test]
    fn lost_claim_is_an_error() {
        let mut claim = bound_claim("data", "pv-1");
        claim.status = Some(from(json!({"phase": "Lost"})));
        let snapshot = snapshot(vec![claim], vec![], vec![]);
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
        assert!(error.contains("is Lost"), "{error}");
    }

    #[test]
    fn claim_bound_to_missing_volume_is_an_error() {
        let snapshot = snapshot(vec![bound_claim("data", "pv-1")], vec![], vec![]);
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Err(
                "volume \"data\": persistentvolumeclaim \"default/data\" is bound to \
                 persistentvolume \"pv-1\", which does not exist"
                    .to_owned()
            )
        );
    }

    #[test]
    fn claim_bound_to_deleting_volume_is_an_error() {
        let mut pv = volume("pv-1", json!([zone_term(&["test-zone-1"])]));
        pv.metadata.deletion_timestamp = Some(from(json!("2024-01-01T00:00:00Z")));
        let snapshot = snapshot(vec![bound_claim("data", "pv-1")], vec![pv], vec![]);
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
        assert!(error.contains("which is being deleted"), "{error}");
    }

    #[test]
    fn claim_naming_a_volume_without_bind_completed_is_an_error() {
        let mut claim = bound_claim("data", "pv-1");
        claim.metadata.annotations = None;
        let snapshot = snapshot(
            vec![claim],
            vec![volume("pv-1", json!([zone_term(&["test-zone-1"])]))],
            vec![],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
        assert!(error.contains(BIND_COMPLETED_ANNOTATION), "{error}");
    }

    #[test]
    fn ephemeral_volume_uses_the_claim_named_after_pod_and_volume() {
        let snapshot = snapshot(
            vec![unbound_claim("web-scratch", Some("zonal"))],
            vec![],
            vec![class("zonal", json!([zone_topology(&["test-zone-3"])]))],
        );
        let pod = pod(
            "web",
            json!([{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]),
        );
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![zone_in(&["test-zone-3"])])
        );
        let error = requirements_or_reason(&Snapshot::default(), &pod).unwrap_err();
        assert!(
            error.contains("\"default/web-scratch\" not found"),
            "{error}"
        );
    }

    #[test]
    fn two_volumes_keep_compatible_pairs_first() {
        // a: [z1 or z2] | [z3]; b: [z3] | [z2]. Of the four pairs only (z1|z2, z2) and
        // (z3, z3) intersect; they are kept, in order.
        let snapshot = snapshot(
            vec![
                unbound_claim("a", Some("class-a")),
                unbound_claim("b", Some("class-b")),
            ],
            vec![],
            vec![
                class(
                    "class-a",
                    json!([
                        zone_topology(&["test-zone-1", "test-zone-2"]),
                        zone_topology(&["test-zone-3"])
                    ]),
                ),
                class(
                    "class-b",
                    json!([
                        zone_topology(&["test-zone-3"]),
                        zone_topology(&["test-zone-2"])
                    ]),
                ),
            ],
        );
        let pod = pod("web", json!([pvc_volume("a", "a"), pvc_volume("b", "b")]));
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![zone_in(&["test-zone-2"]), zone_in(&["test-zone-3"])])
        );
    }

    #[test]
    fn two_volumes_on_different_keys_multiply() {
        let capacity = |values: &[&str]| json!({"matchLabelExpressions": [{"key": CAPACITY_TYPE_LABEL_KEY, "values": values}]});
        let snapshot = snapshot(
            vec![
                bound_claim("a", "pv-a"),
                unbound_claim("b", Some("class-b")),
            ],
            vec![volume(
                "pv-a",
                json!([zone_term(&["test-zone-1"]), zone_term(&["test-zone-2"])]),
            )],
            vec![class(
                "class-b",
                json!([capacity(&["spot"]), capacity(&["on-demand"])]),
            )],
        );
        let pod = pod("web", json!([pvc_volume("a", "a"), pvc_volume("b", "b")]));
        let spot: &[&str] = &["spot"];
        let on_demand: &[&str] = &["on-demand"];
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![
                requirements(&[(ZONE, &["test-zone-1"]), (CAPACITY_TYPE_LABEL_KEY, spot)]),
                requirements(&[
                    (ZONE, &["test-zone-1"]),
                    (CAPACITY_TYPE_LABEL_KEY, on_demand)
                ]),
                requirements(&[(ZONE, &["test-zone-2"]), (CAPACITY_TYPE_LABEL_KEY, spot)]),
                requirements(&[
                    (ZONE, &["test-zone-2"]),
                    (CAPACITY_TYPE_LABEL_KEY, on_demand)
                ]),
            ])
        );
    }

    #[test]
    fn two_volumes_with_no_compatible_pair_keep_every_pair() {
        let snapshot = snapshot(
            vec![bound_claim("a", "pv-a"), bound_claim("b", "pv-b")],
            vec![
                volume("pv-a", json!([zone_term(&["test-zone-1"])])),
                volume(
                    "pv-b",
                    json!([zone_term(&["test-zone-2"]), zone_term(&["test-zone-3"])]),
                ),
            ],
            vec![],
        );
        let pod = pod("web", json!([pvc_volume("a", "a"), pvc_volume("b", "b")]));
        let alternatives = requirements_or_reason(&snapshot, &pod).unwrap();
        assert_eq!(alternatives.len(), 2);
        for alternative in &alternatives {
            // Both are the empty zone set: nothing can meet them.
            assert_eq!(alternative.get_defined(ZONE).map(Requirement::len), Some(0));
        }
    }

    #[test]
    fn a_volume_without_constraint_does_not_multiply() {
        let snapshot = snapshot(
            vec![
                bound_claim("a", "pv-a"),
                unbound_claim("b", Some("anywhere")),
            ],
            vec![volume("pv-a", json!([zone_term(&["test-zone-1"])]))],
            vec![class("anywhere", Value::Null)],
        );
        let pod = pod("web", json!([pvc_volume("a", "a"), pvc_volume("b", "b")]));
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![zone_in(&["test-zone-1"])])
        );
    }

    #[test]
    fn local_volume_drops_hostname_affinity() {
        let mut local = volume(
            "pv-local",
            json!([
                {"matchExpressions": [
                    {"key": LABEL_HOSTNAME, "operator": "In", "values": ["old-node"]},
                    {"key": ZONE, "operator": "In", "values": ["test-zone-1"]},
                ]},
                {"matchExpressions": [
                    {"key": LABEL_HOSTNAME, "operator": "In", "values": ["old-node"]},
                ]},
            ]),
        );
        let spec = local.spec.as_mut().unwrap();
        spec.csi = None;
        spec.local = Some(from(json!({"path": "/mnt/local-disks"})));
        let snapshot = snapshot(vec![bound_claim("data", "pv-local")], vec![local], vec![]);
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        // The mixed term keeps its zone; the hostname-only term becomes an
        // unconstrained alternative.
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![zone_in(&["test-zone-1"]), Requirements::new()])
        );
    }

    #[test]
    fn host_path_volume_drops_hostname_affinity() {
        let mut host_path = volume(
            "pv-host",
            json!([{"matchExpressions": [
                {"key": LABEL_HOSTNAME, "operator": "In", "values": ["old-node"]},
            ]}]),
        );
        let spec = host_path.spec.as_mut().unwrap();
        spec.csi = None;
        spec.host_path = Some(from(json!({"path": "/mnt/disks"})));
        let snapshot = snapshot(
            vec![bound_claim("data", "pv-host")],
            vec![host_path],
            vec![],
        );
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![Requirements::new()])
        );
    }

    #[test]
    fn network_volume_keeps_hostname_affinity() {
        let pinned = volume(
            "pv-1",
            json!([{"matchExpressions": [
                {"key": LABEL_HOSTNAME, "operator": "In", "values": ["old-node"]},
            ]}]),
        );
        let snapshot = snapshot(vec![bound_claim("data", "pv-1")], vec![pinned], vec![]);
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        assert_eq!(
            requirements_or_reason(&snapshot, &pod),
            Ok(vec![requirements(&[(LABEL_HOSTNAME, &["old-node"])])])
        );
    }

    #[test]
    fn invalid_node_affinity_is_an_error() {
        let broken = volume(
            "pv-1",
            json!([{"matchExpressions": [{"key": ZONE, "operator": "Near", "values": ["x"]}]}]),
        );
        let snapshot = snapshot(vec![bound_claim("data", "pv-1")], vec![broken], vec![]);
        let pod = pod("web", json!([pvc_volume("data", "data")]));
        let error = requirements_or_reason(&snapshot, &pod).unwrap_err();
        assert!(
            error.contains("persistentvolume \"pv-1\" node affinity"),
            "{error}"
        );
    }
}
