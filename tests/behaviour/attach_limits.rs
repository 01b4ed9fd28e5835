//! Volume attach limits (CSINode counts) on existing nodes: the plans of the
//! `tests/scenarios/volumes/attach-limit-*` scenarios keep them, and the plan
//! validator notices a plan that breaks one.

use karpenter::core::provisioning::{ExistingPlacement, Rule, plan_provisioning, validate};
use karpenter::scenario::{LoadOptions, Scenario};

fn snapshot(path: &std::path::Path) -> karpenter::core::snapshot::Snapshot {
    let scenario =
        Scenario::load_files(&[path], &LoadOptions::default()).expect("the scenario loads");
    let types = scenario.fake_instance_types().expect("instance types");
    scenario.into_snapshot(types)
}

fn scenarios() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir("tests/scenarios/volumes")
        .expect("the volumes scenarios")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("attach-limit-"))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn plans_keep_every_attach_limit_and_breaking_one_is_noticed() {
    let files = scenarios();
    assert!(files.len() >= 10, "{files:?}");
    let mut broken = 0;
    for file in &files {
        let snapshot = snapshot(file);
        let plan = plan_provisioning(&snapshot);
        let violations = validate(&snapshot, &plan);
        assert!(violations.is_empty(), "{}: {violations:?}", file.display());
        // The pods a new claim took because a node's limit was reached,
        // placed on that node instead, break it.
        let limited: Vec<&str> = snapshot
            .csi_nodes
            .iter()
            .filter_map(|c| c.metadata.name.as_deref())
            .collect();
        let Some(first) = plan.node_claims.iter().position(|c| !c.pods.is_empty()) else {
            continue;
        };
        for node in limited {
            let mut moved = plan.clone();
            let pods = moved.node_claims.remove(first).pods;
            moved.total_price_per_hour = moved
                .node_claims
                .iter()
                .filter_map(|c| c.launch.as_ref())
                .map(|l| l.price)
                .sum();
            moved.existing_nodes.push(ExistingPlacement {
                name: node.to_owned(),
                pods,
            });
            let rules: Vec<Rule> = validate(&snapshot, &moved)
                .into_iter()
                .map(|v| v.rule)
                .collect();
            if rules.contains(&Rule::VolumeAttachLimit) {
                broken += 1;
            }
        }
    }
    // Most of these scenarios launch a claim only because a limit was reached.
    assert!(broken >= 5, "only {broken} broken plans noticed");
}
