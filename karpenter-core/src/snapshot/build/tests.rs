use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::*;
use crate::scheduling::{CAPACITY_TYPE_LABEL_KEY, LABEL_TOPOLOGY_ZONE};

#[test]
fn a_managed_node_is_joined_initialized_and_priced_by_its_labels() {
    let node = NodeBuilder::managed("node-a", "default", "m-4")
        .zone("zone-a")
        .capacity_type("spot")
        .allocatable("cpu", "3900m")
        .capacity("cpu", "4")
        .build();
    assert!(node.is_managed());
    assert!(node.is_initialized());
    assert!(!node.is_marked_for_deletion());
    assert_eq!(node.name(), "node-a");
    assert_eq!(node.state_name(), "node-a");
    assert_eq!(node.node_pool(), Some("default"));
    let labels = node.labels().expect("labels");
    assert_eq!(labels[CAPACITY_TYPE_LABEL_KEY], "spot");
    assert_eq!(labels[LABEL_TOPOLOGY_ZONE], "zone-a");
    assert_eq!(node.capacity().get("cpu"), 4000);
    let starting = NodeBuilder::managed("node-b", "default", "m-4")
        .starting()
        .build();
    assert!(!starting.is_initialized());
    assert!(!NodeBuilder::unmanaged("node-c").build().is_managed());
}

#[test]
fn a_built_pod_is_pending_until_bound() {
    let pod = PodBuilder::new("default", "web")
        .requests("1", "1Gi")
        .build();
    assert!(crate::pods::is_pending(&pod));
    let bound = PodBuilder::new("default", "web").on_node("node-a").build();
    assert!(!crate::pods::is_pending(&bound));
    assert_eq!(crate::pods::bound_node(&bound), Some("node-a"));
}

#[test]
fn a_pool_carries_what_it_was_given() {
    let pool = NodePoolBuilder::new("gpu")
        .requirement("karpenter.sh/capacity-type", "In", ["spot"])
        .label("team", "ml")
        .limit("cpu", "100")
        .weight(10)
        .build();
    assert_eq!(pool.name(), Some("gpu"));
    assert_eq!(pool.spec.weight, Some(10));
    assert_eq!(pool.spec.template.spec.requirements().len(), 1);
    let limits = pool.spec.limits.expect("limits");
    assert_eq!(limits.as_map()["cpu"], Quantity("100".to_owned()));
}

#[test]
fn an_instance_type_is_amd64_linux_with_110_pods_until_told() {
    use crate::scheduling::{CapacityType, LABEL_ARCH_STABLE};

    let plain = InstanceTypeBuilder::new("m-4")
        .cpu("4")
        .memory("16Gi")
        .build();
    assert_eq!(plain.capacity.get("cpu"), 4_000);
    assert_eq!(plain.capacity.get("memory"), 16 * (1 << 30) * 1000);
    assert_eq!(plain.capacity.get("pods"), 110_000);
    assert!(plain.requirements.get(LABEL_ARCH_STABLE).has("amd64"));
    assert!(plain.offerings.is_empty());

    let arm = InstanceTypeBuilder::new("a-2")
        .cpu("2")
        .pods(58)
        .overhead("cpu", "100m")
        .label(LABEL_ARCH_STABLE, "arm64")
        .offering("zone-b", CapacityType::Spot, 0.03)
        .build();
    assert!(arm.requirements.get(LABEL_ARCH_STABLE).has("arm64"));
    assert!(!arm.requirements.get(LABEL_ARCH_STABLE).has("amd64"));
    assert_eq!(arm.capacity.get("pods"), 58_000);
    assert_eq!(arm.allocatable().get("cpu"), 1_900);
    assert_eq!(arm.offerings[0].capacity_type, "spot");
    assert_eq!(arm.offerings[0].zone, "zone-b");
}
