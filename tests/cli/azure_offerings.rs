//! `karpenter-sim provision --provider azure` on pods selecting the labels
//! that differ between an Azure size's offerings (priority, placement
//! scope): each claim launches an offering that carries what its pods select.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_karpenter-sim"))
        .args(args)
        .output()
        .expect("run karpenter-sim")
}

const SPOT_PRIORITY: &str = "kubernetes.azure.com/scalesetpriority";
const PRIORITY: &str = "kubernetes.azure.com/priority";
const PLACEMENT_SCOPE: &str = "karpenter.azure.com/placement-scope";

/// What each pod of the fixture selects.
const SELECTED: [(&str, &[(&str, &str)]); 4] = [
    ("default/wants-spot", &[(SPOT_PRIORITY, "spot")]),
    ("default/wants-regular", &[(PRIORITY, "regular")]),
    ("default/wants-regional", &[(PLACEMENT_SCOPE, "regional")]),
    (
        "default/wants-zonal-spot",
        &[(PLACEMENT_SCOPE, "zonal"), (SPOT_PRIORITY, "spot")],
    ),
];

#[test]
fn each_pod_launches_on_an_offering_with_the_labels_it_selects() {
    let path = crate_dir().join("tests/fixtures/azure-offering-labels.yaml");
    let file = path.to_str().expect("a UTF-8 path");
    let args = ["provision", "-f", file, "--provider", "azure", "-o", "json"];
    let output = sim(&args);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(output.stdout, sim(&args).stdout, "the same plan twice");
    let plan: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(
        plan["unschedulable"].as_array().map(Vec::len),
        Some(0),
        "{plan}"
    );
    let mut placed = 0;
    for claim in plan["nodeClaims"].as_array().expect("claims") {
        let launch = &claim["launch"];
        let capacity_type = launch["capacityType"].as_str().expect("a capacity type");
        let zone = launch["zone"].as_str().expect("a zone");
        for pod in claim["pods"].as_array().expect("pods") {
            let pod = pod.as_str().expect("a pod");
            let (_, selected) = SELECTED
                .iter()
                .find(|(name, _)| *name == pod)
                .expect("a fixture pod");
            placed += 1;
            for &(key, value) in *selected {
                let met = match (key, value) {
                    (SPOT_PRIORITY | PRIORITY, "spot") => capacity_type == "spot",
                    (SPOT_PRIORITY | PRIORITY, "regular") => capacity_type == "on-demand",
                    (PLACEMENT_SCOPE, "regional") => zone == "0",
                    (PLACEMENT_SCOPE, "zonal") => zone != "0",
                    _ => panic!("the fixture selects {key}={value}"),
                };
                assert!(met, "{pod} selects {key}={value}, launched {launch}");
            }
        }
    }
    assert_eq!(placed, SELECTED.len());
}
