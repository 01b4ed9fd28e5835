//! The instance profile of a class with a `role`, made through IAM as
//! upstream's instance-profile reconciler does, and deleted with the
//! class as upstream's finalizer does.

use crate::iam::{
    IamApi, InstanceProfileError, InstanceProfiles, instance_profile_name, instance_profile_path,
    instance_profile_tags, legacy_instance_profile_name,
};
use crate::nodeclass::EC2NodeClass;
use crate::nodeclass::resolve::ResolveContext;

/// The profile the class's status names once reconciled: with a `role`,
/// one IAM holds with that role (made or fixed when the status's profile
/// holds another or none); else `spec.instanceProfile`, which upstream
/// does not ask IAM about (its validation's dry-run launch finds a
/// missing one).
///
/// Departure: upstream makes a profile with a new name on every role
/// change and deletes a half-made one on failure; here the class keeps
/// one name ([`instance_profile_name`]) and its role is swapped in place,
/// so a failure is left for the next reconcile to finish rather than
/// deleted under nodes that may run with it. A role given with a path
/// matches the profile's role by name, so it is not swapped again once
/// the cache expires.
pub(super) async fn ensure(
    iam: &dyn IamApi,
    profiles: &mut InstanceProfiles,
    class: &EC2NodeClass,
    context: &ResolveContext,
) -> Result<Option<String>, InstanceProfileError> {
    let Some(role) = class.spec.role.as_deref().filter(|r| !r.is_empty()) else {
        return Ok(class
            .spec
            .instance_profile
            .clone()
            .filter(|p| !p.is_empty()));
    };
    let current = class
        .status
        .as_ref()
        .and_then(|s| s.instance_profile.clone())
        .filter(|p| !p.is_empty());
    if let Some(name) = &current {
        match profiles.get(iam, name, context.now).await {
            Ok(found) => {
                let wanted = crate::iam::role_name(role);
                if found.roles.iter().any(|r| r.role_name == wanted) {
                    return Ok(current);
                }
            }
            Err(source) if source.is_not_found() => {}
            Err(source) => {
                let profile = name.clone();
                return Err(InstanceProfileError::Get { profile, source });
            }
        }
    }
    let (cluster, region) = (&context.cluster_name, &context.region);
    let uid = class.metadata.uid.as_deref().filter(|u| !u.is_empty());
    let name = instance_profile_name(
        cluster,
        region,
        class.name().unwrap_or_default(),
        uid.unwrap_or_default(),
    );
    let tags = instance_profile_tags(class, cluster, region);
    let path = instance_profile_path(region, cluster, uid);
    profiles
        .create(iam, &name, role, tags, &path, context.now)
        .await?;
    // Until the status naming it is seen, and while nodes of the profile
    // it replaces may still run, the collector leaves both alone.
    profiles.protect(&name, context.now);
    if let Some(old) = current.filter(|old| *old != name) {
        profiles.protect(&old, context.now);
    }
    Ok(Some(name))
}

/// What a class's finalizer does with IAM, as upstream's: deletes every
/// profile under the class's path (`/karpenter/<region>/<cluster>/<uid>/`,
/// the profiles Karpenter made for it) and the profile of upstream's
/// older naming ([`legacy_instance_profile_name`]) when that name is one
/// IAM accepts; a profile already gone is done. Profiles named by
/// `spec.instanceProfile` are the user's and are left alone. Upstream
/// skips this in an isolated VPC (`--isolated-vpc`): so does the caller.
///
/// # Errors
///
/// The first failed IAM call; the caller keeps the finalizer and retries.
pub async fn delete_instance_profiles(
    iam: &dyn IamApi,
    profiles: &mut InstanceProfiles,
    class: &EC2NodeClass,
    cluster: &str,
    region: &str,
) -> Result<(), InstanceProfileError> {
    if let Some(uid) = class.metadata.uid.as_deref().filter(|u| !u.is_empty()) {
        let path = instance_profile_path(region, cluster, Some(uid));
        for profile in profiles.list(iam, &path).await? {
            profiles.delete(iam, &profile.instance_profile_name).await?;
        }
    }
    let legacy = legacy_instance_profile_name(cluster, region, class.name().unwrap_or_default());
    if is_valid_profile_name(&legacy) {
        profiles.delete(iam, &legacy).await?;
    }
    Ok(())
}

/// Whether IAM accepts `name` for an instance profile: 1 to 128 of
/// `[A-Za-z0-9_+=,.@-]`.
fn is_valid_profile_name(name: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "_+=,.@-".contains(c);
    (1..=128).contains(&name.len()) && name.chars().all(allowed)
}
