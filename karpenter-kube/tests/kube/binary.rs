//! The `karpenter-controller` binary as a process: its help names every
//! flag, `--once` exits 0, SIGTERM stops it cleanly with its Lease
//! released, and a kubeconfig that is not there is a clear error.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::World;
use serde_json::json;

fn controller() -> Command {
    Command::new(env!("CARGO_BIN_EXE_karpenter-controller"))
}

/// The binary against `world`'s API server, its endpoints off, with
/// `extra` flags; its standard error piped.
fn spawn(world: &World, extra: &[&str]) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_karpenter-controller"))
        .arg("--kubeconfig")
        .arg(world.dir.join("kubeconfig"))
        .arg("--instance-types")
        .arg(world.dir.join("instance-types.yaml"))
        .args(["--metrics-addr", "off", "--health-addr", "off"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("it starts")
}

#[test]
fn help_documents_every_flag() {
    let output = controller().arg("--help").output().expect("it runs");
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).expect("utf-8");
    for flag in [
        "--kubeconfig",
        "--provider",
        "--instance-types",
        "--leader-elect",
        "--lease-namespace",
        "--metrics-addr",
        "--health-addr",
        "--log-format",
        "--dry-run",
        "--once",
        "--azure-subscription-id",
        "KUBECONFIG",
        "POD_NAMESPACE",
        "AZURE_ACCESS_TOKEN",
    ] {
        assert!(
            help.contains(flag),
            "--help does not mention {flag}:\n{help}"
        );
    }
}

#[test]
fn a_missing_kubeconfig_is_a_clear_error() {
    let output = controller()
        .args([
            "--kubeconfig",
            "/nonexistent/kubeconfig",
            "--instance-types",
            "x.yaml",
        ])
        .args(["--metrics-addr", "off", "--health-addr", "off"])
        .output()
        .expect("it runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/nonexistent/kubeconfig"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_exits_zero_after_a_round() {
    let mut world = World::new("binary-once").await;
    world.add_pool(json!({}));
    world.want("web", 2, "1");
    world.play_cluster();
    let child = spawn(&world, &["--once", "--log-format", "json"]);
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("it exits")
        .expect("it ran");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!world.claim_names().is_empty(), "it created claims");
    // JSON logs: every line an object.
    for line in stderr.lines().filter(|l| !l.is_empty()) {
        serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_it_cleanly_and_releases_the_lease() {
    let world = World::new("binary-term").await;
    world.add_pool(json!({}));
    let child = spawn(
        &world,
        &[
            "--interval",
            "100ms",
            "--leader-elect",
            "--lease-namespace",
            "karpenter",
        ],
    );
    let mut waited = 0;
    while world.lease_holder().is_empty() {
        assert!(waited < 300, "it never took the Lease");
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    let pid = child.id().expect("running");
    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("it exits")
        .expect("it ran");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(world.lease_holder(), "", "the Lease is released");
}

/// Without `AZURE_ACCESS_TOKEN`, a controller built without workload
/// identity names the variable and the feature that would read the
/// identity instead.
#[cfg(all(feature = "azure", not(feature = "azure-identity")))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_without_a_token_says_which_variable_to_set() {
    let stderr = azure_without_a_credential(&[]).await;
    assert!(stderr.contains("AZURE_ACCESS_TOKEN"), "{stderr}");
    assert!(stderr.contains("`azure-identity`"), "{stderr}");
}

/// A workload identity missing its client ID (the webhook sets the token
/// file and the IDs together) is refused, naming the missing variable.
#[cfg(feature = "azure-identity")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_with_half_a_workload_identity_says_which_variable_to_set() {
    let stderr = azure_without_a_credential(&[
        (
            "AZURE_FEDERATED_TOKEN_FILE",
            "/nonexistent/azure-identity-token",
        ),
        ("AZURE_TENANT_ID", "00000000-0000-0000-0000-000000000002"),
    ])
    .await;
    assert!(stderr.contains("the ARM credential"), "{stderr}");
    assert!(stderr.contains("AZURE_CLIENT_ID"), "{stderr}");
}

/// The standard error of `--provider azure` with valid settings, no static
/// ARM token, no client ID and `vars` set, which must fail.
#[cfg(feature = "azure")]
async fn azure_without_a_credential(vars: &[(&str, &str)]) -> String {
    let world = World::new("binary-azure").await;
    let output = Command::new(env!("CARGO_BIN_EXE_karpenter-controller"))
        .arg("--kubeconfig")
        .arg(world.dir.join("kubeconfig"))
        .args([
            "--provider",
            "azure",
            "--metrics-addr",
            "off",
            "--health-addr",
            "off",
        ])
        .args(VALID_AZURE)
        .env_remove("AZURE_ACCESS_TOKEN")
        .env_remove("AZURE_CLIENT_ID")
        .env_remove("AZURE_FEDERATED_TOKEN_FILE")
        .envs(vars.iter().copied())
        .output()
        .expect("it runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    // The settings were valid and the cluster facts were read (they come
    // first): only the ARM credential was missing.
    assert!(!stderr.contains("reading what nodes need"), "{stderr}");
    assert!(!stderr.contains(BOOTSTRAP_TOKEN), "{stderr}");
    stderr
}

#[cfg(feature = "azure")]
/// Valid Azure settings, as flags (the old names for three of them).
const VALID_AZURE: &[&str] = &[
    "--azure-subscription-id",
    "sub",
    "--azure-node-resource-group",
    "MC_rg",
    "--azure-location",
    "eastus",
    "--cluster-name",
    "c",
    "--azure-subnet-id",
    "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s",
    "--cluster-endpoint",
    "https://c.hcp.eastus.azmk8s.io:443",
    "--kubelet-bootstrap-token",
    BOOTSTRAP_TOKEN,
    "--ssh-public-key",
    "ssh-rsa AAAA azureuser",
];

#[cfg(feature = "azure")]
const BOOTSTRAP_TOKEN: &str = "abcdef.0123456789abcdef";

#[cfg(feature = "azure")]
#[test]
fn azure_settings_are_all_listed_before_anything_runs_and_the_token_never() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_karpenter-controller"));
    for setting in karpenter_azure::SETTINGS {
        command.env_remove(setting.variable);
        for alias in setting.aliases {
            command.env_remove(alias);
        }
    }
    // No kubeconfig and no API server: the settings are refused first.
    let output = command
        .args([
            "--provider",
            "azure",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
        ])
        .args(["--kubelet-bootstrap-token", BOOTSTRAP_TOKEN])
        .args(["--vnet-subnet-id", "not-a-subnet"])
        .output()
        .expect("it runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    for setting in karpenter_azure::SETTINGS.iter().filter(|s| s.required) {
        if setting.variable != "KUBELET_BOOTSTRAP_TOKEN" {
            assert!(stderr.contains(setting.variable), "{stderr}");
        }
    }
    assert!(!stderr.contains("KUBELET_BOOTSTRAP_TOKEN (--"), "{stderr}");
    assert!(!stderr.contains("/nonexistent/kubeconfig"), "{stderr}");
    assert!(!stderr.contains(BOOTSTRAP_TOKEN), "{stderr}");
}
