//! The IAM calls the provider makes for an `EC2NodeClass` with a `role`:
//! the instance profile nodes launch with, created, given the role,
//! deleted, behind [`IamApi`], with [`InMemoryIam`] for tests and
//! simulation and [`InstanceProfiles`], upstream's instance-profile
//! provider (its 15-minute cache, its role-not-found cache), and
//! [`collect_instance_profiles`], upstream's collector of profiles no
//! class or node uses. The
//! implementation over the AWS SDK is `karpenter_aws::sdk::SdkIam`
//! (feature `sdk`).
//!
//! Failures are [`Ec2Error`]s with IAM's operations ([`Operation`]):
//! IAM's `NoSuchEntity` is [`Ec2Error::is_not_found`], and
//! [`is_already_exists`], [`is_limit_exceeded`] and [`is_role_not_found`]
//! read IAM's other codes as upstream does.

mod collect;
mod memory;
mod names;
mod profiles;

#[cfg(test)]
mod tests;

use async_trait::async_trait;

pub use collect::{COLLECT_PERIOD, INSTANCE_PROFILE_ANNOTATION, collect_instance_profiles};
pub use memory::InMemoryIam;
pub use names::{
    instance_profile_name, instance_profile_path, instance_profile_tags,
    legacy_instance_profile_name, role_name,
};
pub use profiles::{
    INSTANCE_PROFILE_TTL, InstanceProfileError, InstanceProfiles, PROTECTED_PROFILE_TTL,
    ROLE_NOT_FOUND_TTL,
};

pub use crate::ec2::{Ec2Error, NO_SUCH_ENTITY, Operation, Tag};

/// IAM's code for creating an entity whose name is taken.
pub const ENTITY_ALREADY_EXISTS: &str = "EntityAlreadyExists";
/// IAM's code for a quota reached, among them the single role an
/// instance profile may hold.
pub const LIMIT_EXCEEDED: &str = "LimitExceeded";

/// An IAM role as an instance profile holds it.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Role {
    /// The role's name, without its path.
    pub role_name: String,
    /// The role's path (`/` when it has none).
    pub path: String,
}

/// An IAM instance profile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstanceProfile {
    /// Its name.
    pub instance_profile_name: String,
    /// Its path (`/` when created without one).
    pub path: String,
    /// The roles it holds: IAM allows at most one.
    pub roles: Vec<Role>,
    /// Its tags.
    pub tags: Vec<Tag>,
}

/// What `CreateInstanceProfile` is asked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CreateInstanceProfileInput {
    /// The profile's name.
    pub instance_profile_name: String,
    /// Its path; `None` for IAM's default (`/`).
    pub path: Option<String>,
    /// Its tags.
    pub tags: Vec<Tag>,
}

/// What the provider asks of IAM, one method per operation, the calls
/// upstream's instance-profile provider makes.
///
/// The contract an implementation keeps:
///
/// - **Names.** A profile or role that does not exist is
///   [`Ec2Error::Service`] with code [`NO_SUCH_ENTITY`], as IAM answers
///   (its message names the role when the role is missing:
///   [`is_role_not_found`]). Creating a profile whose name is taken is
///   [`ENTITY_ALREADY_EXISTS`]; adding a role to a profile that holds one
///   is [`LIMIT_EXCEEDED`].
/// - **Every page.** [`list_instance_profiles`](Self::list_instance_profiles)
///   returns every matching profile; the implementation follows IAM's
///   `Marker` itself, failing with [`Ec2Error::PageLimit`] past a cap.
/// - **Errors** are classified as for [`Ec2Api`](crate::ec2::Ec2Api):
///   throttling and transport failures are retryable.
#[async_trait]
pub trait IamApi: Send + Sync {
    /// `GetInstanceProfile`: the profile `name`, its roles and tags.
    async fn get_instance_profile(&self, name: &str) -> Result<InstanceProfile, Ec2Error>;

    /// `CreateInstanceProfile`: a new profile, without a role.
    async fn create_instance_profile(
        &self,
        input: CreateInstanceProfileInput,
    ) -> Result<InstanceProfile, Ec2Error>;

    /// `AddRoleToInstanceProfile`: gives `profile` the role `role` (a name
    /// without a path).
    async fn add_role_to_instance_profile(&self, profile: &str, role: &str)
    -> Result<(), Ec2Error>;

    /// `RemoveRoleFromInstanceProfile`: takes the role `role` from
    /// `profile`.
    async fn remove_role_from_instance_profile(
        &self,
        profile: &str,
        role: &str,
    ) -> Result<(), Ec2Error>;

    /// `DeleteInstanceProfile`: deletes `name`, which must hold no role.
    async fn delete_instance_profile(&self, name: &str) -> Result<(), Ec2Error>;

    /// `ListInstanceProfiles`: every profile whose path starts with
    /// `path_prefix`, in IAM's order (by name).
    async fn list_instance_profiles(
        &self,
        path_prefix: &str,
    ) -> Result<Vec<InstanceProfile>, Ec2Error>;
}

/// Whether IAM refused to create an entity whose name is taken
/// ([`ENTITY_ALREADY_EXISTS`], upstream's `IsAlreadyExists`).
pub fn is_already_exists(error: &Ec2Error) -> bool {
    error.code() == Some(ENTITY_ALREADY_EXISTS)
}

/// Whether IAM refused for a quota ([`LIMIT_EXCEEDED`]): not retryable,
/// the account or the profile must change first.
pub fn is_limit_exceeded(error: &Ec2Error) -> bool {
    error.code() == Some(LIMIT_EXCEEDED)
}

/// Whether `AddRoleToInstanceProfile` failed because the role, not the
/// profile, does not exist: [`NO_SUCH_ENTITY`] with a message naming a
/// role, as upstream tells them apart.
pub fn is_role_not_found(error: &Ec2Error) -> bool {
    match error {
        Ec2Error::Service { code, message, .. } => {
            code == NO_SUCH_ENTITY && message.contains("role")
        }
        _ => false,
    }
}
