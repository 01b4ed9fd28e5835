use serde_json::{Value, json};

use super::*;
use crate::arm::{load_balancer, network_security_group};

const GROUP: &str = "/subscriptions/subscriptionID/resourceGroups/test-rg";

/// Upstream's `MakeStandardLoadBalancer`: the inbound pool, and the
/// outbound one when asked.
fn standard(name: &str, outbound: bool) -> Value {
    let pools: &[&str] = if outbound {
        &["kubernetes", "aksOutboundBackendPool"]
    } else {
        &["kubernetes"]
    };
    load_balancer(GROUP, name, pools)
}

fn pool(lb: &str, pool: &str) -> String {
    format!("{GROUP}/providers/Microsoft.Network/loadBalancers/{lb}/backendAddressPools/{pool}")
}

#[test]
fn pools_of_the_cluster_load_balancers_only() {
    let lbs = [
        standard("kubernetes", true),
        standard("kubernetes-internal", false),
        standard("some-lb", true),
        standard("kubernetes-ipv6", true),
    ];
    assert_eq!(
        backend_pool_ids(&lbs),
        [
            pool("kubernetes", "kubernetes"),
            pool("kubernetes", "aksOutboundBackendPool"),
            pool("kubernetes-internal", "kubernetes"),
        ]
    );
}

#[test]
fn ip_based_and_ipv6_pools_are_left_out() {
    let mut lb = standard("kubernetes", true);
    lb["properties"]["backendAddressPools"][1]["properties"]["loadBalancerBackendAddresses"] =
        json!([{"properties": {"ipAddress": "1.2.3.4"}}]);
    let mut ipv6 = load_balancer(
        GROUP,
        "Kubernetes",
        &["aksOutboundBackendPool-ipv6", "kubernetes-IPv6"],
    );
    // An address entry without an IP does not make a pool IP-based.
    ipv6["properties"]["backendAddressPools"][0]["properties"]["loadBalancerBackendAddresses"] =
        json!([{"properties": {}}]);
    let lbs = [lb, standard("kubernetes-internal", false), ipv6];
    assert_eq!(
        backend_pool_ids(&lbs),
        [
            pool("kubernetes", "kubernetes"),
            pool("kubernetes-internal", "kubernetes")
        ]
    );
}

#[test]
fn a_pool_without_name_or_properties_is_not_joined() {
    let lb = json!({"name": "kubernetes", "properties": {"backendAddressPools": [
        {"id": "a", "properties": {}},
        {"id": "b", "name": "p"},
        {"id": "", "name": "q", "properties": {}},
        {"id": "c", "name": "r", "properties": {}},
    ]}});
    assert_eq!(backend_pool_ids(&[lb]), ["c"]);
}

#[test]
fn the_one_agentpool_security_group_is_the_clusters() {
    let groups = [
        network_security_group(GROUP, "my-nsg"),
        network_security_group(GROUP, "aks-agentpool-0000000-nsg"),
        network_security_group(GROUP, "aks-agentpool-123456789-nsg"),
        network_security_group(GROUP, "AKS-agentpool-46593302-NSG"),
    ];
    let found = cluster_security_group(&groups).expect("one");
    assert_eq!(found.name, "AKS-agentpool-46593302-NSG");
    assert_eq!(found.cluster_id, "46593302");
    assert_eq!(
        found.id,
        format!(
            "{GROUP}/providers/Microsoft.Network/networkSecurityGroups/AKS-agentpool-46593302-NSG"
        )
    );
    assert_eq!(found.route_table(), "aks-agentpool-46593302-routetable");
}

#[test]
fn no_or_several_cluster_security_groups_is_an_error() {
    assert_eq!(
        cluster_security_group(&[network_security_group(GROUP, "aks-agentpool-abcdefgh-nsg")]),
        Err(NetworkError::NoClusterSecurityGroup)
    );
    let several = [
        network_security_group(GROUP, "aks-agentpool-22222222-nsg"),
        network_security_group(GROUP, "aks-agentpool-11111111-nsg"),
    ];
    let error = cluster_security_group(&several).expect_err("two");
    assert_eq!(
        error.to_string(),
        "several network security groups look like the cluster's: \
         aks-agentpool-11111111-nsg, aks-agentpool-22222222-nsg"
    );
    assert_eq!(
        cluster_security_group(&[json!({"name": "aks-agentpool-11111111-nsg"})]),
        Err(NetworkError::SecurityGroupWithoutId {
            name: "aks-agentpool-11111111-nsg".to_owned()
        })
    );
}

fn subnet(group: &str, vnet: &str, name: &str) -> SubnetId {
    SubnetId {
        subscription: "12345678-1234-1234-1234-123456789012".to_owned(),
        resource_group: group.to_owned(),
        vnet: vnet.to_owned(),
        subnet: name.to_owned(),
    }
}

#[test]
fn only_aks_subnet_of_an_aks_vnet_in_the_node_group_is_managed() {
    let node_group = "MC_rg_c_eastus";
    assert!(is_aks_managed_subnet(
        node_group,
        &subnet("mc_rg_c_eastus", "AKS-VNET-12345678", "AKS-subnet")
    ));
    for (group, vnet, name) in [
        ("other-rg", "aks-vnet-12345678", "aks-subnet"),
        (node_group, "aks-vnet-1234567", "aks-subnet"),
        (node_group, "aks-vnet-1234567a", "aks-subnet"),
        (node_group, "my-vnet", "aks-subnet"),
        (node_group, "aks-vnet-12345678", "nodes"),
    ] {
        assert!(
            !is_aks_managed_subnet(node_group, &subnet(group, vnet, name)),
            "{group}/{vnet}/{name}"
        );
    }
}

fn names(configs: &[Value]) -> Vec<&str> {
    configs.iter().filter_map(|c| c["name"].as_str()).collect()
}

#[test]
fn azure_cni_on_the_node_subnet_gets_max_pods_configurations() {
    let pools = vec![pool("kubernetes", "kubernetes")];
    let configs = ip_configurations(
        "aks-a",
        "/sub/net",
        &pools,
        NetworkPlugin::Azure,
        NetworkPluginMode::NodeSubnet,
        30,
    );
    assert_eq!(configs.len(), 30);
    assert_eq!(names(&configs)[..3], ["aks-a", "ipconfig1", "ipconfig2"]);
    assert_eq!(names(&configs)[29], "ipconfig29");
    let primaries: Vec<bool> = configs
        .iter()
        .map(|c| c["properties"]["primary"] == true)
        .collect();
    assert_eq!(primaries.iter().filter(|p| **p).count(), 1);
    assert!(primaries[0]);
    assert_eq!(
        configs[0]["properties"]["loadBalancerBackendAddressPools"],
        json!([{"id": pools[0]}])
    );
    assert!(configs[1]["properties"]["loadBalancerBackendAddressPools"].is_null());
    assert!(
        configs
            .iter()
            .all(|c| c["properties"]["subnet"]["id"] == "/sub/net")
    );
}

#[test]
fn overlay_and_no_plugin_get_one_configuration() {
    for (plugin, mode) in [
        (NetworkPlugin::Azure, NetworkPluginMode::Overlay),
        (NetworkPlugin::None, NetworkPluginMode::NodeSubnet),
    ] {
        let configs = ip_configurations("aks-a", "/sub/net", &[], plugin, mode, 250);
        assert_eq!(names(&configs), ["aks-a"], "{plugin:?} {mode:?}");
    }
}

#[test]
fn a_vnets_guid_is_its_non_empty_resource_guid() {
    let guid = "a519e60a-cac0-40b2-b883-084477fe6f5c";
    assert_eq!(
        vnet_guid(&json!({"properties": {"resourceGuid": guid}})),
        Some(guid)
    );
    assert_eq!(
        vnet_guid(&json!({"properties": {"resourceGuid": ""}})),
        None
    );
    assert_eq!(vnet_guid(&json!({"name": "v"})), None);
}
