//! A joining node's NIC and VM on the in-memory ARM: the load balancer
//! pools, the cluster NSG on a user's VNet, Azure CNI's secondary
//! addresses, the identities, admin user and OS disk, and the pools listed
//! again when one is gone.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use jiff::{SignedDuration, Timestamp};
use karpenter_azure::arm::{
    ComputeApi, IN_MEMORY_GROUP_ID, InMemoryCompute, load_balancer, network_security_group,
};
use karpenter_azure::{AKSNodeClass, AksSettings, AzureCloudProvider, ClusterFacts, JoinConfig};
use karpenter_core::cloudprovider::CloudProvider;
use serde_json::{Value, json};

use crate::common::{claim, config};

const BYO_SUBNET: &str = "/subscriptions/sub-1/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes";
const AKS_SUBNET: &str = "/subscriptions/sub-1/resourceGroups/MC_rg_cluster_eastus/providers/Microsoft.Network/virtualNetworks/aks-vnet-12345678/subnets/aks-subnet";
const IDENTITY: &str = "/subscriptions/sub-1/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/kubelet";
const DES: &str =
    "/subscriptions/sub-1/resourceGroups/rg/providers/Microsoft.Compute/diskEncryptionSets/des";

const VNET_GUID: &str = "a519e60a-cac0-40b2-b883-084477fe6f5c";

/// AKS's own VNet in the node resource group, as ARM reads it.
fn aks_vnet() -> Value {
    let id = AKS_SUBNET
        .rsplit_once("/subnets/")
        .map_or(AKS_SUBNET, |(vnet, _)| vnet);
    json!({"id": id, "name": "aks-vnet-12345678", "properties": {"resourceGuid": VNET_GUID}})
}

fn join(subnet: &str, extra: &[(&str, &str)]) -> JoinConfig {
    let mut env: BTreeMap<&str, &str> = [
        ("CLUSTER_NAME", "cluster"),
        (
            "CLUSTER_ENDPOINT",
            "https://cluster-dns.hcp.eastus.azmk8s.io:443",
        ),
        ("KUBELET_BOOTSTRAP_TOKEN", "abcdef.0123456789abcdef"),
        ("SSH_PUBLIC_KEY", "ssh-ed25519 AAAA test"),
        ("VNET_SUBNET_ID", subnet),
        ("AZURE_NODE_RESOURCE_GROUP", "MC_rg_cluster_eastus"),
        ("LOCATION", "eastus"),
    ]
    .into_iter()
    .collect();
    env.extend(extra.iter().copied());
    let settings =
        AksSettings::from_lookup(|name| env.get(name).map(|v| (*v).to_owned())).expect("valid");
    JoinConfig {
        settings,
        cluster: ClusterFacts {
            ca_bundle: "Y2E=".to_owned(),
            kubernetes_version: "1.31.2".to_owned(),
            cluster_dns: [10, 0, 0, 10].into(),
        },
    }
}

fn provider(
    arm: &InMemoryCompute,
    join: JoinConfig,
    subnet: &str,
) -> AzureCloudProvider<InMemoryCompute> {
    let mut config = config();
    config.subnet_id = subnet.to_owned();
    config.network = join.settings.network_options();
    config.join = Some(join);
    let provider = AzureCloudProvider::new(arm.clone(), config);
    let class: AKSNodeClass = serde_json::from_value(json!({
        "metadata": {"name": "default"},
        "spec": {"osDiskSizeGB": 30, "maxPods": 30, "tags": {"team": "web", "env": "class"}},
    }))
    .expect("a class");
    provider.apply_node_class(class);
    provider
}

fn d2s(name: &str) -> karpenter_core::api::NodeClaim {
    claim(
        name,
        json!([{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2s_v3"]}]),
    )
}

fn pool_id(lb: &str, pool: &str) -> String {
    format!(
        "{IN_MEMORY_GROUP_ID}/providers/Microsoft.Network/loadBalancers/{lb}/backendAddressPools/{pool}"
    )
}

async fn vm(arm: &InMemoryCompute, name: &str) -> Value {
    arm.get_vm(name).await.expect("read").expect("a VM")
}

fn pools_of(nic: &Value) -> Vec<String> {
    nic["properties"]["ipConfigurations"][0]["properties"]["loadBalancerBackendAddressPools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["id"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_node_subnet_node_on_a_users_vnet_gets_pools_nsg_addresses_and_identity() {
    let arm = InMemoryCompute::new().with_load_balancers(vec![
        load_balancer(
            IN_MEMORY_GROUP_ID,
            "kubernetes",
            &["kubernetes", "aksOutboundBackendPool"],
        ),
        load_balancer(IN_MEMORY_GROUP_ID, "kubernetes-internal", &["kubernetes"]),
        load_balancer(IN_MEMORY_GROUP_ID, "other", &["kubernetes"]),
    ]);
    let settings = [
        ("NETWORK_PLUGIN_MODE", ""),
        ("NETWORK_DATAPLANE", "azure"),
        ("NODE_IDENTITIES", IDENTITY),
        ("LINUX_ADMIN_USERNAME", "kubeadmin"),
        ("NODE_OSDISK_DISKENCRYPTIONSET_ID", DES),
        ("ADDITIONAL_TAGS", "env=extra,owner=ops"),
    ];
    let provider = provider(&arm, join(BYO_SUBNET, &settings), BYO_SUBNET);
    provider.create(&d2s("default-j1")).await.expect("launched");

    let nic = arm.nic("aks-default-j1").expect("a NIC");
    assert_eq!(
        pools_of(&nic),
        [
            pool_id("kubernetes", "kubernetes"),
            pool_id("kubernetes", "aksOutboundBackendPool"),
            pool_id("kubernetes-internal", "kubernetes"),
        ]
    );
    assert_eq!(
        nic["properties"]["networkSecurityGroup"]["id"],
        format!(
            "{IN_MEMORY_GROUP_ID}/providers/Microsoft.Network/networkSecurityGroups/aks-agentpool-12345678-nsg"
        )
    );
    let configs = nic["properties"]["ipConfigurations"]
        .as_array()
        .expect("configs");
    assert_eq!(configs.len(), 30, "maxPods addresses");
    assert_eq!(configs[0]["name"], "aks-default-j1");
    assert_eq!(configs[29]["name"], "ipconfig29");
    assert!(
        configs
            .iter()
            .all(|c| c["properties"]["subnet"]["id"] == BYO_SUBNET)
    );

    let vm = vm(&arm, "aks-default-j1").await;
    assert_eq!(
        vm["identity"],
        json!({"type": "UserAssigned", "userAssignedIdentities": {IDENTITY: {}}})
    );
    let os = &vm["properties"]["osProfile"];
    assert_eq!(os["adminUsername"], "kubeadmin");
    assert_eq!(
        os["linuxConfiguration"]["ssh"]["publicKeys"][0]["path"],
        "/home/kubeadmin/.ssh/authorized_keys"
    );
    let disk = &vm["properties"]["storageProfile"]["osDisk"];
    assert_eq!(
        disk["diffDiskSettings"],
        json!({"option": "Local", "placement": "CacheDisk"})
    );
    assert_eq!(disk["managedDisk"]["diskEncryptionSet"]["id"], DES);
    // ADDITIONAL_TAGS under the class's, the provider's over both.
    assert_eq!(vm["tags"]["env"], "class");
    assert_eq!(vm["tags"]["owner"], "ops");
    assert_eq!(vm["tags"]["karpenter.azure.com_cluster"], "cluster");
    assert_eq!(nic["tags"], vm["tags"]);
}

#[tokio::test]
async fn an_overlay_node_in_the_aks_subnet_gets_one_address_and_no_nsg() {
    let arm = InMemoryCompute::new().with_virtual_networks(vec![aks_vnet()]);
    let provider = provider(&arm, join(AKS_SUBNET, &[]), AKS_SUBNET);
    provider.create(&d2s("default-j2")).await.expect("launched");
    let nic = arm.nic("aks-default-j2").expect("a NIC");
    assert_eq!(
        nic["properties"]["ipConfigurations"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert!(
        nic["properties"]["networkSecurityGroup"].is_null(),
        "AKS's subnet has the NSG"
    );
    // Read all the same: the custom data names it and its route table.
    assert_eq!(arm.security_group_listings(), 1);
    assert_eq!(pools_of(&nic).len(), 2);
    let vm = vm(&arm, "aks-default-j2").await;
    assert!(vm["identity"].is_null(), "no NODE_IDENTITIES");
    assert_eq!(vm["properties"]["osProfile"]["adminUsername"], "azureuser");
}

#[tokio::test]
async fn pools_are_kept_two_hours_and_listed_again_once_when_one_is_gone() {
    let arm = InMemoryCompute::new();
    let now = Arc::new(Mutex::new(
        Timestamp::from_second(1_800_000_000).expect("a time"),
    ));
    let clock = Arc::clone(&now);
    let provider = provider(
        &arm,
        join(BYO_SUBNET, &[("VNET_GUID", VNET_GUID)]),
        BYO_SUBNET,
    )
    .with_clock(move || *clock.lock().expect("clock"));
    provider.create(&d2s("default-j3")).await.expect("launched");
    provider.create(&d2s("default-j4")).await.expect("launched");
    assert_eq!(arm.load_balancer_listings(), 1, "kept");
    assert_eq!(arm.security_group_listings(), 1, "kept");

    // The outbound pool goes: the next NIC is refused, the pools are listed
    // again and the NIC goes through without it.
    arm.set_load_balancers(vec![load_balancer(
        IN_MEMORY_GROUP_ID,
        "kubernetes",
        &["kubernetes"],
    )]);
    provider.create(&d2s("default-j5")).await.expect("launched");
    assert_eq!(arm.load_balancer_listings(), 2);
    assert_eq!(
        pools_of(&arm.nic("aks-default-j5").expect("a NIC")),
        [pool_id("kubernetes", "kubernetes")]
    );

    // Two hours on, the pools are listed anew.
    *now.lock().expect("clock") += SignedDuration::from_hours(2);
    arm.set_load_balancers(vec![load_balancer(
        IN_MEMORY_GROUP_ID,
        "kubernetes",
        &["kubernetes", "new"],
    )]);
    provider.create(&d2s("default-j6")).await.expect("launched");
    assert_eq!(arm.load_balancer_listings(), 3);
    assert_eq!(
        pools_of(&arm.nic("aks-default-j6").expect("a NIC")).len(),
        2
    );
    assert_eq!(arm.security_group_listings(), 1, "kept for the process");
}

#[tokio::test]
async fn a_missing_cluster_nsg_fails_the_launch_retryably_before_anything_is_made() {
    let arm = InMemoryCompute::new()
        .with_network_security_groups(vec![network_security_group(IN_MEMORY_GROUP_ID, "my-nsg")]);
    let provider = provider(&arm, join(BYO_SUBNET, &[]), BYO_SUBNET);
    let error = provider
        .create(&d2s("default-j7"))
        .await
        .expect_err("no NSG");
    assert!(error.is_retryable(), "{error}");
    assert!(
        error.to_string().contains("network security group"),
        "{error}"
    );
    assert!(arm.nic_names().is_empty() && arm.vm_names().is_empty());
}

#[tokio::test]
async fn without_a_join_config_the_nic_is_as_before() {
    let arm = InMemoryCompute::new();
    let provider = AzureCloudProvider::new(arm.clone(), config());
    provider.create(&d2s("default-j8")).await.expect("launched");
    let nic = arm.nic("aks-default-j8").expect("a NIC");
    assert_eq!(
        nic["properties"]["ipConfigurations"][0]["name"],
        "ipconfig1"
    );
    assert!(pools_of(&nic).is_empty());
    assert_eq!(arm.load_balancer_listings(), 0);
}

#[tokio::test]
async fn the_vnet_guid_is_the_settings_else_read_once_under_overlay() {
    const GUID: &str = "a519e60a-cac0-40b2-b883-084477fe6f5c";
    let vnet = json!({
        "id": "/subscriptions/sub-1/resourceGroups/RG/providers/Microsoft.Network/virtualNetworks/VNET",
        "name": "vnet",
        "properties": {"resourceGuid": GUID},
    });
    let arm = InMemoryCompute::new().with_virtual_networks(vec![vnet]);
    let overlay = provider(&arm, join(BYO_SUBNET, &[]), BYO_SUBNET);
    assert_eq!(
        overlay.vnet_guid().await.expect("read").as_deref(),
        Some(GUID)
    );
    let given = [("VNET_GUID", "11111111-2222-3333-4444-555555555555")];
    let set = provider(&arm, join(BYO_SUBNET, &given), BYO_SUBNET);
    assert_eq!(
        set.vnet_guid().await.expect("given").as_deref(),
        Some(given[0].1)
    );
    let node_subnet = provider(
        &arm,
        join(BYO_SUBNET, &[("NETWORK_PLUGIN_MODE", "")]),
        BYO_SUBNET,
    );
    assert_eq!(node_subnet.vnet_guid().await.expect("none"), None);

    let missing = provider(&InMemoryCompute::new(), join(BYO_SUBNET, &[]), BYO_SUBNET);
    let error = missing.vnet_guid().await.expect_err("no VNet");
    assert!(!error.is_retryable(), "{error}");
    assert!(
        std::error::Error::source(&error)
            .is_some_and(|s| s.to_string().contains("vnet of resource group rg")),
        "{error}"
    );
}

/// The script a VM's custom data holds.
fn script_of(vm: &Value) -> String {
    use base64::Engine as _;
    let data = vm["properties"]["osProfile"]["customData"]
        .as_str()
        .expect("custom data");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("base64");
    String::from_utf8(bytes).expect("text")
}

/// The value the script assigns to `name`.
fn assigned(script: &str, name: &str) -> String {
    let prefix = format!("{name}=");
    script
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("{name} is assigned"))
        .trim_matches('"')
        .to_owned()
}

#[tokio::test]
async fn a_joining_vm_boots_with_the_custom_data_its_cluster_and_arm_give() {
    let arm = InMemoryCompute::new().with_virtual_networks(vec![aks_vnet()]);
    let provider = provider(&arm, join(AKS_SUBNET, &[]), AKS_SUBNET);
    provider.create(&d2s("default-j6")).await.expect("launched");
    let script = script_of(&vm(&arm, "aks-default-j6").await);
    for (name, value) in [
        ("API_SERVER_NAME", "cluster-dns.hcp.eastus.azmk8s.io"),
        ("TLS_BOOTSTRAP_TOKEN", "abcdef.0123456789abcdef"),
        ("KUBE_CA_CRT", "Y2E="),
        // The class has no status: the cluster's version.
        ("KUBERNETES_VERSION", "1.31.2"),
        ("RESOURCE_GROUP", "MC_rg_cluster_eastus"),
        ("NETWORK_SECURITY_GROUP", "aks-agentpool-12345678-nsg"),
        ("ROUTE_TABLE", "aks-agentpool-12345678-routetable"),
        ("VIRTUAL_NETWORK", "aks-vnet-12345678"),
    ] {
        assert_eq!(assigned(&script, name), value, "{name}");
    }
    let labels = assigned(&script, "KUBELET_NODE_LABELS");
    // Read from the VNet, for Azure CNI overlay's daemonsets.
    assert!(
        labels.contains(&format!(
            "kubernetes.azure.com/nodenetwork-vnetguid={VNET_GUID}"
        )),
        "{labels}"
    );
    assert!(labels.contains("karpenter.sh/nodepool="), "{labels}");
    let flags = assigned(&script, "KUBELET_FLAGS");
    assert!(flags.contains("--cluster-dns=10.0.0.10"), "{flags}");
    assert!(
        flags.contains("--max-pods=30"),
        "the class's maxPods: {flags}"
    );
    assert!(
        flags.contains("--register-with-taints=karpenter.sh/unregistered:NoExecute"),
        "{flags}"
    );
}

#[tokio::test]
async fn a_node_that_cannot_render_fails_its_claim_and_makes_nothing() {
    let arm = InMemoryCompute::new().with_virtual_networks(vec![aks_vnet()]);
    let provider = provider(&arm, join(AKS_SUBNET, &[]), AKS_SUBNET);
    let class: AKSNodeClass = serde_json::from_value(json!({
        "metadata": {"name": "default"},
        "spec": {"osDiskSizeGB": 30},
        "status": {"kubernetesVersion": "one.thirty"},
    }))
    .expect("a class");
    provider.apply_node_class(class);
    let error = provider
        .create(&d2s("default-j7"))
        .await
        .expect_err("no version to render");
    let text = error.to_string();
    assert!(text.contains("one.thirty"), "{text}");
    assert!(!text.contains("0123456789abcdef"), "{text}");
    assert!(!error.is_retryable());
    assert!(arm.nic_names().is_empty(), "nothing made");
    assert!(arm.vm_names().is_empty(), "nothing made");
}

#[tokio::test]
async fn without_a_join_configuration_the_vm_boots_the_callers_custom_data() {
    let arm = InMemoryCompute::new();
    let mut config = config();
    config.custom_data = Some("Y3VzdG9t".to_owned());
    let provider = AzureCloudProvider::new(arm.clone(), config);
    provider.create(&d2s("default-j8")).await.expect("launched");
    let vm = vm(&arm, "aks-default-j8").await;
    assert_eq!(vm["properties"]["osProfile"]["customData"], "Y3VzdG9t");
    assert_eq!(arm.security_group_listings(), 0);
}

#[tokio::test]
async fn a_class_naming_its_own_subnet_puts_the_nic_and_the_custom_data_there() {
    let arm = InMemoryCompute::new().with_virtual_networks(vec![aks_vnet()]);
    let provider = provider(&arm, join(AKS_SUBNET, &[]), AKS_SUBNET);
    let class: AKSNodeClass = serde_json::from_value(json!({
        "metadata": {"name": "default"},
        "spec": {"osDiskSizeGB": 30, "vnetSubnetID": BYO_SUBNET},
    }))
    .expect("a class");
    provider.apply_node_class(class);
    provider.create(&d2s("default-j9")).await.expect("launched");
    let nic = arm.nic("aks-default-j9").expect("a NIC");
    assert_eq!(
        nic["properties"]["ipConfigurations"][0]["properties"]["subnet"]["id"],
        BYO_SUBNET
    );
    assert!(
        !nic["properties"]["networkSecurityGroup"].is_null(),
        "the user's VNet gets the cluster's NSG"
    );
    let script = script_of(&vm(&arm, "aks-default-j9").await);
    assert_eq!(assigned(&script, "SUBNET"), "nodes");
    assert_eq!(assigned(&script, "VIRTUAL_NETWORK"), "vnet");
    assert_eq!(assigned(&script, "VIRTUAL_NETWORK_RESOURCE_GROUP"), "rg");

    // Without a join configuration too.
    let plain = InMemoryCompute::new();
    let provider = AzureCloudProvider::new(plain.clone(), config());
    provider.apply_node_class(
        serde_json::from_value(json!({
            "metadata": {"name": "default"},
            "spec": {"vnetSubnetID": BYO_SUBNET},
        }))
        .expect("a class"),
    );
    provider
        .create(&d2s("default-j10"))
        .await
        .expect("launched");
    let nic = plain.nic("aks-default-j10").expect("a NIC");
    assert_eq!(
        nic["properties"]["ipConfigurations"][0]["properties"]["subnet"]["id"],
        BYO_SUBNET
    );
}
