//! Tests of the launch decisions, over small hand-made instance types (the
//! filter cases follow upstream's `filter_test.go`).

mod errors;
mod filters;
mod fleet;
mod reserved;
mod subnets;
mod template;

use karpenter_core::cloudprovider::{InstanceType, Offering, Reservation};
use karpenter_core::resources::ResourceList;
use karpenter_core::scheduling::{CAPACITY_TYPE_LABEL_KEY, Requirement, Requirements};
use serde_json::{Value, json};

use crate::instancetype::labels::{
    CAPACITY_RESERVATION_ID, CAPACITY_RESERVATION_INTERRUPTIBLE, CAPACITY_RESERVATION_TYPE,
};
use crate::nodeclass::EC2NodeClass;

/// A resource list of whole `cpu`, GiB of `memory` and `pods`.
fn resources(cpu: i64, memory_gib: i64, pods: i64) -> ResourceList {
    let mut list = ResourceList::new();
    list.set("cpu", cpu * 1000);
    list.set("memory", memory_gib * 1024 * 1024 * 1024 * 1000);
    list.set("pods", pods * 1000);
    list
}

/// A 4-cpu, 16 GiB, 110-pod amd64 type with `offerings`.
fn instance_type(name: &str, offerings: Vec<Offering>) -> InstanceType {
    sized(name, offerings, resources(4, 16, 110))
}

fn sized(name: &str, offerings: Vec<Offering>, capacity: ResourceList) -> InstanceType {
    InstanceType::new(
        name,
        [("kubernetes.io/arch", "amd64")],
        offerings,
        capacity,
        ResourceList::new(),
    )
}

fn on_demand(zone: &str, price: f64) -> Offering {
    Offering::new(zone, "on-demand", price)
}

fn spot(zone: &str, price: f64) -> Offering {
    Offering::new(zone, "spot", price)
}

/// A reserved offering of reservation `id` of `kind` (`default` or
/// `capacity-block`) that can start `capacity` more instances.
fn reserved(zone: &str, price: f64, id: &str, kind: &str, interruptible: bool) -> Offering {
    reserved_with(zone, price, id, kind, interruptible, 1)
}

fn reserved_with(
    zone: &str,
    price: f64,
    id: &str,
    kind: &str,
    interruptible: bool,
    capacity: u32,
) -> Offering {
    let reservation = Reservation {
        label: CAPACITY_RESERVATION_ID.to_owned(),
        id: id.to_owned(),
        capacity,
    };
    Offering::reserved(zone, price, reservation)
        .with_requirement(Requirement::in_values(CAPACITY_RESERVATION_TYPE, [kind]))
        .with_requirement(Requirement::in_values(
            CAPACITY_RESERVATION_INTERRUPTIBLE,
            [if interruptible { "true" } else { "false" }],
        ))
}

fn requirements(items: Vec<Requirement>) -> Requirements {
    items.into_iter().collect()
}

fn capacity_types(values: &[&str]) -> Requirements {
    requirements(vec![Requirement::in_values(
        CAPACITY_TYPE_LABEL_KEY,
        values.iter().copied(),
    )])
}

fn names(types: &[InstanceType]) -> Vec<&str> {
    types.iter().map(|it| it.name.as_str()).collect()
}

/// The (zone, capacity type, reservation) of each available offering.
fn available(it: &InstanceType) -> Vec<(String, String, Option<String>)> {
    it.offerings
        .iter()
        .filter(|o| o.available)
        .map(|o| {
            (
                o.zone.clone(),
                o.capacity_type.clone(),
                o.reservation_id().map(str::to_owned),
            )
        })
        .collect()
}

fn nodeclass(status: Value) -> EC2NodeClass {
    let manifest = json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "KarpenterNodeRole",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "tags": {"team": "web", "eks:eks-cluster-name": "spoofed"},
            "context": "ctx-1",
            "kubelet": {"kubeReserved": {"cpu": "100m"}}
        },
        "status": status,
    });
    match serde_json::from_value(manifest) {
        Ok(class) => class,
        Err(err) => panic!("reading the test NodeClass: {err}"),
    }
}
