//! The manifests of `deploy/azure/` read as their kinds with nothing left
//! over, and together give the controller every required Azure setting
//! under the name it reads, as `--provider azure` with workload identity.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use karpenter_azure::{AKSNodeClass, SETTINGS};
use karpenter_core::api::NodePool;
use serde_json::Value;

use crate::deploy::{documents_in, lossless};

fn azure_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/azure")
}

/// Every document of `deploy/azure/`, with its file.
fn documents() -> Vec<(String, Value)> {
    documents_in(&azure_dir())
}

/// The typed documents of `deploy/azure/`.
#[derive(Default)]
struct Manifests {
    config_maps: Vec<ConfigMap>,
    secrets: Vec<Secret>,
    accounts: Vec<ServiceAccount>,
    deployments: Vec<Deployment>,
    classes: Vec<AKSNodeClass>,
    pools: Vec<NodePool>,
}

fn manifests() -> Manifests {
    let mut all = Manifests::default();
    for (file, value) in &documents() {
        match value["kind"].as_str().unwrap_or_default() {
            "ConfigMap" => all.config_maps.push(lossless(file, value)),
            "Secret" => all.secrets.push(lossless(file, value)),
            "ServiceAccount" => all.accounts.push(lossless(file, value)),
            "Deployment" => all.deployments.push(lossless(file, value)),
            "AKSNodeClass" => all.classes.push(lossless(file, value)),
            "NodePool" => all.pools.push(lossless(file, value)),
            other => panic!("{file}: a {other:?} the test does not know"),
        }
    }
    all
}

#[test]
fn the_deployment_runs_azure_with_every_required_setting() {
    let all = manifests();
    let [deployment] = all.deployments.as_slice() else {
        panic!("one Deployment");
    };
    let template = &deployment.spec.template;
    let labels = template.metadata.as_ref().and_then(|m| m.labels.clone());
    assert_eq!(
        labels.unwrap_or_default()["azure.workload.identity/use"],
        "true"
    );
    let pod = template.spec.as_ref().expect("a pod spec");
    let container = &pod.containers[0];
    let mut argv = vec!["karpenter-controller".to_owned()];
    argv.extend(container.args.clone().unwrap_or_default());
    let args = <karpenter_kube::controller::Args as clap::Parser>::try_parse_from(&argv)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        args.provider,
        karpenter_kube::controller::ProviderKind::Azure
    );

    // The names the container's environment has: the ConfigMap's keys
    // through envFrom, and each `env` entry.
    let mut names = BTreeSet::new();
    for from in container.env_from.clone().unwrap_or_default() {
        let map_name = from.config_map_ref.expect("a ConfigMap").name;
        let map = all
            .config_maps
            .iter()
            .find(|m| m.metadata.name.as_deref() == Some(map_name.as_str()))
            .expect("the ConfigMap the Deployment names");
        names.extend(map.data.clone().unwrap_or_default().into_keys());
    }
    for var in container.env.clone().unwrap_or_default() {
        if let Some(key) = var
            .value_from
            .and_then(|from| from.secret_key_ref)
            .map(|r| (r.name, r.key))
        {
            let secret = all
                .secrets
                .iter()
                .find(|s| s.metadata.name.as_deref() == Some(key.0.as_str()))
                .expect("the Secret the Deployment names");
            assert!(
                secret
                    .string_data
                    .as_ref()
                    .expect("data")
                    .contains_key(&key.1)
            );
        }
        names.insert(var.name);
    }
    for setting in SETTINGS.iter().filter(|s| s.required) {
        assert!(
            names.contains(setting.variable),
            "{} unset",
            setting.variable
        );
    }
    // The ARM tokens come from the workload identity (the label above): a
    // static token would win over it.
    assert!(!names.contains(karpenter_kube::controller::TOKEN_VARIABLE));
    // The bootstrap token comes from the Secret, never the ConfigMap.
    for map in &all.config_maps {
        assert!(
            !map.data
                .clone()
                .unwrap_or_default()
                .contains_key("KUBELET_BOOTSTRAP_TOKEN")
        );
    }
    // Every name the ConfigMap sets is one the controller reads.
    let known: BTreeSet<&str> = SETTINGS.iter().map(|s| s.variable).collect();
    for map in &all.config_maps {
        for key in map.data.clone().unwrap_or_default().keys() {
            assert!(known.contains(key.as_str()), "{key} is read by nothing");
        }
    }
}

#[test]
fn the_service_account_names_the_workload_identity_and_the_pool_its_class() {
    let all = manifests();
    let [account] = all.accounts.as_slice() else {
        panic!("one ServiceAccount");
    };
    let annotations = account.metadata.annotations.clone().unwrap_or_default();
    assert!(annotations.contains_key("azure.workload.identity/client-id"));
    let [class] = all.classes.as_slice() else {
        panic!("one AKSNodeClass");
    };
    class.image_family().expect("a known image family");
    let [pool] = all.pools.as_slice() else {
        panic!("one NodePool");
    };
    let class_ref = pool
        .spec
        .template
        .spec
        .node_class_ref
        .as_ref()
        .expect("a class reference");
    assert_eq!(class_ref.kind, "AKSNodeClass");
    assert_eq!(
        Some(class_ref.name.as_str()),
        class.metadata.name.as_deref()
    );
}
