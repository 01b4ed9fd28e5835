//! Volume attach limits: how many volumes of each CSI driver a node may
//! attach (its `storage.k8s.io/v1` CSINode's `allocatable.count`), and which
//! a pod attaches, as upstream's `VolumeUsage` (`scheduling/volumeusage.go`)
//! counts them.
//!
//! A pod attaches each claim it uses (`persistentVolumeClaim`, or the
//! `<pod>-<volume>` claim of an `ephemeral` volume), under a driver:
//! - a bound claim, its PersistentVolume's `csi.driver` (`ebs.csi.aws.com` for
//!   an in-tree `awsElasticBlockStore` volume); other volume kinds (NFS,
//!   local, ...) attach nothing;
//! - an unbound claim, its StorageClass's provisioner (an in-tree provisioner
//!   by its CSI name); a claim without a class takes the default class, as the
//!   API server writes it in; an empty or missing class attaches nothing.
//!
//! A claim counts once per node, however many pods use it. A claim that
//! cannot be found attaches nothing here (a pending pod with one is refused
//! by the volume checks already).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::PersistentVolume;
use k8s_openapi::api::storage::v1::CSINode;

use super::volumes::{claim_name, default_class, find_claim, find_class, find_volume};
use crate::pods::PodFields;
use crate::snapshot::Snapshot;

/// The claims (`namespace/name`) attached, by CSI driver.
pub(crate) type Attached = BTreeMap<String, BTreeSet<String>>;

/// In-tree provisioners and the CSI drivers that took them over (Kubernetes'
/// `csi-translation-lib`).
const MIGRATED: [(&str, &str); 7] = [
    ("kubernetes.io/aws-ebs", "ebs.csi.aws.com"),
    ("kubernetes.io/gce-pd", "pd.csi.storage.gke.io"),
    ("kubernetes.io/cinder", "cinder.csi.openstack.org"),
    ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    ("kubernetes.io/azure-file", "file.csi.azure.com"),
    ("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"),
    ("kubernetes.io/portworx-volume", "pxd.portworx.com"),
];

/// The claims the pod attaches, by driver.
pub(crate) fn attached(snapshot: &Snapshot, pod: &(impl PodFields + ?Sized)) -> Attached {
    let mut attached = Attached::new();
    let Some(spec) = pod.scheduling() else {
        return attached;
    };
    if spec.volumes.as_ref().is_none_or(Vec::is_empty) {
        return attached;
    }
    let pod_name = pod.metadata().name.as_deref().unwrap_or_default();
    let namespace = pod.metadata().namespace.as_deref().unwrap_or("default");
    for volume in spec.volumes.iter().flatten() {
        let Some(name) = claim_name(pod_name, volume) else {
            continue;
        };
        let Some(claim) = find_claim(snapshot, namespace, &name) else {
            continue;
        };
        let Some(driver) = driver_of(snapshot, claim) else {
            continue;
        };
        attached
            .entry(driver)
            .or_default()
            .insert(format!("{namespace}/{name}"));
    }
    attached
}

/// The driver that attaches a claim's volume, if it is one that counts.
fn driver_of(
    snapshot: &Snapshot,
    claim: &k8s_openapi::api::core::v1::PersistentVolumeClaim,
) -> Option<String> {
    let spec = claim.spec.as_ref()?;
    if let Some(bound) = spec.volume_name.as_deref().filter(|n| !n.is_empty()) {
        return find_volume(snapshot, bound).and_then(volume_driver);
    }
    let class = match spec.storage_class_name.as_deref() {
        Some("") => return None,
        Some(name) => find_class(snapshot, name)?,
        None => default_class(snapshot)?,
    };
    let provisioner = class.provisioner.as_str();
    let migrated = MIGRATED.iter().find(|(tree, _)| *tree == provisioner);
    Some(migrated.map_or(provisioner, |(_, csi)| csi).to_owned())
}

/// A PersistentVolume's CSI driver (an in-tree AWS EBS volume's by its CSI
/// name); `None` for other kinds of volume.
fn volume_driver(volume: &PersistentVolume) -> Option<String> {
    let spec = volume.spec.as_ref()?;
    if let Some(csi) = &spec.csi {
        return Some(csi.driver.clone());
    }
    spec.aws_elastic_block_store
        .as_ref()
        .map(|_| "ebs.csi.aws.com".to_owned())
}

/// A node's attach limits, by driver, from the CSINode named after it: each
/// driver with an `allocatable` (a missing `count` is 0, as upstream reads
/// it; a driver listed twice takes the last). Empty without a CSINode.
pub(crate) fn limits(csi_nodes: &[CSINode], node: &str) -> BTreeMap<String, u32> {
    let Some(csi) = csi_nodes
        .iter()
        .find(|c| c.metadata.name.as_deref() == Some(node))
    else {
        return BTreeMap::new();
    };
    csi.spec
        .drivers
        .iter()
        .filter_map(|d| {
            let count = d.allocatable.as_ref()?.count.unwrap_or(0);
            Some((d.name.clone(), u32::try_from(count).unwrap_or(0)))
        })
        .collect()
}

/// Whether `more` on a node attaching `attached` breaks one of its `limits`:
/// as upstream, every driver of the union is checked, so a node already
/// over a limit takes no pod at all.
pub(crate) fn exceeds(
    limits: &BTreeMap<String, u32>,
    attached: &Attached,
    more: &Attached,
) -> bool {
    if limits.is_empty() {
        return false;
    }
    limits.iter().any(|(driver, &limit)| {
        let on_node = attached.get(driver);
        let added = more.get(driver);
        let count = match (on_node, added) {
            (None, None) => 0,
            (Some(a), None) | (None, Some(a)) => a.len(),
            (Some(a), Some(b)) => a.len() + b.difference(a).count(),
        };
        count > limit as usize
    })
}

/// Adds `more` to `attached`.
pub(crate) fn attach(attached: &mut Attached, more: &Attached) {
    for (driver, claims) in more {
        attached
            .entry(driver.clone())
            .or_default()
            .extend(claims.iter().cloned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(driver: &str, claims: &[&str]) -> Attached {
        let mut attached = Attached::new();
        attached.insert(
            driver.to_owned(),
            claims.iter().map(|c| (*c).to_owned()).collect(),
        );
        attached
    }

    #[test]
    fn a_claim_counts_once_and_an_over_limit_node_refuses_everything() {
        let limits = BTreeMap::from([("ebs".to_owned(), 2)]);
        let on_node = set("ebs", &["ns/a", "ns/b"]);
        // The same claims again add nothing; a third breaks the limit.
        assert!(!exceeds(&limits, &on_node, &set("ebs", &["ns/a"])));
        assert!(exceeds(&limits, &on_node, &set("ebs", &["ns/c"])));
        // Another driver has no limit.
        assert!(!exceeds(
            &limits,
            &on_node,
            &set("efs", &["ns/c", "ns/d", "ns/e"])
        ));
        // Over the limit already: nothing more goes, not even no volume.
        let over = set("ebs", &["ns/a", "ns/b", "ns/c"]);
        assert!(exceeds(&limits, &over, &Attached::new()));
        assert!(!exceeds(&BTreeMap::new(), &over, &over));
        let mut grown = on_node.clone();
        attach(&mut grown, &set("ebs", &["ns/a", "ns/z"]));
        assert_eq!(grown["ebs"].len(), 3);
    }
}
