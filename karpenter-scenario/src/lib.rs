//! Reading scenarios: the Kubernetes manifests `karpenter-sim` and
//! `karpenter-controller` take, and the traces a replay follows, into the
//! karpenter engine's typed objects and snapshots.
//!
//! Newcomers start with [`Scenario`]: [`Scenario::load_files`] (or
//! [`Scenario::from_str`]) reads the files, then [`Scenario::to_snapshot`] makes
//! the engine's [`Snapshot`](karpenter_core::Snapshot) with the instance types of
//! the fake cloud's `InstanceType` documents ([`Scenario::fake_instance_types`])
//! or of Azure's catalog ([`Scenario::azure_instance_types`]) or AWS's
//! ([`Scenario::aws_instance_types`]). [`Trace`] reads a
//! replay's trace. Errors ([`LoadError`]) name the file, the document and the
//! field. The umbrella crate re-exports this one as `karpenter::scenario`.
//!
//! A scenario is a set of files, each holding YAML documents (`---`), `kind: List`
//! documents (what `kubectl get -o yaml` prints) or JSON (`kubectl get -o json`: one
//! object, a `List`, or an array). Every document of a kind the engine reads becomes
//! a typed object; any other kind is skipped with a [`Warning`]. `docs/cli.md`
//! lists the documents read and what each means to the engine.
//!
//! Documents are deserialized straight into their typed objects, with no generic
//! value in between. When a document names its `apiVersion` and `kind` after other
//! fields (never in what `kubectl` prints, which sorts keys), a quick first pass over
//! the file finds every document's kind, and the file is read again with them.
//!
//! A big file that is one list (what `kubectl get -o json|yaml` prints of a cluster)
//! has its items read on several threads, to the same objects in the same order; a
//! list that does not read cleanly so is read whole, which gives the same error.
//!
//! Inside, a file is read in steps, one module each: `limits` (how much is
//! read) and `aliases` (what YAML aliases expand to), `parse` (bytes into
//! documents), `state` and `document` (each document by its kind), `split` and
//! `parallel` (a big list's items on several threads), `gates` (kinds behind
//! feature gates), `validate` (field values serde cannot check), then
//! `snapshot`, `azure` and `aws` (the objects as the engine's snapshot); `trace` is
//! the replay's trace document.
//!
//! ```
//! use karpenter_scenario::{LoadOptions, Scenario};
//!
//! let yaml = r#"
//! apiVersion: v1
//! kind: Pod
//! metadata: {name: web-0, namespace: default}
//! spec:
//!   containers: [{name: app, resources: {requests: {cpu: 250m}}}]
//! "#;
//! let scenario = Scenario::from_str("inline.yaml", yaml, &LoadOptions::default()).unwrap();
//! assert_eq!(scenario.pods.len(), 1);
//! assert_eq!(scenario.pods[0].metadata.name.as_deref(), Some("web-0"));
//! ```

mod aliases;
pub mod aws;
mod azure;
mod document;
mod error;
mod gates;
mod limits;
mod parallel;
mod parse;
mod snapshot;
mod split;
mod state;
mod trace;
mod validate;

use std::fmt;
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, PodTemplate,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use karpenter_aws::EC2NodeClass;
use karpenter_azure::AKSNodeClass;
use karpenter_core::api::{CapacityBuffer, NodeClaim, NodeOverlay, NodePool};
use karpenter_core::pods::PodInfo;
use karpenter_fake::InstanceTypeDocument;

pub use aws::{AwsInstanceTypes, default_ec2_node_class, parse_spot_prices, read_spot_prices};
pub use azure::AzureInstanceTypes;
pub use document::{Kind, Object};
pub use error::LoadError;
pub use limits::LoadOptions;
pub use trace::{Action, At, DeploymentRef, TRACE_API_VERSION, Trace, TraceEvent};

/// Where an object was read from: the file, the document in it and, for a document
/// that is a list, the item in that list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Source {
    /// The file's name as given (`-` for standard input).
    pub file: Arc<str>,
    /// The document's number in the file, counting from 1 (empty documents are not
    /// counted).
    pub document: usize,
    /// The item's index in a `List` document, counting from 0.
    pub item: Option<usize>,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, document {}", self.file, self.document)?;
        if let Some(item) = self.item {
            write!(f, ", item {item}")?;
        }
        Ok(())
    }
}

/// An object with the place it was read from, so that later errors can name it.
/// Dereferences to the object.
#[derive(Clone, Debug, PartialEq)]
pub struct Sourced<T> {
    /// The object.
    pub object: T,
    /// Where it was read from.
    pub source: Source,
}

impl<T> Deref for Sourced<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.object
    }
}

/// Something in the input that was not read, said on standard error by
/// `karpenter-sim`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Where it is.
    pub source: Source,
    /// What was skipped and why.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source, self.message)
    }
}

/// Every object read from a scenario's files, by kind, in input order.
#[derive(Clone, Debug, Default)]
pub struct Scenario {
    /// `v1` `Pod`: pending pods, bound pods and daemon pods alike. Shared, as the
    /// engine's [`Snapshot`](karpenter_core::Snapshot) holds them: a snapshot of the
    /// scenario points at these pods rather than copying them.
    pub pods: Vec<Sourced<Arc<PodInfo>>>,
    /// `v1` `Node`.
    pub nodes: Vec<Sourced<Node>>,
    /// `karpenter.sh/v1` `NodePool`.
    pub node_pools: Vec<Sourced<NodePool>>,
    /// `karpenter.sh/v1` `NodeClaim`.
    pub node_claims: Vec<Sourced<NodeClaim>>,
    /// `apps/v1` `DaemonSet`.
    pub daemon_sets: Vec<Sourced<DaemonSet>>,
    /// `policy/v1` `PodDisruptionBudget`.
    pub pod_disruption_budgets: Vec<Sourced<PodDisruptionBudget>>,
    /// `v1` `PersistentVolumeClaim`.
    pub persistent_volume_claims: Vec<Sourced<PersistentVolumeClaim>>,
    /// `v1` `PersistentVolume`.
    pub persistent_volumes: Vec<Sourced<PersistentVolume>>,
    /// `storage.k8s.io/v1` `StorageClass`.
    pub storage_classes: Vec<Sourced<StorageClass>>,
    /// `storage.k8s.io/v1` `CSINode`.
    pub csi_nodes: Vec<Sourced<CSINode>>,
    /// `v1` `Namespace`.
    pub namespaces: Vec<Sourced<Namespace>>,
    /// `karpenter.azure.com/v1beta1` `AKSNodeClass`.
    pub aks_node_classes: Vec<Sourced<AKSNodeClass>>,
    /// `karpenter.k8s.aws/v1` `EC2NodeClass`, checked against its CRD's
    /// rules by [`Scenario::validate`].
    pub ec2_node_classes: Vec<Sourced<EC2NodeClass>>,
    /// `karpenter.fake/v1alpha1` `InstanceType`.
    pub instance_types: Vec<Sourced<InstanceTypeDocument>>,
    /// `karpenter.sh/v1alpha1` `NodeOverlay` (only with the `NodeOverlay`
    /// feature gate on; applied to the instance types when a snapshot is made).
    pub node_overlays: Vec<Sourced<NodeOverlay>>,
    /// `autoscaling.x-k8s.io/v1beta1` `CapacityBuffer` (only with the
    /// `CapacityBuffer` feature gate on; resolved against the PodTemplates
    /// and workloads below when a snapshot is made).
    pub capacity_buffers: Vec<Sourced<CapacityBuffer>>,
    /// `v1` `PodTemplate`: templates a CapacityBuffer's `podTemplateRef` may
    /// name.
    pub pod_templates: Vec<Sourced<PodTemplate>>,
    /// `apps/v1` `Deployment`: workloads a CapacityBuffer's `scalableRef` may
    /// name. Planning reads their pods from the Pod documents; a replay
    /// (`karpenter::replay`) runs them, making their missing replicas.
    pub deployments: Vec<Sourced<Deployment>>,
    /// `apps/v1` `StatefulSet`, as [`deployments`](Self::deployments).
    pub stateful_sets: Vec<Sourced<StatefulSet>>,
    /// `apps/v1` `ReplicaSet`, as [`deployments`](Self::deployments).
    pub replica_sets: Vec<Sourced<ReplicaSet>>,
    /// Documents that were skipped, with why.
    pub warnings: Vec<Warning>,
}

impl Scenario {
    /// Reads every file in order (`-` is standard input) into one scenario, then
    /// checks the objects' fields (quantities, requirements, budgets, ...): what
    /// [`Scenario::read_files`] then [`Scenario::validate`] do.
    pub fn load_files<P: AsRef<Path>>(
        paths: &[P],
        options: &LoadOptions,
    ) -> Result<Scenario, LoadError> {
        let scenario = Scenario::read_files(paths, options)?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Reads every file in order (`-` is standard input) into one scenario without
    /// checking the values of its fields; call [`Scenario::validate`] before using it.
    pub fn read_files<P: AsRef<Path>>(
        paths: &[P],
        options: &LoadOptions,
    ) -> Result<Scenario, LoadError> {
        let mut scenario = Scenario::default();
        for path in paths {
            let (name, bytes) = limits::read_input(path.as_ref(), options)?;
            scenario.read_bytes(name, &bytes, options)?;
        }
        Ok(scenario)
    }

    /// Reads one file's text, named `name` in errors, and checks the objects.
    pub fn from_str(name: &str, text: &str, options: &LoadOptions) -> Result<Scenario, LoadError> {
        let mut scenario = Scenario::default();
        limits::check_size(name, text.len() as u64, options)?;
        scenario.read_bytes(Arc::from(name), text.as_bytes(), options)?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// How many objects were read, over every kind.
    pub fn object_count(&self) -> usize {
        Kind::ALL.into_iter().map(|kind| self.count(kind)).sum()
    }

    /// How many objects of a kind were read.
    pub fn count(&self, kind: Kind) -> usize {
        match kind {
            Kind::Pod => self.pods.len(),
            Kind::Node => self.nodes.len(),
            Kind::NodePool => self.node_pools.len(),
            Kind::NodeClaim => self.node_claims.len(),
            Kind::DaemonSet => self.daemon_sets.len(),
            Kind::PodDisruptionBudget => self.pod_disruption_budgets.len(),
            Kind::PersistentVolumeClaim => self.persistent_volume_claims.len(),
            Kind::PersistentVolume => self.persistent_volumes.len(),
            Kind::StorageClass => self.storage_classes.len(),
            Kind::CSINode => self.csi_nodes.len(),
            Kind::Namespace => self.namespaces.len(),
            Kind::AKSNodeClass => self.aks_node_classes.len(),
            Kind::EC2NodeClass => self.ec2_node_classes.len(),
            Kind::InstanceType => self.instance_types.len(),
            Kind::NodeOverlay => self.node_overlays.len(),
            Kind::CapacityBuffer => self.capacity_buffers.len(),
            Kind::PodTemplate => self.pod_templates.len(),
            Kind::Deployment => self.deployments.len(),
            Kind::StatefulSet => self.stateful_sets.len(),
            Kind::ReplicaSet => self.replica_sets.len(),
        }
    }

    fn read_bytes(
        &mut self,
        file: Arc<str>,
        bytes: &[u8],
        options: &LoadOptions,
    ) -> Result<(), LoadError> {
        let parsed = parse::parse_file(&file, bytes, options)?;
        // Each kind's list grows once: a list of 75,000 pods holds 190 MB, which
        // growing by doubling would copy and fault in twice over.
        let mut counts = [0usize; Kind::ALL.len()];
        for (_, parsed) in &parsed {
            if let document::Parsed::Object(object) = parsed {
                counts[object.kind() as usize] += 1;
            }
        }
        for kind in Kind::ALL {
            self.reserve(kind, counts[kind as usize]);
        }
        for (source, parsed) in parsed {
            match parsed {
                document::Parsed::Object(object) => {
                    match gates::skipped(&object, options.feature_gates) {
                        Some(message) => self.warnings.push(Warning { source, message }),
                        None => self.push(object, source),
                    }
                }
                document::Parsed::Skipped(message) => {
                    self.warnings.push(Warning { source, message })
                }
            }
        }
        Ok(())
    }

    fn reserve(&mut self, kind: Kind, additional: usize) {
        match kind {
            Kind::Pod => self.pods.reserve(additional),
            Kind::Node => self.nodes.reserve(additional),
            Kind::NodePool => self.node_pools.reserve(additional),
            Kind::NodeClaim => self.node_claims.reserve(additional),
            Kind::DaemonSet => self.daemon_sets.reserve(additional),
            Kind::PodDisruptionBudget => self.pod_disruption_budgets.reserve(additional),
            Kind::PersistentVolumeClaim => self.persistent_volume_claims.reserve(additional),
            Kind::PersistentVolume => self.persistent_volumes.reserve(additional),
            Kind::StorageClass => self.storage_classes.reserve(additional),
            Kind::CSINode => self.csi_nodes.reserve(additional),
            Kind::Namespace => self.namespaces.reserve(additional),
            Kind::AKSNodeClass => self.aks_node_classes.reserve(additional),
            Kind::EC2NodeClass => self.ec2_node_classes.reserve(additional),
            Kind::InstanceType => self.instance_types.reserve(additional),
            Kind::NodeOverlay => self.node_overlays.reserve(additional),
            Kind::CapacityBuffer => self.capacity_buffers.reserve(additional),
            Kind::PodTemplate => self.pod_templates.reserve(additional),
            Kind::Deployment => self.deployments.reserve(additional),
            Kind::StatefulSet => self.stateful_sets.reserve(additional),
            Kind::ReplicaSet => self.replica_sets.reserve(additional),
        }
    }

    fn push(&mut self, object: Object, source: Source) {
        fn put<T>(list: &mut Vec<Sourced<T>>, object: T, source: Source) {
            list.push(Sourced { object, source });
        }
        match object {
            Object::Pod(o) => put(&mut self.pods, o, source),
            Object::Node(o) => put(&mut self.nodes, *o, source),
            Object::NodePool(o) => put(&mut self.node_pools, *o, source),
            Object::NodeClaim(o) => put(&mut self.node_claims, *o, source),
            Object::DaemonSet(o) => put(&mut self.daemon_sets, *o, source),
            Object::PodDisruptionBudget(o) => put(&mut self.pod_disruption_budgets, *o, source),
            Object::PersistentVolumeClaim(o) => put(&mut self.persistent_volume_claims, *o, source),
            Object::PersistentVolume(o) => put(&mut self.persistent_volumes, *o, source),
            Object::StorageClass(o) => put(&mut self.storage_classes, *o, source),
            Object::CSINode(o) => put(&mut self.csi_nodes, *o, source),
            Object::Namespace(o) => put(&mut self.namespaces, *o, source),
            Object::AKSNodeClass(o) => put(&mut self.aks_node_classes, *o, source),
            Object::EC2NodeClass(o) => put(&mut self.ec2_node_classes, *o, source),
            Object::InstanceType(o) => put(&mut self.instance_types, *o, source),
            Object::NodeOverlay(o) => put(&mut self.node_overlays, *o, source),
            Object::CapacityBuffer(o) => put(&mut self.capacity_buffers, *o, source),
            Object::PodTemplate(o) => put(&mut self.pod_templates, *o, source),
            Object::Deployment(o) => put(&mut self.deployments, *o, source),
            Object::StatefulSet(o) => put(&mut self.stateful_sets, *o, source),
            Object::ReplicaSet(o) => put(&mut self.replica_sets, *o, source),
        }
    }
}
