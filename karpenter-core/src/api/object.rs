//! The envelope shared by the top-level objects: `apiVersion`, `kind`,
//! `metadata`, `spec`, `status` and unknown top-level fields.
//!
//! `apiVersion` and `kind` are checked as soon as they are read, before a
//! `spec` that follows them, so a `v1beta1` manifest or a NodeClaim read as
//! a NodePool fails with that mismatch rather than with a confusing error
//! deep in the spec. They are tolerated when absent, as in hand-written
//! scenario files, and always written.

use std::fmt;
use std::marker::PhantomData;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::ExtraFields;

/// The group and version of NodePool and NodeClaim (NodeOverlay is
/// `karpenter.sh/v1alpha1`).
pub const API_VERSION: &str = "karpenter.sh/v1";

/// The parts of an object, owned (for reading) or borrowed (for writing).
pub(super) struct Envelope<M, S, T, E> {
    pub metadata: M,
    pub spec: S,
    pub status: Option<T>,
    pub extra: E,
}

impl<S, T> Envelope<ObjectMeta, S, T, ExtraFields>
where
    S: for<'de> Deserialize<'de>,
    T: for<'de> Deserialize<'de>,
{
    /// Reads an object whose `kind` must be `kind`.
    pub(super) fn read<'de, D: Deserializer<'de>>(
        deserializer: D,
        api_version: &'static str,
        kind: &'static str,
    ) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor {
            api_version,
            kind,
            parts: PhantomData,
        })
    }
}

impl<S: Serialize, T: Serialize> Envelope<&ObjectMeta, &S, &T, &ExtraFields> {
    /// Writes the object with its `apiVersion` and `kind` first, `status`
    /// only when present, and unknown fields last.
    pub(super) fn write<Ser: Serializer>(
        &self,
        serializer: Ser,
        api_version: &str,
        kind: &str,
    ) -> Result<Ser::Ok, Ser::Error> {
        let len = 4 + usize::from(self.status.is_some()) + self.extra.len();
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("apiVersion", api_version)?;
        map.serialize_entry("kind", kind)?;
        map.serialize_entry("metadata", self.metadata)?;
        map.serialize_entry("spec", self.spec)?;
        if let Some(status) = self.status {
            map.serialize_entry("status", status)?;
        }
        for (name, value) in self.extra {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

struct EnvelopeVisitor<S, T> {
    api_version: &'static str,
    kind: &'static str,
    parts: PhantomData<(S, T)>,
}

impl<'de, S, T> Visitor<'de> for EnvelopeVisitor<S, T>
where
    S: Deserialize<'de>,
    T: Deserialize<'de>,
{
    type Value = Envelope<ObjectMeta, S, T, ExtraFields>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a {} {}", self.api_version, self.kind)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut metadata = None;
        let mut spec = None;
        let mut status = None;
        let mut extra = ExtraFields::new();
        let (mut seen_api_version, mut seen_kind) = (false, false);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "apiVersion" => {
                    once(&mut seen_api_version, "apiVersion")?;
                    expect(map.next_value()?, "apiVersion", self.api_version)?;
                }
                "kind" => {
                    once(&mut seen_kind, "kind")?;
                    expect(map.next_value()?, "kind", self.kind)?;
                }
                // An explicit `metadata: null` or `status: null` reads as absent.
                "metadata" => set(&mut metadata, "metadata", map.next_value()?)?,
                "spec" => set(&mut spec, "spec", map.next_value()?)?,
                "status" => set(&mut status, "status", map.next_value()?)?,
                _ => {
                    let value = map.next_value()?;
                    extra.insert(key, value);
                }
            }
        }
        Ok(Envelope {
            metadata: metadata.flatten().unwrap_or_default(),
            spec: spec.ok_or_else(|| de::Error::missing_field("spec"))?,
            status: status.flatten(),
            extra,
        })
    }
}

/// Fails on a second occurrence of a key, as derived deserializers do.
fn once<E: de::Error>(seen: &mut bool, field: &'static str) -> Result<(), E> {
    if std::mem::replace(seen, true) {
        return Err(E::duplicate_field(field));
    }
    Ok(())
}

fn set<V, E: de::Error>(slot: &mut Option<V>, field: &'static str, value: V) -> Result<(), E> {
    if slot.replace(value).is_some() {
        return Err(E::duplicate_field(field));
    }
    Ok(())
}

/// Accepts an absent (`null`) or matching type field.
fn expect<E: de::Error>(found: Option<String>, field: &str, expected: &str) -> Result<(), E> {
    match found {
        Some(found) if found != expected => Err(E::custom(format_args!(
            "unsupported {field} {found:?}: expected {expected:?}"
        ))),
        _ => Ok(()),
    }
}

/// Implements, for a top-level object with `metadata`, `spec`, `status` and
/// `extra` fields, its name and condition accessors and its (de)serialization
/// through [`Envelope`]. The short forms are cluster-scoped `karpenter.sh`
/// kinds; the long one names the group and the scope.
macro_rules! karpenter_object {
    ($object:ident, $kind:literal, $plural:literal) => {
        $crate::api::object::karpenter_object!($object, $kind, $plural, "v1");
    };
    ($object:ident, $kind:literal, $plural:literal, $version:literal) => {
        $crate::api::object::karpenter_object!(
            $object,
            $kind,
            $plural,
            "karpenter.sh",
            $version,
            k8s_openapi::ClusterResourceScope
        );
    };
    ($object:ident, $kind:literal, $plural:literal, $group:literal, $version:literal, $scope:ty) => {
        impl $object {
            /// The `apiVersion` written for this kind.
            pub const API_VERSION: &'static str = concat!($group, "/", $version);
            #[doc = concat!("The `kind` written: `", $kind, "`.")]
            pub const KIND: &'static str = $kind;

            /// `metadata.name`, if set.
            pub fn name(&self) -> Option<&str> {
                self.metadata.name.as_deref()
            }

            /// The status condition of this type, if any.
            pub fn condition(&self, type_: &str) -> Option<&$crate::api::Condition> {
                use $crate::api::Conditions as _;
                self.status.as_ref()?.conditions.find(type_)
            }
        }

        impl<'de> serde::Deserialize<'de> for $object {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let $crate::api::object::Envelope {
                    metadata,
                    spec,
                    status,
                    extra,
                } = $crate::api::object::Envelope::read(
                    deserializer,
                    Self::API_VERSION,
                    Self::KIND,
                )?;
                Ok(Self {
                    metadata,
                    spec,
                    status,
                    extra,
                })
            }
        }

        impl serde::Serialize for $object {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let envelope = $crate::api::object::Envelope {
                    metadata: &self.metadata,
                    spec: &self.spec,
                    status: self.status.as_ref(),
                    extra: &self.extra,
                };
                envelope.write(serializer, Self::API_VERSION, Self::KIND)
            }
        }

        /// A Kubernetes resource, so that a Kubernetes client (kube's `Api`)
        /// can list, watch and write it.
        impl k8s_openapi::Resource for $object {
            const API_VERSION: &'static str = concat!($group, "/", $version);
            const GROUP: &'static str = $group;
            const KIND: &'static str = $kind;
            const VERSION: &'static str = $version;
            const URL_PATH_SEGMENT: &'static str = $plural;
            type Scope = $scope;
        }

        impl k8s_openapi::ListableResource for $object {
            const LIST_KIND: &'static str = concat!($kind, "List");
        }

        impl k8s_openapi::Metadata for $object {
            type Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

            fn metadata(&self) -> &Self::Ty {
                &self.metadata
            }

            fn metadata_mut(&mut self) -> &mut Self::Ty {
                &mut self.metadata
            }
        }
    };
}

pub(super) use karpenter_object;
