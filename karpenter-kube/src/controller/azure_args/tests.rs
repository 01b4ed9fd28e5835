use std::collections::BTreeMap;

use clap::Parser;
use karpenter_azure::SETTINGS;

use crate::controller::Args;

const TOKEN: &str = "abcdef.0123456789abcdef";
const SUBNET: &str = "/subscriptions/sub-1/resourceGroups/net-rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes";

/// The controller's flags: `--provider azure` and `extra`.
fn args(extra: &[&str]) -> Args {
    let mut argv = vec!["karpenter-controller", "--provider", "azure"];
    argv.extend_from_slice(extra);
    Args::try_parse_from(argv).expect("the flags parse")
}

/// An environment of these variables only.
fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let vars: BTreeMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| vars.get(name).cloned()
}

/// Every required setting, in the environment.
const REQUIRED_ENV: &[(&str, &str)] = &[
    ("CLUSTER_NAME", "env-cluster"),
    ("CLUSTER_ENDPOINT", "https://env.hcp.eastus.azmk8s.io:443"),
    ("KUBELET_BOOTSTRAP_TOKEN", TOKEN),
    ("SSH_PUBLIC_KEY", "ssh-rsa AAAA env"),
    ("VNET_SUBNET_ID", SUBNET),
    ("AZURE_NODE_RESOURCE_GROUP", "MC_env"),
    ("LOCATION", "eastus"),
];

#[test]
fn every_setting_is_a_flag_named_as_upstream_names_it() {
    for setting in SETTINGS {
        let flag = format!("--{}", setting.flag);
        let parsed = args(&[&flag, "value"]);
        assert_eq!(parsed.azure.flag(setting.variable), Some("value"), "{flag}");
    }
}

#[test]
fn nothing_given_is_refused_with_every_required_setting_listed() {
    let error = args(&[])
        .azure
        .settings_with(env(&[]))
        .expect_err("refused");
    let missing: Vec<&str> = error.problems.iter().map(|p| p.variable).collect();
    let required: Vec<&str> = SETTINGS
        .iter()
        .filter(|s| s.required)
        .map(|s| s.variable)
        .collect();
    assert_eq!(missing, required);
    let text = error.to_string();
    for setting in SETTINGS.iter().filter(|s| s.required) {
        assert!(text.contains(&format!("--{}", setting.flag)), "{text}");
    }
}

#[test]
fn the_environment_alone_is_enough() {
    let settings = args(&[])
        .azure
        .settings_with(env(REQUIRED_ENV))
        .expect("valid");
    assert_eq!(settings.cluster_name, "env-cluster");
    assert_eq!(settings.location, "eastus");
    assert_eq!(settings.subnet.id(), SUBNET);
    // Without AZURE_SUBSCRIPTION_ID, the subnet's subscription.
    assert_eq!(settings.subscription_id, "sub-1");
}

#[test]
fn a_flag_wins_over_the_environment_and_its_aliases() {
    let mut vars = REQUIRED_ENV.to_vec();
    vars.push(("AZURE_LOCATION", "westus"));
    let parsed = args(&["--cluster-name", "flag-cluster", "--location", "westeurope"]);
    let settings = parsed.azure.settings_with(env(&vars)).expect("valid");
    assert_eq!(settings.cluster_name, "flag-cluster");
    assert_eq!(settings.location, "westeurope");
    assert_eq!(settings.node_resource_group, "MC_env");
}

#[test]
fn the_old_flags_and_variables_are_accepted() {
    let old_flags = args(&[
        "--azure-subnet-id",
        SUBNET,
        "--azure-location",
        "northeurope",
        "--azure-node-resource-group",
        "MC_old",
        "--azure-subscription-id",
        "sub-2",
    ]);
    let vars: Vec<_> = REQUIRED_ENV
        .iter()
        .filter(|(k, _)| {
            !matches!(
                *k,
                "VNET_SUBNET_ID" | "LOCATION" | "AZURE_NODE_RESOURCE_GROUP"
            )
        })
        .copied()
        .collect();
    let settings = old_flags.azure.settings_with(env(&vars)).expect("valid");
    assert_eq!(settings.subnet.id(), SUBNET);
    assert_eq!(settings.location, "northeurope");
    assert_eq!(settings.node_resource_group, "MC_old");
    assert_eq!(settings.subscription_id, "sub-2");

    let mut old_vars = vars.clone();
    old_vars.push(("AZURE_SUBNET_ID", SUBNET));
    old_vars.push(("AZURE_LOCATION", "uksouth"));
    old_vars.push(("AZURE_NODE_RESOURCE_GROUP", "MC_var"));
    let settings = args(&[])
        .azure
        .settings_with(env(&old_vars))
        .expect("valid");
    assert_eq!(settings.subnet.id(), SUBNET);
    assert_eq!(settings.location, "uksouth");
}

#[test]
fn the_token_is_in_no_error_and_no_debug_print() {
    // A valid token beside malformed settings, and a malformed token.
    for token in [TOKEN, "not-a-token-but-a-secret"] {
        let parsed = args(&[
            "--kubelet-bootstrap-token",
            token,
            "--vnet-subnet-id",
            "not-a-subnet",
            "--dns-service-ip",
            "ten.zero.zero.ten",
        ]);
        let error = parsed.azure.settings_with(env(&[])).expect_err("refused");
        let text = error.to_string();
        assert!(text.contains("VNET_SUBNET_ID"), "{text}");
        assert!(text.contains("DNS_SERVICE_IP"), "{text}");
        assert!(!text.contains(token), "{text}");
        assert!(!format!("{error:?}").contains(token));
        let debug = format!("{parsed:?}");
        assert!(!debug.contains(token), "{debug}");
        assert!(debug.contains("not-a-subnet"), "{debug}");
    }
}

#[test]
fn the_arm_endpoint_defaults_to_public_azure() {
    assert_eq!(args(&[]).azure.arm_endpoint, "https://management.azure.com");
    let parsed = args(&["--arm-endpoint", "http://127.0.0.1:1"]);
    assert_eq!(parsed.azure.arm_endpoint, "http://127.0.0.1:1");
}
