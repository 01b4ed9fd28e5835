//! Provider IDs of EC2 instances: `aws:///<zone>/<instance-id>`, as the
//! AWS cloud controller writes them on nodes.

use thiserror::Error;

const PROVIDER_ID_PREFIX: &str = "aws:///";

/// The provider ID of instance `instance_id` in `zone`:
/// `aws:///<zone>/<instance-id>`, as the AWS cloud controller writes it.
pub fn provider_id(zone: &str, instance_id: &str) -> String {
    format!("{PROVIDER_ID_PREFIX}{zone}/{instance_id}")
}

/// A provider ID that is not `aws:///<zone>/<instance-id>`.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("provider ID {provider_id:?} is not aws:///<zone>/<instance-id>: {problem}")]
pub struct ProviderIdError {
    /// The provider ID as given.
    pub provider_id: String,
    /// What is wrong with it.
    pub problem: &'static str,
}

/// The (zone, instance ID) of a provider ID written by [`provider_id`].
pub fn parse_provider_id(provider_id: &str) -> Result<(&str, &str), ProviderIdError> {
    let fail = |problem| ProviderIdError {
        provider_id: provider_id.to_owned(),
        problem,
    };
    let rest = provider_id
        .strip_prefix(PROVIDER_ID_PREFIX)
        .ok_or_else(|| fail("it does not start with aws:///"))?;
    let (zone, id) = rest
        .split_once('/')
        .ok_or_else(|| fail("it has no instance ID"))?;
    if zone.is_empty() {
        return Err(fail("the zone is empty"));
    }
    if id.is_empty() || id.contains('/') {
        return Err(fail("the instance ID is empty or holds a '/'"));
    }
    Ok((zone, id))
}
