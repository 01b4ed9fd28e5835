//! [`InMemoryIam`]: a deterministic IAM keeping instance profiles, the
//! roles that exist and each operation's calls, with injected faults.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use super::{
    CreateInstanceProfileInput, ENTITY_ALREADY_EXISTS, IamApi, InstanceProfile, LIMIT_EXCEEDED,
    NO_SUCH_ENTITY, Role,
};
use crate::ec2::faults::Faults;
use crate::ec2::{Ec2Error, Operation};

/// An in-memory IAM: the roles added to it, the instance profiles made
/// through it, and IAM's rules over them (one role per profile, no
/// deleting a profile that holds one). Clones share the same state.
#[derive(Clone, Debug, Default)]
pub struct InMemoryIam {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    roles: BTreeSet<String>,
    profiles: BTreeMap<String, InstanceProfile>,
    calls: BTreeMap<Operation, usize>,
    faults: Faults,
}

impl State {
    /// Counts a call of `operation`, then fails it if a fault is queued.
    fn call(&mut self, operation: Operation) -> Result<(), Ec2Error> {
        *self.calls.entry(operation).or_default() += 1;
        self.faults.take(operation)
    }

    fn profile_mut(
        &mut self,
        operation: Operation,
        name: &str,
    ) -> Result<&mut InstanceProfile, Ec2Error> {
        self.profiles
            .get_mut(name)
            .ok_or_else(|| profile_not_found(operation, name))
    }
}

fn profile_not_found(operation: Operation, name: &str) -> Ec2Error {
    let message = format!("Instance Profile {name} cannot be found.");
    Ec2Error::service(operation, NO_SUCH_ENTITY, message)
}

impl InMemoryIam {
    /// An IAM with no role and no profile.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes the role `name` exist.
    pub fn add_role(&self, name: &str) {
        self.lock().roles.insert(name.to_owned());
    }

    /// Puts `profile` in as given (one made outside the provider).
    pub fn insert_profile(&self, profile: InstanceProfile) {
        let name = profile.instance_profile_name.clone();
        self.lock().profiles.insert(name, profile);
    }

    /// The profile `name`, if it exists.
    pub fn profile(&self, name: &str) -> Option<InstanceProfile> {
        self.lock().profiles.get(name).cloned()
    }

    /// Every profile, by name.
    pub fn profiles(&self) -> Vec<InstanceProfile> {
        self.lock().profiles.values().cloned().collect()
    }

    /// How many calls of `operation` were made, failed ones included.
    pub fn calls(&self, operation: Operation) -> usize {
        self.lock()
            .calls
            .get(&operation)
            .copied()
            .unwrap_or_default()
    }

    /// Makes the next call of `operation` fail with `error`; several
    /// injected for one operation fail its next calls in turn.
    pub fn fail_next(&self, operation: Operation, error: Ec2Error) {
        self.lock().faults.push(operation, error);
    }
}

#[async_trait]
impl IamApi for InMemoryIam {
    async fn get_instance_profile(&self, name: &str) -> Result<InstanceProfile, Ec2Error> {
        let op = Operation::GetInstanceProfile;
        let mut state = self.lock();
        state.call(op)?;
        state.profile_mut(op, name).map(|p| p.clone())
    }

    async fn create_instance_profile(
        &self,
        input: CreateInstanceProfileInput,
    ) -> Result<InstanceProfile, Ec2Error> {
        let op = Operation::CreateInstanceProfile;
        let mut state = self.lock();
        state.call(op)?;
        let name = input.instance_profile_name;
        if state.profiles.contains_key(&name) {
            let message = format!("Instance Profile {name} already exists.");
            return Err(Ec2Error::service(op, ENTITY_ALREADY_EXISTS, message));
        }
        let profile = InstanceProfile {
            instance_profile_name: name.clone(),
            path: input.path.unwrap_or_else(|| "/".to_owned()),
            roles: Vec::new(),
            tags: input.tags,
        };
        state.profiles.insert(name, profile.clone());
        Ok(profile)
    }

    async fn add_role_to_instance_profile(
        &self,
        profile: &str,
        role: &str,
    ) -> Result<(), Ec2Error> {
        let op = Operation::AddRoleToInstanceProfile;
        let mut state = self.lock();
        state.call(op)?;
        if !state.roles.contains(role) {
            let message = format!("The role with name {role} cannot be found.");
            return Err(Ec2Error::service(op, NO_SUCH_ENTITY, message));
        }
        let held = state.profile_mut(op, profile)?;
        if !held.roles.is_empty() {
            let message = "Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1";
            return Err(Ec2Error::service(op, LIMIT_EXCEEDED, message));
        }
        held.roles.push(Role {
            role_name: role.to_owned(),
            path: "/".to_owned(),
        });
        Ok(())
    }

    async fn remove_role_from_instance_profile(
        &self,
        profile: &str,
        role: &str,
    ) -> Result<(), Ec2Error> {
        let op = Operation::RemoveRoleFromInstanceProfile;
        let mut state = self.lock();
        state.call(op)?;
        let held = state.profile_mut(op, profile)?;
        let before = held.roles.len();
        held.roles.retain(|r| r.role_name != role);
        if held.roles.len() == before {
            let message = format!("The role with name {role} cannot be found.");
            return Err(Ec2Error::service(op, NO_SUCH_ENTITY, message));
        }
        Ok(())
    }

    async fn delete_instance_profile(&self, name: &str) -> Result<(), Ec2Error> {
        let op = Operation::DeleteInstanceProfile;
        let mut state = self.lock();
        state.call(op)?;
        if !state.profile_mut(op, name)?.roles.is_empty() {
            let message = "Cannot delete entity, must remove roles from instance profile first.";
            return Err(Ec2Error::service(op, "DeleteConflict", message));
        }
        state.profiles.remove(name);
        Ok(())
    }

    async fn list_instance_profiles(
        &self,
        path_prefix: &str,
    ) -> Result<Vec<InstanceProfile>, Ec2Error> {
        let mut state = self.lock();
        state.call(Operation::ListInstanceProfiles)?;
        let found = state.profiles.values();
        let found = found.filter(|p| p.path.starts_with(path_prefix));
        Ok(found.cloned().collect())
    }
}
