//! SSM Parameter Store reads behind [`ParameterApi`]: the public
//! parameters an `EC2NodeClass` alias names (the EKS-optimised AMI ids),
//! and [`InMemoryParameters`] for tests and simulations.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;

use super::{Ec2Error, Operation};

/// The code SSM answers for a parameter that does not exist.
pub const PARAMETER_NOT_FOUND: &str = "ParameterNotFound";

/// What the provider asks of SSM Parameter Store.
///
/// The contract an implementation keeps: a parameter that exists answers
/// its value; one that does not is [`Ec2Error::Service`] with code
/// [`PARAMETER_NOT_FOUND`], as SSM answers; other failures are classified
/// as for [`Ec2Api`](super::Ec2Api).
#[async_trait]
pub trait ParameterApi: Send + Sync {
    /// `GetParameter`: the value of the parameter `name`.
    async fn get_parameter(&self, name: &str) -> Result<String, Ec2Error>;
}

/// An in-memory Parameter Store: the parameters set on it, nothing else.
/// Clones share the same parameters.
#[derive(Clone, Debug, Default)]
pub struct InMemoryParameters {
    values: Arc<Mutex<BTreeMap<String, String>>>,
}

impl InMemoryParameters {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the parameter `name` to `value`.
    pub fn set(&self, name: impl Into<String>, value: impl Into<String>) {
        self.values
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.into(), value.into());
    }
}

#[async_trait]
impl ParameterApi for InMemoryParameters {
    async fn get_parameter(&self, name: &str) -> Result<String, Ec2Error> {
        let values = self.values.lock().unwrap_or_else(PoisonError::into_inner);
        values.get(name).cloned().ok_or_else(|| {
            Ec2Error::service(
                Operation::GetParameter,
                PARAMETER_NOT_FOUND,
                format!("parameter {name} not found"),
            )
        })
    }
}
