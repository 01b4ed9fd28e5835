//! [`InstanceProfiles`]: upstream's instance-profile provider over any
//! [`IamApi`].

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

use super::names::role_name;
use super::{CreateInstanceProfileInput, IamApi, InstanceProfile, Role, Tag, is_role_not_found};
use crate::ec2::Ec2Error;

/// How long a profile read or made is served from the cache, as
/// upstream's `InstanceProfileTTL`.
pub const INSTANCE_PROFILE_TTL: SignedDuration = SignedDuration::from_mins(15);
/// How long a role IAM said does not exist stops new profiles for it, as
/// upstream's role cache (its `DefaultCleanupInterval`): this keeps a
/// class naming a missing role from making profile after profile.
pub const ROLE_NOT_FOUND_TTL: SignedDuration = SignedDuration::from_mins(1);

/// How long a profile just made, or just replaced, is kept from
/// [`collect_instance_profiles`](super::collect_instance_profiles), as
/// upstream's `ProtectedProfilesTTL`: the class or node naming it may not
/// yet be among those the collector is told are in use.
pub const PROTECTED_PROFILE_TTL: SignedDuration = SignedDuration::from_hours(1);

/// Why an instance profile could not be made, read or deleted.
#[derive(Debug, thiserror::Error)]
pub enum InstanceProfileError {
    /// `GetInstanceProfile` failed for another reason than its absence.
    #[error("instance profile {profile}: getting it")]
    Get {
        /// The profile.
        profile: String,
        /// IAM's failure.
        #[source]
        source: Ec2Error,
    },
    /// `CreateInstanceProfile` failed.
    #[error("instance profile {profile}: creating it")]
    Create {
        /// The profile.
        profile: String,
        /// IAM's failure.
        #[source]
        source: Ec2Error,
    },
    /// `RemoveRoleFromInstanceProfile` failed.
    #[error("instance profile {profile}: removing role {role}")]
    RemoveRole {
        /// The profile.
        profile: String,
        /// The role being removed.
        role: String,
        /// IAM's failure.
        #[source]
        source: Ec2Error,
    },
    /// `AddRoleToInstanceProfile` failed.
    #[error("instance profile {profile}: adding role {role}")]
    AddRole {
        /// The profile.
        profile: String,
        /// The role being added.
        role: String,
        /// IAM's failure.
        #[source]
        source: Ec2Error,
    },
    /// IAM said lately that the role does not exist; no call is made
    /// until [`ROLE_NOT_FOUND_TTL`] has passed.
    #[error("role {role} not found (not asked again before {until})")]
    RoleNotFound {
        /// The role.
        role: String,
        /// When IAM is asked again.
        until: Timestamp,
    },
    /// `DeleteInstanceProfile` failed for another reason than its absence.
    #[error("instance profile {profile}: deleting it")]
    Delete {
        /// The profile.
        profile: String,
        /// IAM's failure.
        #[source]
        source: Ec2Error,
    },
    /// `ListInstanceProfiles` failed.
    #[error("listing instance profiles under path {path}")]
    List {
        /// The path prefix.
        path: String,
        /// IAM's failure.
        #[source]
        source: Ec2Error,
    },
}

impl InstanceProfileError {
    /// Whether trying again later may succeed: IAM's failure says so, or
    /// the missing role may have been created by then.
    pub fn is_retryable(&self) -> bool {
        match self {
            InstanceProfileError::RoleNotFound { .. } => true,
            InstanceProfileError::Get { source, .. }
            | InstanceProfileError::Create { source, .. }
            | InstanceProfileError::RemoveRole { source, .. }
            | InstanceProfileError::AddRole { source, .. }
            | InstanceProfileError::Delete { source, .. }
            | InstanceProfileError::List { source, .. } => source.is_retryable(),
        }
    }
}

/// Upstream's instance-profile provider: the profiles read or made (for
/// [`INSTANCE_PROFILE_TTL`]) and the roles IAM lately said are missing
/// (for [`ROLE_NOT_FOUND_TTL`]), and the profiles kept from the collector
/// (for [`PROTECTED_PROFILE_TTL`]). IAM is passed to each call; the time
/// too, so that the caches are deterministic.
#[derive(Clone, Debug, Default)]
pub struct InstanceProfiles {
    profiles: BTreeMap<String, (InstanceProfile, Timestamp)>,
    missing_roles: BTreeMap<String, Timestamp>,
    protected: BTreeMap<String, Timestamp>,
}

impl InstanceProfiles {
    /// Empty caches.
    pub fn new() -> Self {
        Self::default()
    }

    /// The profile `name`, from the cache while fresh, else from IAM (and
    /// then cached).
    ///
    /// # Errors
    ///
    /// IAM's failure; [`Ec2Error::is_not_found`] when there is no such
    /// profile.
    pub async fn get(
        &mut self,
        iam: &dyn IamApi,
        name: &str,
        now: Timestamp,
    ) -> Result<InstanceProfile, Ec2Error> {
        if let Some((profile, expires)) = self.profiles.get(name)
            && *expires > now
        {
            return Ok(profile.clone());
        }
        let profile = iam.get_instance_profile(name).await?;
        self.remember(profile.clone(), now);
        Ok(profile)
    }

    /// Ensures the profile `name` exists (made with `tags` at `path` when
    /// it does not) and holds `role` and no other, as upstream's
    /// `Create`. A `role` given with a path (`team/NodeRole`) is added by
    /// its last segment, as IAM's `AddRoleToInstanceProfile` takes names
    /// only. The profile is cached holding the role.
    ///
    /// # Errors
    ///
    /// The failed call; [`InstanceProfileError::RoleNotFound`] without
    /// any call while IAM's recent "no such role" stands.
    pub async fn create(
        &mut self,
        iam: &dyn IamApi,
        name: &str,
        role: &str,
        tags: Vec<Tag>,
        path: &str,
        now: Timestamp,
    ) -> Result<(), InstanceProfileError> {
        let role_name = role_name(role);
        if let Some(until) = self.missing_roles.get(role_name).filter(|t| **t > now) {
            let (role, until) = (role_name.to_owned(), *until);
            return Err(InstanceProfileError::RoleNotFound { role, until });
        }
        let mut profile = match self.get(iam, name, now).await {
            Ok(profile) => profile,
            Err(source) if source.is_not_found() => {
                let input = CreateInstanceProfileInput {
                    instance_profile_name: name.to_owned(),
                    path: (!path.is_empty()).then(|| path.to_owned()),
                    tags,
                };
                let profile = name.to_owned();
                iam.create_instance_profile(input)
                    .await
                    .map_err(|source| InstanceProfileError::Create { profile, source })?
            }
            Err(source) => {
                let profile = name.to_owned();
                return Err(InstanceProfileError::Get { profile, source });
            }
        };
        self.ensure_role(iam, &profile, role_name, now).await?;
        profile.roles = vec![Role {
            role_name: role_name.to_owned(),
            path: "/".to_owned(),
        }];
        self.remember(profile, now);
        Ok(())
    }

    /// Gives `profile` the role `role` alone: a different role it holds
    /// is removed first (a profile holds at most one).
    async fn ensure_role(
        &mut self,
        iam: &dyn IamApi,
        profile: &InstanceProfile,
        role: &str,
        now: Timestamp,
    ) -> Result<(), InstanceProfileError> {
        let name = &profile.instance_profile_name;
        if profile.roles.iter().any(|r| r.role_name == role) {
            return Ok(());
        }
        for held in &profile.roles {
            if let Err(source) = iam
                .remove_role_from_instance_profile(name, &held.role_name)
                .await
            {
                self.profiles.remove(name);
                let (profile, role) = (name.clone(), held.role_name.clone());
                return Err(InstanceProfileError::RemoveRole {
                    profile,
                    role,
                    source,
                });
            }
        }
        if let Err(source) = iam.add_role_to_instance_profile(name, role).await {
            self.profiles.remove(name);
            if is_role_not_found(&source) {
                let until = now.saturating_add(ROLE_NOT_FOUND_TTL).unwrap_or(now);
                self.missing_roles.insert(role.to_owned(), until);
            }
            let (profile, role) = (name.clone(), role.to_owned());
            return Err(InstanceProfileError::AddRole {
                profile,
                role,
                source,
            });
        }
        Ok(())
    }

    /// Deletes the profile `name`, its role removed first, as upstream's
    /// `Delete`: a profile that does not exist (or vanishes meanwhile) is
    /// done. IAM is asked, not the cache, and the cache forgets it.
    ///
    /// # Errors
    ///
    /// The failed call, but for IAM's not-found.
    pub async fn delete(
        &mut self,
        iam: &dyn IamApi,
        name: &str,
    ) -> Result<(), InstanceProfileError> {
        let profile = name.to_owned();
        let found = match iam.get_instance_profile(name).await {
            Ok(found) => found,
            Err(source) if source.is_not_found() => {
                self.profiles.remove(name);
                self.protected.remove(name);
                return Ok(());
            }
            Err(source) => return Err(InstanceProfileError::Get { profile, source }),
        };
        for held in &found.roles {
            if let Err(source) = iam
                .remove_role_from_instance_profile(name, &held.role_name)
                .await
            {
                let role = held.role_name.clone();
                return Err(InstanceProfileError::RemoveRole {
                    profile,
                    role,
                    source,
                });
            }
        }
        match iam.delete_instance_profile(name).await {
            Ok(()) => {}
            Err(source) if source.is_not_found() => {}
            Err(source) => return Err(InstanceProfileError::Delete { profile, source }),
        }
        self.profiles.remove(name);
        self.protected.remove(name);
        Ok(())
    }

    /// Every profile whose path starts with `path_prefix`.
    ///
    /// # Errors
    ///
    /// [`InstanceProfileError::List`] when IAM fails.
    pub async fn list(
        &self,
        iam: &dyn IamApi,
        path_prefix: &str,
    ) -> Result<Vec<InstanceProfile>, InstanceProfileError> {
        iam.list_instance_profiles(path_prefix)
            .await
            .map_err(|source| InstanceProfileError::List {
                path: path_prefix.to_owned(),
                source,
            })
    }

    /// Keeps the profile `name` from the collector until
    /// [`PROTECTED_PROFILE_TTL`] after `now`.
    pub fn protect(&mut self, name: &str, now: Timestamp) {
        let until = now.saturating_add(PROTECTED_PROFILE_TTL).unwrap_or(now);
        self.protected.insert(name.to_owned(), until);
    }

    /// Whether the profile `name` is kept from the collector at `now`.
    pub fn is_protected(&self, name: &str, now: Timestamp) -> bool {
        self.protected.get(name).is_some_and(|until| *until > now)
    }

    fn remember(&mut self, profile: InstanceProfile, now: Timestamp) {
        let expires = now.saturating_add(INSTANCE_PROFILE_TTL).unwrap_or(now);
        let name = profile.instance_profile_name.clone();
        self.profiles.insert(name, (profile, expires));
    }
}
