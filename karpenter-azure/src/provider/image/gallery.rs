//! The image of a size whose class's status lists none: the class's family
//! definitions the size can boot, in preference order, each at its newest
//! community gallery version, as upstream's node image provider lists them
//! (`nodeimage.go`, CIG mode). Versions are cached for three days per
//! (definitions, Kubernetes version), as upstream caches its lists, so a
//! burst of launches costs one ARM call per definition.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use karpenter_core::cloudprovider::{CloudProviderError, InstanceType};
use karpenter_core::scheduling::{LABEL_ARCH_STABLE, Requirements};

use super::{image_for, meets, no_compatible_image};
use crate::arm::ComputeApi;
use crate::imagefamily::{
    Definition, Distro, community_image_id, newest_version, os_sku_effective,
};
use crate::instancetype::Settings;
use crate::instancetype::labels::SKU_HYPERV_GENERATION;
use crate::nodeclass::AKSNodeClass;
use crate::provider::{AzureCloudProvider, lock};

/// How long listed versions are trusted (upstream's
/// `ImageExpirationInterval`).
const EXPIRY: SignedDuration = SignedDuration::from_hours(3 * 24);

/// A cache key: the names of a class's definitions and the Kubernetes
/// version they were chosen for (`None`: unknown, the newest rules).
type ListKey = (Vec<&'static str>, Option<String>);

/// Newest community gallery versions already listed.
#[derive(Debug, Default)]
pub(in crate::provider) struct GalleryVersions {
    lists: BTreeMap<ListKey, Listed>,
}

/// The versions listed for one key, since `made`: each definition's
/// newest (`None`: the gallery has none).
#[derive(Debug)]
struct Listed {
    made: Timestamp,
    newest: BTreeMap<&'static str, Option<String>>,
}

impl GalleryVersions {
    /// The newest version of `definition` under `key` listed less than
    /// [`EXPIRY`] before `now`; `None` when it must be listed.
    fn get(&self, key: &ListKey, definition: &str, now: Timestamp) -> Option<Option<String>> {
        let listed = self.lists.get(key)?;
        if now.duration_since(listed.made) >= EXPIRY {
            return None;
        }
        listed.newest.get(definition).cloned()
    }

    /// Keeps `newest` for `definition` under `key`, listed at `now`. An
    /// expired list is started again, so that all its definitions are
    /// listed anew.
    fn put(
        &mut self,
        key: ListKey,
        definition: &'static str,
        newest: Option<String>,
        now: Timestamp,
    ) {
        let listed = self.lists.entry(key).or_insert_with(|| Listed {
            made: now,
            newest: BTreeMap::new(),
        });
        if now.duration_since(listed.made) >= EXPIRY {
            listed.made = now;
            listed.newest.clear();
        }
        listed.newest.insert(definition, newest);
    }
}

/// Whether `instance_type` can boot `definition`'s images (its
/// architecture and Hyper-V generation, judged as status images are).
fn boots(instance_type: &InstanceType, definition: &Definition) -> bool {
    let requirements = Requirements::from_labels([
        (LABEL_ARCH_STABLE, definition.arch),
        (SKU_HYPERV_GENERATION, definition.hyperv_generation),
    ]);
    meets(instance_type, &requirements)
}

impl<A: ComputeApi> AzureCloudProvider<A> {
    /// The Kubernetes version a class's images are chosen for: its status,
    /// else the cluster's as the controller read it, else unknown (the
    /// newest rules: Ubuntu 24.04, Azure Linux 3).
    pub(in crate::provider) fn kubernetes_version(&self, class: &AKSNodeClass) -> Option<String> {
        class
            .status
            .as_ref()
            .and_then(|s| s.kubernetes_version.clone())
            .or_else(|| {
                let join = self.config.join.as_ref()?;
                Some(join.cluster.kubernetes_version.clone())
            })
            .filter(|v| !v.trim().is_empty())
    }

    /// The image ID `instance_type` boots under `class` (with `settings`):
    /// the status's when it lists images, else the first of the family's
    /// definitions the size boots that has a version in the community
    /// gallery, at its newest. An ARM failure fails the launch (to be
    /// retried); no such definition is `NoCompatibleImage`.
    pub(in crate::provider) async fn image(
        &self,
        class: &AKSNodeClass,
        settings: &Settings,
        instance_type: &InstanceType,
    ) -> Result<String, CloudProviderError> {
        if let Some(id) = image_for(class, instance_type)? {
            return Ok(id);
        }
        let version = self.kubernetes_version(class);
        let distro = Distro::of(settings, version.as_deref());
        let definitions = distro.community_definitions(settings.fips, settings.trusted_launch);
        let key: ListKey = (definitions.iter().map(|d| d.name).collect(), version);
        let gallery = distro.community_gallery();
        for definition in definitions.iter().filter(|d| boots(instance_type, d)) {
            if let Some(newest) = self.newest_version(&key, gallery, definition.name).await? {
                return Ok(community_image_id(gallery, definition.name, &newest));
            }
        }
        let class_name = class.metadata.name.as_deref().unwrap_or_default();
        Err(no_compatible_image(format!(
            "AKSNodeClass {class_name} ({} nodes{}{}) has no community gallery image \
             for size {} (its architecture or Hyper-V generation)",
            os_sku_effective(settings, key.1.as_deref()),
            if settings.fips { ", FIPS" } else { "" },
            if settings.trusted_launch {
                ", trusted launch"
            } else {
                ""
            },
            instance_type.name
        )))
    }

    /// The newest version of `definition` in `gallery`, from the cache or
    /// listed (and cached).
    async fn newest_version(
        &self,
        key: &ListKey,
        gallery: &str,
        definition: &'static str,
    ) -> Result<Option<String>, CloudProviderError> {
        let now = (self.clock)();
        let cached = lock(&self.gallery_versions).get(key, definition, now);
        if let Some(newest) = cached {
            return Ok(newest);
        }
        let versions = self
            .api
            .list_community_gallery_image_versions(&self.config.region, gallery, definition)
            .await
            .map_err(|error| {
                CloudProviderError::api(
                    format!(
                        "listing the versions of community gallery image {gallery}/{definition}"
                    ),
                    true,
                    error,
                )
            })?;
        let newest = newest_version(&versions);
        lock(&self.gallery_versions).put(key.clone(), definition, newest.clone(), now);
        Ok(newest)
    }
}

#[cfg(test)]
mod tests;
