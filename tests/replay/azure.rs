//! The replay on the Azure provider (`ReplayCloud::Azure`): the driver
//! launches VMs of the embedded catalog through an in-memory ARM, at the
//! catalog's prices; spot VMs are evicted; a cluster's starting NodeClaims
//! are adopted by their provider IDs.

use karpenter::replay::{ReplayCloud, ReplayEvent, ReplayOptions, Run, run};
use karpenter::scenario::{LoadError, LoadOptions, Scenario, Trace};

use crate::support::{disrupted, gates, trace};

const AZURE: &str = include_str!("../../examples/replay/azure.yaml");

const ID_PREFIX: &str = "azure:///subscriptions/sub-1/resourceGroups/mc_rg_cluster_eastus/providers/Microsoft.Compute/virtualMachines/";

fn azure() -> ReplayOptions {
    ReplayOptions::default().with_cloud(ReplayCloud::Azure {
        region: "eastus".into(),
    })
}

fn cluster(extra: &str) -> Scenario {
    let text = format!("{AZURE}---\n{extra}");
    Scenario::from_str("azure.yaml", &text, &LoadOptions::default()).expect("a cluster")
}

fn replay(scenario: &Scenario, trace: &Trace, options: &ReplayOptions) -> Run {
    run(scenario, trace, options, &mut |_, _| {}).expect("the replay runs")
}

fn launches(run: &Run) -> Vec<(&str, &str, &str, f64)> {
    run.events
        .iter()
        .filter_map(|e| match e {
            ReplayEvent::Launch {
                instance_type,
                zone,
                capacity_type,
                price,
                ..
            } => Some((
                instance_type.as_str(),
                zone.as_str(),
                capacity_type.as_str(),
                *price,
            )),
            _ => None,
        })
        .collect()
}

/// A NodeClaim and its Node, launched before the replay as a `Standard_D4s_v5`
/// spot VM in eastus-1, with this provider ID.
fn running_node(name: &str, provider_id: &str) -> String {
    format!(
        r#"apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: {name}
  creationTimestamp: '2026-01-04T00:00:00Z'
  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: Standard_D4s_v5, topology.kubernetes.io/zone: eastus-1, karpenter.sh/capacity-type: spot, karpenter.sh/registered: 'true', karpenter.sh/initialized: 'true'}}
spec:
  nodeClassRef: {{group: karpenter.azure.com, kind: AKSNodeClass, name: default}}
  requirements: []
status:
  providerID: {provider_id}
  nodeName: {name}
  capacity: {{cpu: '4', memory: 16Gi, pods: '110'}}
  allocatable: {{cpu: 3860m, memory: 12Gi, pods: '110'}}
  conditions:
  - {{type: Launched, status: 'True', lastTransitionTime: '2026-01-04T00:00:00Z'}}
  - {{type: Registered, status: 'True', lastTransitionTime: '2026-01-04T00:01:00Z'}}
  - {{type: Initialized, status: 'True', lastTransitionTime: '2026-01-04T00:01:00Z'}}
---
apiVersion: v1
kind: Node
metadata:
  name: {name}
  creationTimestamp: '2026-01-04T00:01:00Z'
  labels: {{karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: Standard_D4s_v5, topology.kubernetes.io/zone: eastus-1, karpenter.sh/capacity-type: spot, karpenter.sh/registered: 'true', karpenter.sh/initialized: 'true', kubernetes.io/arch: amd64, kubernetes.io/os: linux}}
spec:
  providerID: {provider_id}
status:
  capacity: {{cpu: '4', memory: 16Gi, pods: '110'}}
  allocatable: {{cpu: 3860m, memory: 12Gi, pods: '110'}}
  conditions: [{{type: Ready, status: 'True'}}]
"#
    )
}

#[test]
fn the_driver_launches_catalog_sizes_at_catalog_prices() {
    let scenario = cluster("");
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 60}}\n  - {at: 1h, scale: {deployment: web, replicas: 4}}\n",
    );
    let run = replay(&scenario, &trace, &azure());
    let launched = launches(&run);
    assert!(!launched.is_empty());
    // The pool allows D-family v5 sizes of 2, 4 or 8 vCPUs in eastus.
    let types = scenario
        .azure_instance_types("eastus")
        .expect("azure types");
    let offered = &types.per_pool["default"];
    for (size, zone, capacity_type, price) in &launched {
        let vcpus: String = size
            .trim_start_matches("Standard_D")
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        assert!(
            size.starts_with("Standard_D")
                && size.ends_with("_v5")
                && ["2", "4", "8"].contains(&vcpus.as_str()),
            "{size}"
        );
        assert!(zone.starts_with("eastus-"), "{zone}");
        let catalog_price = offered
            .iter()
            .find(|t| t.name == *size)
            .and_then(|t| {
                t.offerings
                    .iter()
                    .find(|o| o.zone == *zone && o.capacity_type == *capacity_type)
            })
            .map(|o| o.price)
            .expect("an offering of the pool");
        assert_eq!(*price, catalog_price, "{size} {zone} {capacity_type}");
    }
    // The timeline prices what runs; scaled down, consolidation removes
    // nodes.
    let peak = run.timeline.iter().map(|s| s.nodes).max().expect("samples");
    let last = run.timeline.last().expect("samples");
    // Four web pods and the api's five.
    assert_eq!(last.pods_running, 9);
    assert!(last.nodes < peak, "{last:?}, peak {peak}");
    assert!(last.price_per_hour > 0.0);
    assert!(disrupted(&run, "Empty") + disrupted(&run, "Underutilized") > 0);
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);
}

#[test]
fn spot_vms_are_evicted_and_repaired_as_on_azure() {
    let scenario = cluster("");
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 120}}\n  - {at: 30m, interrupt: {nodes: 1, capacityType: spot}}\n",
    );
    // Without NodeRepair the cloud evicts the VM at the notice's end.
    let run = replay(&scenario, &trace, &azure());
    let by = |run: &Run, who: &str| {
        run.events
            .iter()
            .filter(|e| matches!(e, ReplayEvent::Disrupt { by, reason, .. } if by == who && reason == "Interrupted"))
            .count()
    };
    assert_eq!(disrupted(&run, "Interrupted"), 1, "{:?}", run.events);
    assert_eq!(by(&run, "cloud"), 1);
    // The web pods and the api's five found room again.
    let last = run.timeline.last().expect("samples");
    assert_eq!(last.pods_running, 125);
    // With it, Azure's repair policy replaces the node at the notice, as
    // its share of the pool's nodes is under upstream's 20 % (two of a
    // handful would not be repaired).
    let nodes = run.timeline[20].nodes;
    assert!(nodes > 5, "{nodes} nodes");
    let repaired = replay(
        &scenario,
        &trace,
        &azure().with_planning(gates("NodeRepair=true").into()),
    );
    assert_eq!(disrupted(&repaired, "Interrupted"), 1);
    assert_eq!(by(&repaired, "driver"), 1, "{:?}", repaired.events);
}

#[test]
fn starting_nodes_are_adopted_by_provider_id() {
    let provider_id = format!("{ID_PREFIX}aks-default-old01");
    let scenario = cluster(&running_node("default-old01", &provider_id));
    let trace = trace("  - {at: 0s, scale: {deployment: web, replicas: 4}}\n");
    let run = replay(&scenario, &trace, &azure());
    // The adopted VM runs from the first step and holds the four pods
    // (and the api's five): no instance went missing, none was collected.
    let first = &run.timeline[0];
    assert!(first.nodes >= 1, "{first:?}");
    assert_eq!(disrupted(&run, "Interrupted"), 0);
    // The same again: the output is the same, byte for byte.
    let again = replay(&scenario, &trace, &azure());
    assert_eq!(
        serde_json::to_string(&run).expect("json"),
        serde_json::to_string(&again).expect("json")
    );
}

#[test]
fn a_starting_node_of_another_cloud_is_named_as_bad_input() {
    let first = format!("{ID_PREFIX}aks-default-old01");
    let text = format!(
        "{}---\n{}",
        running_node("default-old01", &first),
        running_node("default-old02", "fake:///default-old02")
    );
    let scenario = cluster(&text);
    let trace = trace("  - {at: 0s, scale: {deployment: web, replicas: 4}}\n");
    let error = run(&scenario, &trace, &azure(), &mut |_, _| {}).expect_err("refused");
    let karpenter::replay::ReplayError::Input(LoadError::Invalid {
        origin,
        object,
        field,
        message,
    }) = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(&*origin.file, "azure.yaml");
    assert_eq!(object, "NodeClaim default-old02");
    assert_eq!(field, "status.providerID");
    assert!(message.contains("fake:///default-old02"), "{message}");
    assert!(message.contains(ID_PREFIX), "{message}");
}

#[test]
fn the_quiet_skip_changes_nothing_on_azure() {
    let scenario = cluster("");
    let trace = trace(
        "  - {at: 0s, scale: {deployment: web, replicas: 60}}\n  - {at: 40m, interrupt: {nodes: 1}}\n  - {at: 1h, drift: {nodePool: default}}\n  - {at: 2h, scale: {deployment: web, replicas: 6}}\n",
    );
    let json = |skip: bool| {
        let options = azure()
            .with_planning(gates("NodeRepair=true").into())
            .with_quiet_skip(skip);
        serde_json::to_string(&replay(&scenario, &trace, &options)).expect("json")
    };
    assert_eq!(json(true), json(false));
}
