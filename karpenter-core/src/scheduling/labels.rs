//! Well-known, restricted and aliased label keys, after upstream's
//! `pkg/apis/v1/labels.go`.

use std::sync::LazyLock;

use super::error::RequirementError;

/// Karpenter's API group, also the label domain it reserves for itself.
pub const KARPENTER_GROUP: &str = "karpenter.sh";

/// The NodePool that owns a node.
pub const NODE_POOL_LABEL_KEY: &str = "karpenter.sh/nodepool";
/// Set to `"true"` once a node has registered with the cluster.
pub const NODE_REGISTERED_LABEL_KEY: &str = "karpenter.sh/registered";
/// Set to `"true"` once a node is initialized (ready, startup taints gone).
pub const NODE_INITIALIZED_LABEL_KEY: &str = "karpenter.sh/initialized";
/// Opts a node out of taint synchronisation from its NodeClaim.
pub const NODE_DO_NOT_SYNC_TAINTS_LABEL_KEY: &str = "karpenter.sh/do-not-sync-taints";
/// The capacity type of a node: `spot`, `on-demand` or `reserved`.
pub const CAPACITY_TYPE_LABEL_KEY: &str = "karpenter.sh/capacity-type";

/// Pod and node annotation that blocks voluntary disruption.
pub const DO_NOT_DISRUPT_ANNOTATION_KEY: &str = "karpenter.sh/do-not-disrupt";
/// NodeClaim annotation holding the hash of the NodePool template it came from.
pub const NODE_POOL_HASH_ANNOTATION_KEY: &str = "karpenter.sh/nodepool-hash";
/// NodeClaim annotation holding the version of the hashing scheme.
pub const NODE_POOL_HASH_VERSION_ANNOTATION_KEY: &str = "karpenter.sh/nodepool-hash-version";
/// The value of [`NODE_POOL_HASH_VERSION_ANNOTATION_KEY`] that goes with the
/// hash [`NodePool::template_hash`](crate::api::NodePool::template_hash)
/// computes.
///
/// Upstream writes its own versions (`v1` to `v3` so far) next to a hash of
/// Go structs that this crate does not reproduce. A version of our own, which
/// no upstream version can equal, makes a NodeClaim hashed by upstream count
/// as hashed by another scheme: it is re-hashed
/// ([`NodePool::rehash_claim`](crate::api::NodePool::rehash_claim)), never
/// drifted by the difference. Bump it whenever the hash of an unchanged
/// template would change.
pub const NODE_POOL_HASH_VERSION: &str = "rs-v1";
/// NodeClaim annotation holding the time by which the node must be terminated.
pub const NODE_CLAIM_TERMINATION_TIMESTAMP_ANNOTATION_KEY: &str =
    "karpenter.sh/nodeclaim-termination-timestamp";
/// NodeClaim annotation recording that `minValues` was relaxed to launch it.
pub const NODE_CLAIM_MIN_VALUES_RELAXED_ANNOTATION_KEY: &str =
    "karpenter.sh/nodeclaim-min-values-relaxed";
/// Finalizer that holds a node or NodeClaim until its instance is terminated.
pub const TERMINATION_FINALIZER: &str = "karpenter.sh/termination";

/// The zone a node runs in.
pub const LABEL_TOPOLOGY_ZONE: &str = "topology.kubernetes.io/zone";
/// The region a node runs in.
pub const LABEL_TOPOLOGY_REGION: &str = "topology.kubernetes.io/region";
/// The node's instance type.
pub const LABEL_INSTANCE_TYPE_STABLE: &str = "node.kubernetes.io/instance-type";
/// The node's CPU architecture (`amd64`, `arm64`).
pub const LABEL_ARCH_STABLE: &str = "kubernetes.io/arch";
/// The node's operating system (`linux`, `windows`).
pub const LABEL_OS_STABLE: &str = "kubernetes.io/os";
/// The Windows build of a Windows node.
pub const LABEL_WINDOWS_BUILD: &str = "node.kubernetes.io/windows-build";
/// The node's hostname; unique per node, hence restricted in NodePools.
pub const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";
/// The label the API server gives every Namespace, its own name (it cannot
/// be changed): what a `namespaceSelector` most often selects by.
pub const LABEL_NAMESPACE_NAME: &str = "kubernetes.io/metadata.name";

/// Deprecated alias of [`LABEL_TOPOLOGY_ZONE`].
pub const LABEL_FAILURE_DOMAIN_BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
/// Deprecated alias of [`LABEL_TOPOLOGY_REGION`].
pub const LABEL_FAILURE_DOMAIN_BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";
/// Deprecated alias of [`LABEL_ARCH_STABLE`].
pub const LABEL_ARCH_BETA: &str = "beta.kubernetes.io/arch";
/// Deprecated alias of [`LABEL_OS_STABLE`].
pub const LABEL_OS_BETA: &str = "beta.kubernetes.io/os";
/// Deprecated alias of [`LABEL_INSTANCE_TYPE_STABLE`].
pub const LABEL_INSTANCE_TYPE_BETA: &str = "beta.kubernetes.io/instance-type";

/// Value of [`LABEL_ARCH_STABLE`] for x86-64 nodes.
pub const ARCHITECTURE_AMD64: &str = "amd64";
/// Value of [`LABEL_ARCH_STABLE`] for 64-bit ARM nodes.
pub const ARCHITECTURE_ARM64: &str = "arm64";
/// Value of [`CAPACITY_TYPE_LABEL_KEY`] for spot capacity.
pub const CAPACITY_TYPE_SPOT: &str = "spot";
/// Value of [`CAPACITY_TYPE_LABEL_KEY`] for on-demand capacity.
pub const CAPACITY_TYPE_ON_DEMAND: &str = "on-demand";
/// Value of [`CAPACITY_TYPE_LABEL_KEY`] for reserved capacity.
pub const CAPACITY_TYPE_RESERVED: &str = "reserved";

/// The labels the core engine knows. Instance types and offerings supply their
/// values, so NodePools and pods may constrain them without defining them.
pub const CORE_WELL_KNOWN_LABELS: [&str; 8] = [
    NODE_POOL_LABEL_KEY,
    LABEL_TOPOLOGY_ZONE,
    LABEL_TOPOLOGY_REGION,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_ARCH_STABLE,
    LABEL_OS_STABLE,
    CAPACITY_TYPE_LABEL_KEY,
    LABEL_WINDOWS_BUILD,
];

/// The labels whose values come from offerings rather than instance types.
pub const WELL_KNOWN_LABELS_FOR_OFFERINGS: [&str; 2] =
    [LABEL_TOPOLOGY_ZONE, CAPACITY_TYPE_LABEL_KEY];

/// Labels that must not be used in NodePool requirements or pod selectors,
/// because the engine sets them per node.
pub const RESTRICTED_LABELS: [&str; 1] = [LABEL_HOSTNAME];

/// Label domains (and their subdomains) reserved by Karpenter. Well-known
/// labels inside them, such as [`NODE_POOL_LABEL_KEY`], stay allowed.
///
/// Upstream once also restricted `kubernetes.io` and `k8s.io` with exceptions
/// (`node-restriction.kubernetes.io`, `node.kubernetes.io`, `kops.k8s.io`);
/// kubernetes-sigs/karpenter#2586 dropped those, and this list follows it.
pub const RESTRICTED_LABEL_DOMAINS: [&str; 1] = [KARPENTER_GROUP];

/// Deprecated label keys and the stable keys they are read as.
pub const NORMALIZED_LABELS: [(&str, &str); 5] = [
    (LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_TOPOLOGY_ZONE),
    (LABEL_FAILURE_DOMAIN_BETA_REGION, LABEL_TOPOLOGY_REGION),
    (LABEL_ARCH_BETA, LABEL_ARCH_STABLE),
    (LABEL_OS_BETA, LABEL_OS_STABLE),
    (LABEL_INSTANCE_TYPE_BETA, LABEL_INSTANCE_TYPE_STABLE),
];

/// Maps a deprecated alias to its stable key and returns any other key as is.
///
/// ```
/// use karpenter_core::scheduling::normalize_label_key;
/// assert_eq!(normalize_label_key("failure-domain.beta.kubernetes.io/zone"), "topology.kubernetes.io/zone");
/// assert_eq!(normalize_label_key("team"), "team");
/// ```
pub fn normalize_label_key(key: &str) -> &str {
    NORMALIZED_LABELS
        .iter()
        .find(|(alias, _)| *alias == key)
        .map_or(key, |(_, stable)| stable)
}

/// The prefix of a label key before its `/`, or `""` when it has none.
pub fn label_domain(key: &str) -> &str {
    key.split_once('/').map_or("", |(domain, _)| domain)
}

/// The set of well-known label keys, which a cloud provider extends with its
/// own (Azure adds `karpenter.azure.com/sku-family`, for instance), together
/// with the values known to be valid for some of them.
///
/// The engine takes this set as a parameter wherever upstream consults its
/// process-wide `WellKnownLabels`, so that several providers can coexist.
///
/// ```
/// use karpenter_core::scheduling::WellKnownLabels;
/// let labels = WellKnownLabels::new().with("karpenter.azure.com/sku-family");
/// assert!(labels.contains("topology.kubernetes.io/zone"));
/// assert!(labels.contains("karpenter.azure.com/sku-family"));
/// assert!(!WellKnownLabels::empty().contains("topology.kubernetes.io/zone"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WellKnownLabels {
    /// Sorted and unique, so iteration (and the typo hints built from it) is
    /// deterministic and lookups are binary searches.
    keys: Vec<String>,
    /// Sorted by key; each value list sorted and unique.
    known_values: Vec<(String, Vec<String>)>,
}

static CORE: LazyLock<WellKnownLabels> = LazyLock::new(|| {
    WellKnownLabels::empty()
        .with_all(CORE_WELL_KNOWN_LABELS)
        .with_known_values(
            CAPACITY_TYPE_LABEL_KEY,
            [
                CAPACITY_TYPE_ON_DEMAND,
                CAPACITY_TYPE_SPOT,
                CAPACITY_TYPE_RESERVED,
            ],
        )
});

impl WellKnownLabels {
    /// The core set: [`CORE_WELL_KNOWN_LABELS`], with the capacity types as
    /// the known values of [`CAPACITY_TYPE_LABEL_KEY`].
    pub fn new() -> WellKnownLabels {
        CORE.clone()
    }

    /// A shared instance of the core set.
    pub fn core() -> &'static WellKnownLabels {
        &CORE
    }

    /// No well-known labels at all; passed to
    /// [`Requirements::compatible`](super::Requirements::compatible) it asks
    /// for strict compatibility, where every key must be defined.
    pub fn empty() -> WellKnownLabels {
        WellKnownLabels {
            keys: Vec::new(),
            known_values: Vec::new(),
        }
    }

    /// Adds a key; returns whether it was new.
    pub fn insert(&mut self, key: impl Into<String>) -> bool {
        let key = key.into();
        match self.keys.binary_search(&key) {
            Ok(_) => false,
            Err(at) => {
                self.keys.insert(at, key);
                true
            }
        }
    }

    /// The set with `key` added.
    #[must_use]
    pub fn with(mut self, key: impl Into<String>) -> WellKnownLabels {
        self.insert(key);
        self
    }

    /// The set with every key of `keys` added.
    #[must_use]
    pub fn with_all<I>(mut self, keys: I) -> WellKnownLabels
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.extend(keys);
        self
    }

    /// The set with `key` added and `values` recorded as its only valid
    /// values (upstream's `WellKnownValuesForRequirements`).
    #[must_use]
    pub fn with_known_values<I>(mut self, key: impl Into<String>, values: I) -> WellKnownLabels
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let key = key.into();
        let mut values: Vec<String> = values.into_iter().map(Into::into).collect();
        values.sort_unstable();
        values.dedup();
        self.insert(key.clone());
        match self.known_values.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(at) => self.known_values[at].1 = values,
            Err(at) => self.known_values.insert(at, (key, values)),
        }
        self
    }

    /// Whether `key` is well known.
    pub fn contains(&self, key: &str) -> bool {
        self.keys.binary_search_by(|k| k.as_str().cmp(key)).is_ok()
    }

    /// The valid values recorded for `key`, sorted, if any were.
    pub fn known_values(&self, key: &str) -> Option<&[String]> {
        self.known_values
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|at| self.known_values[at].1.as_slice())
    }

    /// The keys in ascending order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + Clone {
        self.keys.iter().map(String::as_str)
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

impl Default for WellKnownLabels {
    /// The core set, as [`WellKnownLabels::new`].
    fn default() -> Self {
        WellKnownLabels::new()
    }
}

impl<S: Into<String>> Extend<S> for WellKnownLabels {
    fn extend<I: IntoIterator<Item = S>>(&mut self, keys: I) {
        for key in keys {
            self.insert(key);
        }
    }
}

impl<S: Into<String>> FromIterator<S> for WellKnownLabels {
    /// A set of exactly these keys (the core set is not included).
    fn from_iter<I: IntoIterator<Item = S>>(keys: I) -> Self {
        WellKnownLabels::empty().with_all(keys)
    }
}

/// Whether a label is kept out of NodePool requirements and pod selectors:
/// [`RESTRICTED_LABELS`] and keys in a [`RESTRICTED_LABEL_DOMAINS`] domain or
/// subdomain, unless `well_known` contains the key.
///
/// The key is taken as given; normalise aliases first.
///
/// ```
/// use karpenter_core::scheduling::{check_restricted_label, WellKnownLabels};
/// let well_known = WellKnownLabels::core();
/// assert!(check_restricted_label("karpenter.sh/nodepool", well_known).is_ok());
/// assert!(check_restricted_label("team.karpenter.sh/owner", well_known).is_err());
/// assert!(check_restricted_label("kubernetes.io/hostname", well_known).is_err());
/// assert!(check_restricted_label("example.com/team", well_known).is_ok());
/// ```
pub fn check_restricted_label(
    key: &str,
    well_known: &WellKnownLabels,
) -> Result<(), RequirementError> {
    if well_known.contains(key) {
        return Ok(());
    }
    let domain = label_domain(key);
    let in_restricted_domain = RESTRICTED_LABEL_DOMAINS.iter().any(|restricted| {
        domain == *restricted
            || domain
                .strip_suffix(restricted)
                .is_some_and(|sub| sub.ends_with('.'))
    });
    if in_restricted_domain || RESTRICTED_LABELS.contains(&key) {
        return Err(RequirementError::RestrictedLabel {
            key: key.to_owned(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_every_beta_alias() {
        assert_eq!(
            normalize_label_key(LABEL_FAILURE_DOMAIN_BETA_ZONE),
            LABEL_TOPOLOGY_ZONE
        );
        assert_eq!(
            normalize_label_key(LABEL_FAILURE_DOMAIN_BETA_REGION),
            LABEL_TOPOLOGY_REGION
        );
        assert_eq!(normalize_label_key(LABEL_ARCH_BETA), LABEL_ARCH_STABLE);
        assert_eq!(normalize_label_key(LABEL_OS_BETA), LABEL_OS_STABLE);
        assert_eq!(
            normalize_label_key(LABEL_INSTANCE_TYPE_BETA),
            LABEL_INSTANCE_TYPE_STABLE
        );
        assert_eq!(
            normalize_label_key(LABEL_TOPOLOGY_ZONE),
            LABEL_TOPOLOGY_ZONE
        );
    }

    #[test]
    fn restricted_labels_follow_upstream() {
        let core = WellKnownLabels::core();
        for allowed in [
            NODE_POOL_LABEL_KEY,
            CAPACITY_TYPE_LABEL_KEY,
            LABEL_TOPOLOGY_ZONE,
            "node-restriction.kubernetes.io/team",
            "node.kubernetes.io/custom",
            "kubernetes.io/custom",
            "k8s.io/custom",
            "kops.k8s.io/instancegroup",
            "karpenter.k8s.aws/instance-family",
            "notkarpenter.sh/x",
            "team",
        ] {
            assert!(check_restricted_label(allowed, core).is_ok(), "{allowed}");
        }
        for restricted in [
            LABEL_HOSTNAME,
            "karpenter.sh/custom",
            NODE_INITIALIZED_LABEL_KEY,
            NODE_REGISTERED_LABEL_KEY,
            "sub.karpenter.sh/custom",
        ] {
            let error = check_restricted_label(restricted, core).unwrap_err();
            assert!(error.to_string().contains(restricted), "{error}");
        }
    }

    #[test]
    fn provider_keys_extend_the_set() {
        let mut labels = WellKnownLabels::new();
        assert!(labels.insert("karpenter.azure.com/sku-family"));
        assert!(!labels.insert("karpenter.azure.com/sku-family"));
        assert_eq!(labels.len(), CORE_WELL_KNOWN_LABELS.len() + 1);
        let keys: Vec<_> = labels.iter().collect();
        assert!(keys.windows(2).all(|pair| pair[0] < pair[1]));
        // A provider key inside the reserved domain becomes allowed.
        let labels = labels.with("karpenter.sh/reservation-id");
        assert!(check_restricted_label("karpenter.sh/reservation-id", &labels).is_ok());
    }

    #[test]
    fn known_values() {
        let core = WellKnownLabels::core();
        assert_eq!(
            core.known_values(CAPACITY_TYPE_LABEL_KEY),
            Some(
                &[
                    "on-demand".to_owned(),
                    "reserved".to_owned(),
                    "spot".to_owned()
                ][..]
            )
        );
        assert_eq!(core.known_values(LABEL_TOPOLOGY_ZONE), None);
        assert_eq!(label_domain("a.b/c"), "a.b");
        assert_eq!(label_domain("c"), "");
    }
}
