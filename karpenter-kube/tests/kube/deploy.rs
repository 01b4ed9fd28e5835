//! Every manifest under `deploy/` reads as the Kubernetes type its kind
//! names, with no field left over (a misspelt field would be dropped by the
//! API server without a word), and the fake cloud's instance types in its
//! ConfigMap load as karpenter-sim loads them.

use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy")
}

/// The documents of every manifest, with the file each comes from.
fn documents() -> Vec<(String, Value)> {
    documents_in(&deploy_dir())
}

/// The documents of every manifest in `dir`, with the file each comes from.
pub(crate) fn documents_in(dir: &Path) -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut documents = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        let values: Vec<Value> = serde_saphyr::from_multiple(&text)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = file
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        documents.extend(values.into_iter().map(|value| (name.clone(), value)));
    }
    documents
}

/// Reads `value` as `K` and checks that writing it back loses nothing.
pub(crate) fn lossless<K: DeserializeOwned + Serialize>(file: &str, value: &Value) -> K {
    let typed: K = serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{file}: {e}"));
    let written = serde_json::to_value(&typed).expect("serializes");
    assert_eq!(&written, value, "{file}: a field was not understood");
    typed
}

#[test]
fn every_manifest_reads_as_its_kind_with_nothing_left_over() {
    let documents = documents();
    assert!(documents.len() >= 8, "{} documents", documents.len());
    for (file, value) in &documents {
        let kind = value["kind"].as_str().unwrap_or_default();
        match kind {
            "Namespace" => drop(lossless::<Namespace>(file, value)),
            "ServiceAccount" => drop(lossless::<ServiceAccount>(file, value)),
            "ClusterRole" => drop(lossless::<ClusterRole>(file, value)),
            "ClusterRoleBinding" => drop(lossless::<ClusterRoleBinding>(file, value)),
            "Role" => drop(lossless::<Role>(file, value)),
            "RoleBinding" => drop(lossless::<RoleBinding>(file, value)),
            "ConfigMap" => drop(lossless::<ConfigMap>(file, value)),
            "Deployment" => drop(lossless::<Deployment>(file, value)),
            other => panic!("{file}: a {other:?} the test does not know"),
        }
    }
}

#[test]
fn the_example_node_pool_reads_as_one() {
    let text = std::fs::read_to_string(deploy_dir().join("fake/nodepool.yaml")).expect("readable");
    let value: Value = serde_saphyr::from_str(&text).expect("YAML");
    let pool: karpenter_core::api::NodePool = lossless("fake/nodepool.yaml", &value);
    assert_eq!(pool.metadata.name.as_deref(), Some("default"));
}

#[test]
fn the_deployment_runs_the_controller_as_its_service_account() {
    let documents = documents();
    let (file, deployment) = documents
        .iter()
        .find(|(_, v)| v["kind"] == "Deployment")
        .expect("a Deployment");
    let deployment: Deployment = lossless(file, deployment);
    let pod = deployment.spec.template.spec.expect("a pod spec");
    assert_eq!(pod.service_account_name.as_deref(), Some("karpenter"));
    let args = pod.containers[0].args.clone().unwrap_or_default();
    // Every flag the manifest passes is one the binary takes.
    let mut argv = vec!["karpenter-controller".to_owned()];
    argv.extend(args);
    <karpenter_kube::controller::Args as clap::Parser>::try_parse_from(&argv)
        .unwrap_or_else(|e| panic!("{file}: {e}"));
}

#[test]
fn the_instance_types_in_the_config_map_load() {
    let documents = documents();
    let (file, map) = documents
        .iter()
        .find(|(_, v)| v["kind"] == "ConfigMap")
        .expect("a ConfigMap");
    let map: ConfigMap = lossless(file, map);
    let text = &map.data.expect("data")["instance-types.yaml"];
    let dir = tempdir();
    let path = dir.join("instance-types.yaml");
    std::fs::write(&path, text).expect("writable");
    let types = karpenter_kube::controller::load_instance_types(&path).expect("they load");
    assert_eq!(types.len(), 2);
    // The same types as the file the README runs the controller with.
    let outside = deploy_dir().join("fake/instance-types.yaml");
    let same = karpenter_kube::controller::load_instance_types(&outside).expect("they load");
    assert_eq!(types, same);
    std::fs::remove_dir_all(dir).ok();
}

fn tempdir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("karpenter-deploy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}
