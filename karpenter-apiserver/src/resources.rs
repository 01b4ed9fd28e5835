//! The kinds the server serves: plural → kind, scope and status subresource.

/// What becomes of `.status` when a client creates an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusOnCreate {
    /// The status is stored as sent (Nodes, kinds without a status subresource).
    Keep,
    /// The status is dropped (custom resources with a status subresource,
    /// DaemonSets, PodDisruptionBudgets, PersistentVolumeClaims).
    Drop,
    /// The status becomes `{"phase":"Pending"}` (Pods, PersistentVolumes).
    Pending,
}

/// A kind of object the server serves, addressed by its group and plural.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceType {
    /// The API group, empty for the core group.
    pub group: String,
    /// The served version (`v1`, `v1beta1`).
    pub version: String,
    /// The plural used in paths (`nodeclaims`).
    pub plural: String,
    /// The kind (`NodeClaim`).
    pub kind: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Whether `.status` is written through the `/status` subresource only.
    pub status_subresource: bool,
    /// Whether this is a custom resource (list items keep apiVersion and kind).
    pub custom: bool,
    /// What happens to `.status` on create.
    pub status_on_create: StatusOnCreate,
}

impl ResourceType {
    /// A cluster-scoped built-in kind without a status subresource; refine it
    /// with [`namespaced`](Self::namespaced), [`with_status`](Self::with_status)
    /// and [`custom`](Self::custom).
    pub fn new(group: &str, version: &str, kind: &str, plural: &str) -> Self {
        Self {
            group: group.to_owned(),
            version: version.to_owned(),
            plural: plural.to_owned(),
            kind: kind.to_owned(),
            namespaced: false,
            status_subresource: false,
            custom: false,
            status_on_create: StatusOnCreate::Keep,
        }
    }

    /// Objects of this kind live in namespaces.
    #[must_use]
    pub fn namespaced(mut self) -> Self {
        self.namespaced = true;
        self
    }

    /// This kind has a `/status` subresource; `on_create` says what a create
    /// does with the status it is sent.
    #[must_use]
    pub fn with_status(mut self, on_create: StatusOnCreate) -> Self {
        self.status_subresource = true;
        self.status_on_create = on_create;
        self
    }

    /// This kind is a custom resource (a CRD).
    #[must_use]
    pub fn custom(mut self) -> Self {
        self.custom = true;
        self
    }

    /// `v1` for the core group, `group/version` otherwise.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The resource as error messages name it: `pods`, `nodeclaims.karpenter.sh`.
    pub fn qualified_plural(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// The kinds served by default: what karpenter reads and writes.
    pub fn defaults() -> Vec<Self> {
        use StatusOnCreate::{Drop, Keep, Pending};
        vec![
            Self::new("", "v1", "Node", "nodes").with_status(Keep),
            Self::new("", "v1", "Pod", "pods")
                .namespaced()
                .with_status(Pending),
            Self::new("", "v1", "PersistentVolume", "persistentvolumes").with_status(Pending),
            Self::new("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims")
                .namespaced()
                .with_status(Drop),
            Self::new("", "v1", "Event", "events").namespaced(),
            Self::new("", "v1", "Namespace", "namespaces").with_status(Keep),
            Self::new("", "v1", "PodTemplate", "podtemplates").namespaced(),
            Self::new("apps", "v1", "DaemonSet", "daemonsets")
                .namespaced()
                .with_status(Drop),
            Self::new("apps", "v1", "Deployment", "deployments")
                .namespaced()
                .with_status(Drop),
            Self::new("apps", "v1", "StatefulSet", "statefulsets")
                .namespaced()
                .with_status(Drop),
            Self::new("apps", "v1", "ReplicaSet", "replicasets")
                .namespaced()
                .with_status(Drop),
            Self::new(
                "policy",
                "v1",
                "PodDisruptionBudget",
                "poddisruptionbudgets",
            )
            .namespaced()
            .with_status(Drop),
            Self::new("storage.k8s.io", "v1", "StorageClass", "storageclasses"),
            Self::new("storage.k8s.io", "v1", "CSINode", "csinodes"),
            Self::new("coordination.k8s.io", "v1", "Lease", "leases").namespaced(),
            Self::new("events.k8s.io", "v1", "Event", "events").namespaced(),
            Self::new("karpenter.sh", "v1", "NodePool", "nodepools")
                .with_status(Drop)
                .custom(),
            Self::new("karpenter.sh", "v1", "NodeClaim", "nodeclaims")
                .with_status(Drop)
                .custom(),
            Self::new("karpenter.sh", "v1alpha1", "NodeOverlay", "nodeoverlays")
                .with_status(Drop)
                .custom(),
            Self::new(
                "autoscaling.x-k8s.io",
                "v1beta1",
                "CapacityBuffer",
                "capacitybuffers",
            )
            .namespaced()
            .with_status(Drop)
            .custom(),
            Self::new(
                "karpenter.azure.com",
                "v1beta1",
                "AKSNodeClass",
                "aksnodeclasses",
            )
            .with_status(Drop)
            .custom(),
            Self::new("karpenter.k8s.aws", "v1", "EC2NodeClass", "ec2nodeclasses")
                .with_status(Drop)
                .custom(),
        ]
    }
}
