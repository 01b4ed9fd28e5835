//! What the driver tells about pods: a pod selecting a label the provider's
//! instance types define is planned like any other, and a pod no plan can
//! place is reported with its reason, once per pod and reason.

use std::sync::Arc;

use crate::support::{World, pool};
use k8s_openapi::api::core::v1::Pod;
use karpenter_core::driver::{DriverOptions, Event};
use karpenter_core::pods::{PodKey, bound_node};
use karpenter_core::scheduling::Requirement;
use karpenter_fake::FakeCloudProvider;
use karpenter_fake::generate::catalog::sized_instance_types;
use karpenter_fake::generate::workload::{Shape, pending_pod};

/// The fake's types, each with a family label of the provider's own: `small`
/// for the first half, `large` for the rest.
fn families() -> Vec<karpenter_core::cloudprovider::InstanceType> {
    let mut types = sized_instance_types(8);
    let half = types.len() / 2;
    for (i, t) in types.iter_mut().enumerate() {
        let family = if i < half { "small" } else { "large" };
        t.requirements
            .add(Requirement::in_values("example.com/family", [family]));
    }
    types
}

fn selecting(name: &str, family: &str) -> Pod {
    let mut pod = pending_pod(name, Shape::Plain, "1", "1Gi");
    if let Some(spec) = pod.spec.as_mut() {
        spec.node_selector = Some([("example.com/family".to_owned(), family.to_owned())].into());
    }
    pod
}

fn unschedulable(world: &World) -> Vec<(PodKey, String)> {
    world
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::PodUnschedulable { pod, reason } => Some((pod.clone(), reason.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_pod_selecting_a_label_of_the_providers_types_runs() {
    let provider = Arc::new(FakeCloudProvider::new(families()));
    let mut world = World::new(
        provider.clone(),
        DriverOptions::default().with_disrupt(false),
    );
    // The pool says nothing of families.
    world.add_pool(pool("default", "1", serde_json::json!([])));
    world.add_pods([selecting("big-0", "large"), selecting("small-0", "small")]);
    world.run_until(20, |w| w.pending() == 0).await;
    assert!(
        unschedulable(&world).is_empty(),
        "{:?}",
        unschedulable(&world)
    );
    // Each runs on a node of its family.
    let types = families();
    for claim in world.cluster.node_claim_list() {
        let labels = claim.metadata.labels.clone().unwrap_or_default();
        let name = &labels["node.kubernetes.io/instance-type"];
        let family = &labels["example.com/family"];
        let t = types.iter().find(|t| &t.name == name).expect("a type");
        let carried = t.requirements.get_defined("example.com/family");
        assert!(
            carried.is_some_and(|r| r.has(family)),
            "{name} is not {family}"
        );
    }
    assert_eq!(world.cluster.node_claim_list().len(), 2);
}

#[tokio::test]
async fn a_pod_no_plan_places_is_reported_once_per_reason() {
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(8)));
    let mut world = World::new(provider, DriverOptions::default().with_disrupt(false));
    world.add_pool(pool("default", "1", serde_json::json!([])));
    let huge = pending_pod("huge", Shape::Plain, "1000", "1Gi");
    world.add_pods([huge.clone(), pending_pod("web-0", Shape::Plain, "1", "1Gi")]);
    for _ in 0..6 {
        world.step().await;
    }
    let reported = unschedulable(&world);
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert_eq!(reported[0].0, "default/huge");
    assert!(
        reported[0]
            .1
            .contains("no instance type has enough resources"),
        "{}",
        reported[0].1
    );
    // A second pool changes the reason: reported again, once.
    world.add_pool(pool("spare", "1", serde_json::json!([])));
    for _ in 0..3 {
        world.step().await;
    }
    let reported = unschedulable(&world);
    assert_eq!(reported.len(), 2, "{reported:?}");
    assert!(
        reported[1].1.contains("nodepool \"spare\""),
        "{}",
        reported[1].1
    );
    // Gone and back: reported again.
    assert!(world.cluster.delete_pod(&PodKey::new("default", "huge")));
    world.step().await;
    world.add_pods([huge]);
    for _ in 0..3 {
        world.step().await;
    }
    assert_eq!(unschedulable(&world).len(), 3);
    assert!(
        world
            .cluster
            .pod_list()
            .iter()
            .any(|p| p.metadata.name.as_deref() == Some("web-0") && bound_node(p).is_some())
    );
}

#[test]
fn the_event_says_which_pod_and_why() {
    let event = Event::PodUnschedulable {
        pod: PodKey::new("default", "huge"),
        reason: "nodepool \"default\": the pool has no instance types".into(),
    };
    assert_eq!(
        event.to_string(),
        "failed to schedule pod default/huge: nodepool \"default\": the pool has no instance types"
    );
}

#[tokio::test]
async fn a_report_says_how_long_its_plans_took() {
    use karpenter_core::driver::Step;
    let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(4)));
    let mut world = World::new(provider, DriverOptions::default());
    world.add_pool(pool("default", "1", serde_json::json!([])));
    world.add_pods([pending_pod("web-0", Shape::Plain, "1", "1Gi")]);
    let report = world.step().await;
    let steps: Vec<Step> = report.timings.iter().map(|t| t.step).collect();
    assert_eq!(steps.first(), Some(&Step::Provisioning), "{report:?}");
    // Once the pod runs and all is quiet, the driver looks for disruption.
    world.run_until(20, |w| w.pending() == 0).await;
    let mut planned_disruption = false;
    for _ in 0..5 {
        let report = world.step().await;
        planned_disruption |= report.timings.iter().any(|t| t.step == Step::Disruption);
    }
    assert!(planned_disruption);
}
