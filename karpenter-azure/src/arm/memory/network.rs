//! The network side of [`InMemoryCompute`](super::InMemoryCompute): the
//! load balancers and security groups an AKS node resource group holds, and
//! the check ARM makes of the backend pools a NIC names.

use std::collections::BTreeSet;

use serde_json::{Value, json};

/// The resource group ID the load balancer and security group an
/// [`InMemoryCompute`](super::InMemoryCompute) starts with are in.
pub const IN_MEMORY_GROUP_ID: &str =
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/mc_rg";

/// A load balancer as ARM lists it: `name` in the resource group
/// `group_id` (`/subscriptions/<s>/resourceGroups/<g>`), with a backend pool
/// of each name in `pools`.
pub fn load_balancer(group_id: &str, name: &str, pools: &[&str]) -> Value {
    let id = format!("{group_id}/providers/Microsoft.Network/loadBalancers/{name}");
    let pools: Vec<Value> = pools
        .iter()
        .map(|pool| {
            json!({
                "id": format!("{id}/backendAddressPools/{pool}"),
                "name": pool,
                "properties": {},
            })
        })
        .collect();
    json!({"id": id, "name": name, "properties": {"backendAddressPools": pools}})
}

/// A network security group `name` in the resource group `group_id`, as ARM
/// lists it.
pub fn network_security_group(group_id: &str, name: &str) -> Value {
    json!({
        "id": format!("{group_id}/providers/Microsoft.Network/networkSecurityGroups/{name}"),
        "name": name,
        "properties": {},
    })
}

/// The backend pool IDs of every load balancer in `load_balancers`.
pub(super) fn pool_ids(load_balancers: &[Value]) -> BTreeSet<String> {
    load_balancers
        .iter()
        .filter_map(|lb| lb["properties"]["backendAddressPools"].as_array())
        .flatten()
        .filter_map(|pool| pool["id"].as_str())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The first backend pool a NIC body refers to that is not among `known`
/// (lower-cased IDs), as ARM checks a NIC's references.
pub(super) fn missing_pool(nic: &Value, known: &BTreeSet<String>) -> Option<String> {
    nic["properties"]["ipConfigurations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|config| config["properties"]["loadBalancerBackendAddressPools"].as_array())
        .flatten()
        .filter_map(|pool| pool["id"].as_str())
        .find(|id| !known.contains(&id.to_ascii_lowercase()))
        .map(str::to_owned)
}

/// Whether the ARM ID `id` names `name` in the resource group `group`
/// (both matched without regard to case, as ARM does).
pub(super) fn names(id: &str, group: &str, name: &str) -> bool {
    let parts: Vec<&str> = id.split('/').collect();
    let group_matches = parts
        .iter()
        .position(|p| p.eq_ignore_ascii_case("resourceGroups"))
        .and_then(|i| parts.get(i + 1))
        .is_some_and(|g| g.eq_ignore_ascii_case(group));
    group_matches && parts.last().is_some_and(|n| n.eq_ignore_ascii_case(name))
}
