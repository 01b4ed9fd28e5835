//! The name, IAM path and tags upstream gives the instance profile of a
//! class with a `role`.

use super::Tag;
use crate::nodeclass::EC2NodeClass;

/// A role's name without its path (`team/NodeRole` is `NodeRole`), as
/// IAM's role calls take it.
pub fn role_name(role: &str) -> &str {
    role.rsplit('/').next().unwrap_or(role)
}

/// The profile Karpenter makes for a class with a `role`:
/// `<cluster>_<number>`, the number a 64-bit FNV-1a hash (the hash
/// upstream's `hashstructure` takes of a string) of the region, the
/// class's name and its UID.
///
/// Departure: upstream hashes a random UUID in place of the UID, so each
/// profile it makes has a new name and the old one is collected later;
/// here a class has one name for its life, and a changed role is swapped
/// in that profile. The format (and so IAM's 128-character limit for
/// clusters of up to 100 characters) is upstream's.
pub fn instance_profile_name(cluster: &str, region: &str, class: &str, uid: &str) -> String {
    let seed = format!("{region}{class}{uid}");
    format!("{cluster}_{}", fnv1a_64(seed.as_bytes()))
}

/// The name upstream gave a class's profile before it added a random
/// part: `<cluster>_<hash of region and class name>`. A class's finalizer
/// deletes it too, as upstream does.
pub fn legacy_instance_profile_name(cluster: &str, region: &str, class: &str) -> String {
    let seed = format!("{region}{class}");
    format!("{cluster}_{}", fnv1a_64(seed.as_bytes()))
}

/// The IAM path of a class's profiles, `/karpenter/<region>/<cluster>/<uid>/`
/// as upstream; `/karpenter/<region>/<cluster>/` (no `uid`) holds the
/// cluster's.
pub fn instance_profile_path(region: &str, cluster: &str, uid: Option<&str>) -> String {
    match uid {
        Some(uid) => format!("/karpenter/{region}/{cluster}/{uid}/"),
        None => format!("/karpenter/{region}/{cluster}/"),
    }
}

/// The tags of a class's profile, by key: the class's `spec.tags` under
/// upstream's own, which win: `kubernetes.io/cluster/<cluster>: owned`,
/// `eks:eks-cluster-name`, `karpenter.k8s.aws/ec2nodeclass` and
/// `topology.kubernetes.io/region`.
pub fn instance_profile_tags(class: &EC2NodeClass, cluster: &str, region: &str) -> Vec<Tag> {
    let mut tags = class.spec.tags.clone().unwrap_or_default();
    let name = class.name().unwrap_or_default();
    tags.insert(format!("kubernetes.io/cluster/{cluster}"), "owned".into());
    tags.insert("eks:eks-cluster-name".into(), cluster.into());
    tags.insert("karpenter.k8s.aws/ec2nodeclass".into(), name.into());
    tags.insert("topology.kubernetes.io/region".into(), region.into());
    tags.iter().map(|(k, v)| Tag::new(k, v)).collect()
}

/// 64-bit FNV-1a.
fn fnv1a_64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(PRIME)
    })
}
