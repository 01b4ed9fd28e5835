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
mod tests;
