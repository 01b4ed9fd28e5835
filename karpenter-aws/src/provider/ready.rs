//! Whether a class can launch, as upstream's `Create` checks it first.

use karpenter_core::api::ConditionStatus;
use karpenter_core::cloudprovider::CloudProviderError;

use crate::nodeclass::EC2NodeClass;

/// The condition that says a class is ready.
const READY: &str = "Ready";

/// Why the class cannot launch yet, as upstream's `Create` decides: its
/// `Ready` condition `False` (not ready, with its message) or `Unknown` (a
/// `NodeClassReadinessUnknown` create error); then, whatever the
/// condition says, a status without resolved subnets, security groups or
/// AMIs (not ready, naming the empty field), which a launch needs.
pub(crate) fn not_ready(class: &EC2NodeClass) -> Option<CloudProviderError> {
    let name = class.metadata.name.clone().unwrap_or_default();
    let status = class.status.as_ref();
    let ready = status
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
        .iter()
        .find(|c| c.type_ == READY);
    if let Some(ready) = ready {
        let message = ready.message.clone().unwrap_or_default();
        match ready.status {
            ConditionStatus::False => {
                return Some(CloudProviderError::NodeClassNotReady { name, message });
            }
            ConditionStatus::Unknown => {
                return Some(CloudProviderError::Create {
                    reason: "NodeClassReadinessUnknown".to_owned(),
                    message: format!("the EC2NodeClass is in Ready=Unknown: {message}"),
                    source: None,
                });
            }
            ConditionStatus::True => {}
        }
    }
    let missing = [
        (
            "status.subnets",
            status
                .and_then(|s| s.subnets.as_ref())
                .is_none_or(Vec::is_empty),
        ),
        (
            "status.securityGroups",
            status
                .and_then(|s| s.security_groups.as_ref())
                .is_none_or(Vec::is_empty),
        ),
        (
            "status.amis",
            status
                .and_then(|s| s.amis.as_ref())
                .is_none_or(Vec::is_empty),
        ),
    ]
    .into_iter()
    .find(|(_, empty)| *empty)?;
    Some(CloudProviderError::NodeClassNotReady {
        name,
        message: format!("{}: nothing resolved yet", missing.0),
    })
}
