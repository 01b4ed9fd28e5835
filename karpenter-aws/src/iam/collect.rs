//! [`collect_instance_profiles`]: upstream's instance-profile garbage
//! collector, one pass.

use std::collections::BTreeSet;

use jiff::{SignedDuration, Timestamp};

use super::names::instance_profile_path;
use super::{IamApi, InstanceProfileError, InstanceProfiles};

/// The annotation a launched NodeClaim names its instance profile by, so
/// that the collector keeps a profile while a node launched with it runs.
pub const INSTANCE_PROFILE_ANNOTATION: &str = "karpenter.k8s.aws/instance-profile-name";

/// How often upstream's collector runs.
pub const COLLECT_PERIOD: SignedDuration = SignedDuration::from_mins(30);

/// Deletes the profiles Karpenter made for the cluster (those under
/// `/karpenter/<region>/<cluster>/`) that are not `in_use` and not
/// protected ([`InstanceProfiles::protect`]), as upstream's collector;
/// answers their names, in IAM's order.
///
/// `in_use` is what upstream gathers from the cluster: every
/// `EC2NodeClass`'s `status.instanceProfile` and every NodeClaim's
/// [`INSTANCE_PROFILE_ANNOTATION`].
///
/// # Errors
///
/// The listing's failure, or the first failed deletion (the profiles
/// deleted before it stay deleted).
pub async fn collect_instance_profiles(
    iam: &dyn IamApi,
    profiles: &mut InstanceProfiles,
    cluster: &str,
    region: &str,
    in_use: &BTreeSet<String>,
    now: Timestamp,
) -> Result<Vec<String>, InstanceProfileError> {
    let path = instance_profile_path(region, cluster, None);
    let mut deleted = Vec::new();
    for profile in profiles.list(iam, &path).await? {
        let name = profile.instance_profile_name;
        if in_use.contains(&name) || profiles.is_protected(&name, now) {
            continue;
        }
        profiles.delete(iam, &name).await?;
        deleted.push(name);
    }
    Ok(deleted)
}
