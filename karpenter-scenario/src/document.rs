//! One document of a scenario file, deserialized by its `apiVersion` and `kind`.
//!
//! The visitor reads `apiVersion` and `kind`, then hands the rest of the map to the
//! typed object's own deserializer, so a kubectl dump (whose keys are sorted, which
//! puts `apiVersion` and `kind` first) is read in one pass with no generic value in
//! between. A document that names its kind after other fields takes the kind from a
//! first pass over the file ([`super::state`]), so it is read exactly as it would be
//! with its kind first. A document with `items` is a list: each item is read the
//! same way.

use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, PodTemplate,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use karpenter_aws::EC2NodeClass;
use karpenter_azure::AKSNodeClass;
use karpenter_core::api::{CapacityBuffer, NodeClaim, NodeOverlay, NodePool};
use karpenter_core::pods::{PodInfo, PodInterner};
use karpenter_fake::InstanceTypeDocument;
use serde::de::value::{MapAccessDeserializer, MapDeserializer, StringDeserializer};
use serde::de::{
    self, DeserializeSeed, Deserializer, IgnoredAny, IntoDeserializer, MapAccess, SeqAccess,
    Visitor,
};
use serde::{Deserialize, de::Error as _};

use super::state;

/// A kind of object the engine reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `v1` `Pod`.
    Pod,
    /// `v1` `Node`.
    Node,
    /// `karpenter.sh/v1` `NodePool`.
    NodePool,
    /// `karpenter.sh/v1` `NodeClaim`.
    NodeClaim,
    /// `apps/v1` `DaemonSet`.
    DaemonSet,
    /// `policy/v1` `PodDisruptionBudget`.
    PodDisruptionBudget,
    /// `v1` `PersistentVolumeClaim`.
    PersistentVolumeClaim,
    /// `v1` `PersistentVolume`.
    PersistentVolume,
    /// `storage.k8s.io/v1` `StorageClass`.
    StorageClass,
    /// `storage.k8s.io/v1` `CSINode`: a node's volume attach limits.
    CSINode,
    /// `v1` `Namespace`: its labels, which `namespaceSelector`s select.
    Namespace,
    /// `karpenter.azure.com/v1beta1` `AKSNodeClass`.
    AKSNodeClass,
    /// `karpenter.k8s.aws/v1` `EC2NodeClass`.
    EC2NodeClass,
    /// `karpenter.fake/v1alpha1` `InstanceType`.
    InstanceType,
    /// `karpenter.sh/v1alpha1` `NodeOverlay` (read with the `NodeOverlay`
    /// feature gate on).
    NodeOverlay,
    /// `autoscaling.x-k8s.io/v1beta1` `CapacityBuffer`: headroom (read with
    /// the `CapacityBuffer` feature gate on).
    CapacityBuffer,
    /// `v1` `PodTemplate`: a template a CapacityBuffer may name.
    PodTemplate,
    /// `apps/v1` `Deployment`: a workload a CapacityBuffer may name (its pods
    /// are read from Pod documents, never made from it).
    Deployment,
    /// `apps/v1` `StatefulSet`: as a Deployment.
    StatefulSet,
    /// `apps/v1` `ReplicaSet`: as a Deployment.
    ReplicaSet,
}

impl Kind {
    /// Every kind, in the order a summary lists them.
    pub const ALL: [Kind; 20] = [
        Kind::NodePool,
        Kind::NodeClaim,
        Kind::Node,
        Kind::Namespace,
        Kind::Pod,
        Kind::DaemonSet,
        Kind::Deployment,
        Kind::StatefulSet,
        Kind::ReplicaSet,
        Kind::PodDisruptionBudget,
        Kind::PersistentVolumeClaim,
        Kind::PersistentVolume,
        Kind::StorageClass,
        Kind::CSINode,
        Kind::AKSNodeClass,
        Kind::EC2NodeClass,
        Kind::InstanceType,
        Kind::NodeOverlay,
        Kind::CapacityBuffer,
        Kind::PodTemplate,
    ];

    /// The `apiVersion` this kind is read at.
    pub fn api_version(self) -> &'static str {
        match self {
            Kind::Pod
            | Kind::Node
            | Kind::PersistentVolumeClaim
            | Kind::PersistentVolume
            | Kind::PodTemplate
            | Kind::Namespace => "v1",
            Kind::NodePool | Kind::NodeClaim => "karpenter.sh/v1",
            Kind::DaemonSet | Kind::Deployment | Kind::StatefulSet | Kind::ReplicaSet => "apps/v1",
            Kind::PodDisruptionBudget => "policy/v1",
            Kind::StorageClass | Kind::CSINode => "storage.k8s.io/v1",
            Kind::AKSNodeClass => AKSNodeClass::API_VERSION,
            Kind::EC2NodeClass => EC2NodeClass::API_VERSION,
            Kind::InstanceType => InstanceTypeDocument::API_VERSION,
            Kind::NodeOverlay => NodeOverlay::API_VERSION,
            Kind::CapacityBuffer => CapacityBuffer::API_VERSION,
        }
    }

    /// The `kind` field's value.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Pod => "Pod",
            Kind::Node => "Node",
            Kind::NodePool => "NodePool",
            Kind::NodeClaim => "NodeClaim",
            Kind::DaemonSet => "DaemonSet",
            Kind::PodDisruptionBudget => "PodDisruptionBudget",
            Kind::PersistentVolumeClaim => "PersistentVolumeClaim",
            Kind::PersistentVolume => "PersistentVolume",
            Kind::StorageClass => "StorageClass",
            Kind::CSINode => "CSINode",
            Kind::Namespace => "Namespace",
            Kind::AKSNodeClass => "AKSNodeClass",
            Kind::EC2NodeClass => "EC2NodeClass",
            Kind::InstanceType => "InstanceType",
            Kind::NodeOverlay => "NodeOverlay",
            Kind::CapacityBuffer => "CapacityBuffer",
            Kind::PodTemplate => "PodTemplate",
            Kind::Deployment => "Deployment",
            Kind::StatefulSet => "StatefulSet",
            Kind::ReplicaSet => "ReplicaSet",
        }
    }

    /// The kind named by `kind` (at any version), if the engine reads it.
    fn named(kind: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == kind)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A typed object read from a document.
#[derive(Clone, Debug)]
#[allow(missing_docs)] // each variant is the kind of the same name
pub enum Object {
    Pod(Arc<PodInfo>),
    Node(Box<Node>),
    NodePool(Box<NodePool>),
    NodeClaim(Box<NodeClaim>),
    DaemonSet(Box<DaemonSet>),
    PodDisruptionBudget(Box<PodDisruptionBudget>),
    PersistentVolumeClaim(Box<PersistentVolumeClaim>),
    PersistentVolume(Box<PersistentVolume>),
    StorageClass(Box<StorageClass>),
    CSINode(Box<CSINode>),
    Namespace(Box<Namespace>),
    AKSNodeClass(Box<AKSNodeClass>),
    EC2NodeClass(Box<EC2NodeClass>),
    InstanceType(Box<InstanceTypeDocument>),
    NodeOverlay(Box<NodeOverlay>),
    CapacityBuffer(Box<CapacityBuffer>),
    PodTemplate(Box<PodTemplate>),
    Deployment(Box<Deployment>),
    StatefulSet(Box<StatefulSet>),
    ReplicaSet(Box<ReplicaSet>),
}

impl Object {
    /// The object's kind.
    pub fn kind(&self) -> Kind {
        match self {
            Object::Pod(_) => Kind::Pod,
            Object::Node(_) => Kind::Node,
            Object::NodePool(_) => Kind::NodePool,
            Object::NodeClaim(_) => Kind::NodeClaim,
            Object::DaemonSet(_) => Kind::DaemonSet,
            Object::PodDisruptionBudget(_) => Kind::PodDisruptionBudget,
            Object::PersistentVolumeClaim(_) => Kind::PersistentVolumeClaim,
            Object::PersistentVolume(_) => Kind::PersistentVolume,
            Object::StorageClass(_) => Kind::StorageClass,
            Object::CSINode(_) => Kind::CSINode,
            Object::Namespace(_) => Kind::Namespace,
            Object::AKSNodeClass(_) => Kind::AKSNodeClass,
            Object::EC2NodeClass(_) => Kind::EC2NodeClass,
            Object::InstanceType(_) => Kind::InstanceType,
            Object::NodeOverlay(_) => Kind::NodeOverlay,
            Object::CapacityBuffer(_) => Kind::CapacityBuffer,
            Object::PodTemplate(_) => Kind::PodTemplate,
            Object::Deployment(_) => Kind::Deployment,
            Object::StatefulSet(_) => Kind::StatefulSet,
            Object::ReplicaSet(_) => Kind::ReplicaSet,
        }
    }
}

/// What one document (or one item of a list) turned into.
#[derive(Debug)]
pub(crate) enum Parsed {
    Object(Object),
    /// Not read; the message says what it was and why.
    Skipped(String),
}

/// Parsed objects with their item index when they came from a list.
pub(crate) type Items = Vec<(Option<usize>, Parsed)>;

/// Shares the specs of the pods among `items` with the equal ones `interner`
/// has seen: replicas of a template keep one spec between them.
pub(crate) fn share_pod_specs<'a>(
    items: impl IntoIterator<Item = &'a mut Parsed>,
    interner: &mut PodInterner,
) {
    for parsed in items {
        if let Parsed::Object(Object::Pod(pod)) = parsed {
            interner.intern(Arc::make_mut(pod));
        }
    }
}

/// The error a document that names its kind after other fields returns when no
/// first pass has found its kind yet; the parser then runs one and starts again.
pub(crate) const KIND_LAST: &str = "apiVersion and kind come after other fields";

/// One whole document, deserialized with the path of every field tracked so that an
/// error can name the field.
pub(crate) struct TrackedDocument(pub Items);

impl<'de> Deserialize<'de> for TrackedDocument {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        state::start_document();
        let mut track = serde_path_to_error::Track::new();
        let tracked = serde_path_to_error::Deserializer::new(deserializer, &mut track);
        match tracked.deserialize_any(DocumentVisitor) {
            Ok(items) => Ok(TrackedDocument(items)),
            Err(error) => {
                if let Some(path) = known_part(&track.path().to_string()) {
                    state::record_failed_path(path);
                }
                Err(error)
            }
        }
    }
}

/// The path up to its first segment that serde_path_to_error could not name (`?`,
/// as in a syntax error before any key), or `None` when nothing is named.
fn known_part(path: &str) -> Option<String> {
    let known: Vec<&str> = path
        .split('.')
        .take_while(|segment| *segment != "?")
        .filter(|segment| !segment.is_empty())
        .collect();
    (!known.is_empty()).then(|| known.join("."))
}

struct DocumentVisitor;

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = Items;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object (a map with apiVersion and kind), a List, or an array")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, seq: S) -> Result<Items, S::Error> {
        ItemsVisitor.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Items, A::Error> {
        let mut api_version: Option<String> = None;
        let mut kind: Option<String> = None;
        let mut items: Option<Items> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "apiVersion" => api_version = Some(map.next_value()?),
                "kind" => kind = Some(map.next_value()?),
                "items" => items = Some(map.next_value_seed(ItemsSeed)?),
                _ => {
                    if api_version.is_none() || kind.is_none() {
                        // Named after other fields: the first pass knows the kind.
                        let Some((hinted_version, hinted_kind)) = state::kind_hint() else {
                            return Err(A::Error::custom(KIND_LAST));
                        };
                        api_version = api_version.or(hinted_version);
                        kind = kind.or(hinted_kind);
                    }
                    if items.is_some() || kind.as_deref().is_some_and(is_list) {
                        // A list's metadata (resourceVersion, continue): nothing to read.
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                    let kind = kind.ok_or_else(|| A::Error::missing_field("kind"))?;
                    let api_version =
                        api_version.ok_or_else(|| A::Error::missing_field("apiVersion"))?;
                    let rest = Rest {
                        pending: Some(key),
                        map,
                    };
                    let parsed =
                        read_object(&api_version, &kind, MapAccessDeserializer::new(rest))?;
                    return Ok(vec![(None, parsed)]);
                }
            }
        }
        if let Some(items) = items {
            return Ok(items);
        }
        match (api_version, kind) {
            (_, Some(kind)) if is_list(&kind) => Ok(Vec::new()),
            (Some(api_version), Some(kind)) => {
                let nothing = MapDeserializer::<_, A::Error>::new(std::iter::empty::<((), ())>());
                Ok(vec![(None, read_object(&api_version, &kind, nothing)?)])
            }
            (_, None) => Err(A::Error::missing_field("kind")),
            (None, _) => Err(A::Error::missing_field("apiVersion")),
        }
    }
}

/// `List`, `PodList`, `NodeList`, ...: a kind whose objects are its `items`.
fn is_list(kind: &str) -> bool {
    kind.ends_with("List")
}

/// Deserializes the rest of an object of the given type.
fn read_object<'de, D: Deserializer<'de>>(
    api_version: &str,
    kind: &str,
    rest: D,
) -> Result<Parsed, D::Error> {
    fn boxed<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<Box<T>, D::Error> {
        T::deserialize(d).map(Box::new)
    }
    let Some(known) = Kind::named(kind) else {
        let name = SkippedMeta::deserialize(rest)?.describe();
        return Ok(Parsed::Skipped(format!(
            "skipped {api_version} {kind}{name}: not a kind karpenter-sim reads"
        )));
    };
    if known.api_version() != api_version {
        let name = SkippedMeta::deserialize(rest)?.describe();
        return Ok(Parsed::Skipped(format!(
            "skipped {api_version} {kind}{name}: only {} {kind} is read",
            known.api_version()
        )));
    }
    let object = match known {
        // Only what planning reads is kept; the caller shares the specs.
        Kind::Pod => Object::Pod(Arc::new(PodInfo::of(&Pod::deserialize(rest)?))),
        Kind::Node => Object::Node(boxed(rest)?),
        Kind::NodePool => Object::NodePool(boxed(rest)?),
        Kind::NodeClaim => Object::NodeClaim(boxed(rest)?),
        Kind::DaemonSet => Object::DaemonSet(boxed(rest)?),
        Kind::PodDisruptionBudget => Object::PodDisruptionBudget(boxed(rest)?),
        Kind::PersistentVolumeClaim => Object::PersistentVolumeClaim(boxed(rest)?),
        Kind::PersistentVolume => Object::PersistentVolume(boxed(rest)?),
        Kind::StorageClass => Object::StorageClass(boxed(rest)?),
        Kind::CSINode => Object::CSINode(boxed(rest)?),
        Kind::Namespace => Object::Namespace(boxed(rest)?),
        Kind::AKSNodeClass => Object::AKSNodeClass(boxed(rest)?),
        Kind::EC2NodeClass => Object::EC2NodeClass(boxed(rest)?),
        Kind::InstanceType => Object::InstanceType(boxed(rest)?),
        Kind::NodeOverlay => Object::NodeOverlay(boxed(rest)?),
        Kind::CapacityBuffer => Object::CapacityBuffer(boxed(rest)?),
        Kind::PodTemplate => Object::PodTemplate(boxed(rest)?),
        Kind::Deployment => Object::Deployment(boxed(rest)?),
        Kind::StatefulSet => Object::StatefulSet(boxed(rest)?),
        Kind::ReplicaSet => Object::ReplicaSet(boxed(rest)?),
    };
    Ok(Parsed::Object(object))
}

/// The part of a skipped object worth naming in its warning.
#[derive(Deserialize)]
struct SkippedMeta {
    #[serde(default)]
    metadata: Option<SkippedName>,
}

#[derive(Deserialize)]
struct SkippedName {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
}

impl SkippedMeta {
    fn describe(self) -> String {
        match self.metadata {
            Some(SkippedName {
                name: Some(name),
                namespace: Some(ns),
            }) => format!(" {ns}/{name}"),
            Some(SkippedName {
                name: Some(name),
                namespace: None,
            }) => format!(" {name}"),
            _ => String::new(),
        }
    }
}

/// A map whose first key was already read: yields that key again, then the rest.
struct Rest<A> {
    pending: Option<String>,
    map: A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Rest<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.pending.take() {
            Some(key) => {
                let key: StringDeserializer<A::Error> = key.into_deserializer();
                seed.deserialize(key).map(Some)
            }
            None => self.map.next_key_seed(seed),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map
            .size_hint()
            .map(|n| n + usize::from(self.pending.is_some()))
    }
}

/// The `items` of a list: each item is an object (or, unusually, a list itself).
struct ItemsSeed;

impl<'de> DeserializeSeed<'de> for ItemsSeed {
    type Value = Items;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Items, D::Error> {
        // `any`, not `seq`: kubectl prints an empty list's items as `null`.
        deserializer.deserialize_any(ItemsVisitor)
    }
}

struct ItemsVisitor;

impl<'de> Visitor<'de> for ItemsVisitor {
    type Value = Items;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of Kubernetes objects")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Items, E> {
        Ok(Vec::new()) // `items: null`, as kubectl prints an empty list
    }

    fn visit_none<E: de::Error>(self) -> Result<Items, E> {
        Ok(Vec::new())
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Items, S::Error> {
        let own = state::enter_list();
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        let mut index = 0;
        while read_item(&mut out, index, own, |seed| seq.next_element_seed(seed))? {
            index += 1;
        }
        state::leave_list();
        Ok(out)
    }
}

/// Reads the item `index` of a list with `next` (`false` past the last item) onto
/// `out`; `own` says whether the list is the document's own, whose items are
/// numbered.
pub(crate) fn read_item<E>(
    out: &mut Items,
    index: usize,
    own: bool,
    next: impl FnOnce(ItemSeed) -> Result<Option<Items>, E>,
) -> Result<bool, E> {
    if own {
        state::set_item(index);
    }
    let Some(items) = next(ItemSeed)? else {
        return Ok(false);
    };
    out.extend(items.into_iter().map(|(_, parsed)| (Some(index), parsed)));
    Ok(true)
}

/// One item of a list: an object, or a list whose items all take its index.
pub(crate) struct ItemSeed;

impl<'de> DeserializeSeed<'de> for ItemSeed {
    type Value = Items;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Items, D::Error> {
        deserializer.deserialize_map(DocumentVisitor)
    }
}
