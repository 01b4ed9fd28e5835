use std::collections::BTreeMap;

use super::*;

const TOKEN: &str = "abcdef.0123456789abcdef";
const SUBNET: &str = "/subscriptions/12345678-1234-1234-1234-123456789012/resourceGroups/MC_rg_c_eastus/providers/Microsoft.Network/virtualNetworks/aks-vnet-12345678/subnets/aks-subnet";

fn minimal() -> BTreeMap<&'static str, String> {
    [
        ("CLUSTER_NAME", "c"),
        (
            "CLUSTER_ENDPOINT",
            "https://c-dns-1234.hcp.eastus.azmk8s.io:443",
        ),
        ("KUBELET_BOOTSTRAP_TOKEN", TOKEN),
        ("SSH_PUBLIC_KEY", "ssh-ed25519 AAAA azureuser"),
        ("VNET_SUBNET_ID", SUBNET),
        ("AZURE_NODE_RESOURCE_GROUP", "MC_rg_c_eastus"),
        ("LOCATION", "eastus"),
    ]
    .into_iter()
    .map(|(k, v)| (k, v.to_owned()))
    .collect()
}

fn read(map: &BTreeMap<&'static str, String>) -> Result<AksSettings, SettingsError> {
    AksSettings::from_lookup(|name| map.get(name).cloned())
}

fn variables(error: &SettingsError) -> Vec<&'static str> {
    error.problems.iter().map(|p| p.variable).collect()
}

#[test]
fn upstreams_defaults_fill_what_is_unset() {
    let settings = read(&minimal()).expect("valid");
    assert_eq!(settings.api_server_name, "c-dns-1234.hcp.eastus.azmk8s.io");
    assert_eq!(settings.linux_admin_username, "azureuser");
    assert_eq!(settings.network_plugin, NetworkPlugin::Azure);
    assert_eq!(settings.network_plugin_mode, NetworkPluginMode::Overlay);
    assert_eq!(settings.network_dataplane, NetworkDataplane::Cilium);
    assert!((settings.vm_memory_overhead_percent - 0.075).abs() < f64::EPSILON);
    assert_eq!(
        settings.subscription_id,
        "12345678-1234-1234-1234-123456789012"
    );
    assert_eq!(settings.subnet.vnet, "aks-vnet-12345678");
    assert_eq!(settings.subnet.id(), SUBNET);
    assert_eq!(settings.network_options().default_max_pods(), 250);
}

#[test]
fn every_missing_setting_is_named_at_once() {
    let error = read(&BTreeMap::new()).expect_err("nothing set");
    assert_eq!(
        variables(&error),
        [
            "CLUSTER_NAME",
            "CLUSTER_ENDPOINT",
            "KUBELET_BOOTSTRAP_TOKEN",
            "SSH_PUBLIC_KEY",
            "VNET_SUBNET_ID",
            "AZURE_NODE_RESOURCE_GROUP",
            "LOCATION"
        ]
    );
    let text = error.to_string();
    assert!(text.starts_with("7 Azure setting(s)"), "{text}");
    assert!(
        text.contains("KUBELET_BOOTSTRAP_TOKEN (--kubelet-bootstrap-token) is required"),
        "{text}"
    );
}

#[test]
fn every_malformed_setting_is_named_with_what_is_wrong() {
    let mut map = minimal();
    for (k, v) in [
        ("CLUSTER_ENDPOINT", "c-dns.hcp.azmk8s.io"),
        (
            "VNET_SUBNET_ID",
            "/subscriptions/s/resourceGroups/rg/subnets/x",
        ),
        ("NETWORK_PLUGIN", "kubenet"),
        ("NETWORK_DATAPLANE", "calico"),
        ("DNS_SERVICE_IP", "10.0.0"),
        ("VNET_GUID", "not-a-guid"),
        ("KUBELET_IDENTITY_CLIENT_ID", "61f71907"),
        ("LINUX_ADMIN_USERNAME", "9user"),
        ("VM_MEMORY_OVERHEAD_PERCENT", "-0.1"),
        ("PROVISION_MODE", "bootstrappingclient"),
        (
            "NODE_OSDISK_DISKENCRYPTIONSET_ID",
            "/subscriptions/s/resourceGroups/rg",
        ),
        ("ADDITIONAL_TAGS", "a=1,A=2"),
    ] {
        map.insert(k, v.to_owned());
    }
    let error = read(&map).expect_err("malformed");
    assert_eq!(error.problems.len(), 12, "{error}");
    let text = error.to_string();
    for needle in [
        "`c-dns.hcp.azmk8s.io` is not an absolute URL",
        "is not a subnet ID",
        "`kubenet` is not `azure` or `none`",
        "`calico` is not `azure`, `cilium` or empty",
        "`10.0.0` is not an IP address",
        "`not-a-guid` is not a UUID",
        "must start with a letter",
        "`-0.1` is not a number at least 0",
        "`bootstrappingclient` is not supported yet",
        "is not a disk encryption set ID",
        "are the same to Azure",
    ] {
        assert!(text.contains(needle), "{needle} not in {text}");
    }
}

#[test]
fn the_bootstrap_token_never_reaches_an_error_or_a_debug_print() {
    let mut map = minimal();
    map.insert(
        "KUBELET_BOOTSTRAP_TOKEN",
        "abcdef.0123456789ABCDEF".to_owned(),
    );
    let error = read(&map).expect_err("upper case is not a token");
    assert_eq!(variables(&error), ["KUBELET_BOOTSTRAP_TOKEN"]);
    assert!(!error.to_string().contains("0123456789"), "{error}");
    assert!(!format!("{error:?}").contains("0123456789"));

    let settings = read(&minimal()).expect("valid");
    assert!(!format!("{settings:?}").contains("0123456789abcdef"));
    assert_eq!(settings.bootstrap_token.id(), "abcdef");
    assert_eq!(settings.bootstrap_token.expose(), TOKEN);
}

#[test]
fn todays_names_are_read_where_upstreams_are_unset() {
    let mut map = minimal();
    let subnet = map.remove("VNET_SUBNET_ID").expect("set");
    map.remove("LOCATION");
    map.insert("AZURE_SUBNET_ID", subnet);
    map.insert("AZURE_LOCATION", "westeurope".to_owned());
    map.insert("ARM_SUBSCRIPTION_ID", "sub".to_owned());
    let settings = read(&map).expect("aliases accepted");
    assert_eq!(settings.location, "westeurope");
    assert_eq!(settings.subscription_id, "sub");
    map.insert("LOCATION", "eastus".to_owned());
    assert_eq!(read(&map).expect("valid").location, "eastus");
}

#[test]
fn an_empty_plugin_mode_is_the_node_subnet_and_none_needs_it() {
    let mut map = minimal();
    map.insert("NETWORK_PLUGIN_MODE", String::new());
    let settings = read(&map).expect("valid");
    assert_eq!(settings.network_plugin_mode, NetworkPluginMode::NodeSubnet);
    assert_eq!(settings.network_options().default_max_pods(), 30);

    map.insert("NETWORK_PLUGIN", "none".to_owned());
    assert!(read(&map).is_ok());
    map.insert("NETWORK_PLUGIN_MODE", "overlay".to_owned());
    let error = read(&map).expect_err("none with overlay");
    assert_eq!(variables(&error), ["NETWORK_PLUGIN_MODE"]);

    map.insert("NETWORK_PLUGIN", "azure".to_owned());
    map.insert("NETWORK_DATAPLANE", String::new());
    assert_eq!(
        read(&map).expect("valid").network_dataplane,
        NetworkDataplane::Unset
    );
}

#[test]
fn lists_and_tags_read_as_upstream_writes_them() {
    let mut map = minimal();
    map.insert("NODE_IDENTITIES", " /id/a , /id/b ,".to_owned());
    map.insert("ADDITIONAL_TAGS", "team=infra, cost=42".to_owned());
    map.insert(
        "VNET_GUID",
        "A519E60A-CAC0-40B2-B883-084477FE6F5C".to_owned(),
    );
    let settings = read(&map).expect("valid");
    assert_eq!(settings.node_identities, ["/id/a", "/id/b"]);
    assert_eq!(
        settings.additional_tags.get("cost").map(String::as_str),
        Some("42")
    );
    assert_eq!(
        settings.vnet_guid.as_deref(),
        Some("a519e60a-cac0-40b2-b883-084477fe6f5c")
    );
}

#[test]
fn every_setting_has_a_distinct_name_and_flag() {
    let mut names: Vec<&str> = SETTINGS
        .iter()
        .flat_map(|s| std::iter::once(s.variable).chain(s.aliases.iter().copied()))
        .collect();
    let total = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), total);
    let mut flags: Vec<&str> = SETTINGS.iter().map(|s| s.flag).collect();
    flags.sort_unstable();
    flags.dedup();
    assert_eq!(flags.len(), SETTINGS.len());
}
