mod options;
mod properties;
mod well_known;

use std::collections::BTreeMap;

use karpenter_core::resources::parse_milli;
use karpenter_core::scheduling::{LABEL_ARCH_STABLE, LABEL_TOPOLOGY_REGION, Operator};

use super::resources::{
    RESOURCE_AMD_GPU, RESOURCE_EFA, RESOURCE_HABANA_GAUDI, RESOURCE_NEURON, RESOURCE_NEURON_CORE,
    RESOURCE_NVIDIA_GPU, RESOURCE_POD_ENI, eni_limited_pods, kube_reserved_cpu_millis,
    kube_reserved_memory_mib, memory_capacity_mib,
};
use super::*;
use crate::catalog::table::Table;
use crate::catalog::{Arch, INSTANCE_TYPES};

/// The page's allocatable columns for every type: name → resource → text.
fn published_allocatable() -> BTreeMap<&'static str, BTreeMap<&'static str, &'static str>> {
    const RESOURCES: [&str; 11] = [
        "cpu",
        "memory",
        "ephemeral-storage",
        "pods",
        "vpc.amazonaws.com/pod-eni",
        "vpc.amazonaws.com/efa",
        "nvidia.com/gpu",
        "amd.com/gpu",
        "aws.amazon.com/neuron",
        "aws.amazon.com/neuroncore",
        "habana.ai/gaudi",
    ];
    let table = Table::new("instance-types.csv", INSTANCE_TYPES).unwrap();
    let name = table.column("name").unwrap();
    let columns: Vec<(&str, usize)> = RESOURCES
        .iter()
        .map(|r| {
            let column: &'static str = Box::leak(format!("alloc_{r}").into_boxed_str());
            (*r, table.column(column).unwrap())
        })
        .collect();
    table
        .rows()
        .map(|row| {
            let row = row.unwrap();
            let values = columns.iter().map(|&(r, c)| (r, row.text(c))).collect();
            (row.text(name), values)
        })
        .collect()
}

/// The quantity the page shows, in milli-units (absent: 0).
fn milli(text: &str) -> i64 {
    if text.is_empty() {
        0
    } else {
        parse_milli(text).unwrap()
    }
}

/// Types whose computed allocatable `resource` differs from the page's.
fn differing(resource: &str) -> Vec<String> {
    let catalog = Catalog::embedded().unwrap();
    let published = published_allocatable();
    instance_types(catalog, "us-east-1")
        .unwrap()
        .iter()
        .filter(|t| t.allocatable().get(resource) != milli(published[t.name.as_str()][resource]))
        .map(|t| t.name.clone())
        .collect()
}

#[test]
fn every_types_allocatable_cpu_memory_and_pods_are_upstreams_at_al2023_defaults() {
    let catalog = Catalog::embedded().unwrap();
    assert_eq!(instance_types(catalog, "us-east-1").unwrap().len(), 1382);
    // Pods come from the VPC limits for 1,363 types; for the 19 the table
    // lacks, the catalog keeps the page's count (the data gives their ENIs
    // no other way), so for those only cpu and memory are computed here.
    for resource in ["cpu", "memory", "pods", "ephemeral-storage"] {
        assert_eq!(differing(resource), Vec::<String>::new(), "{resource}");
    }
}

#[test]
fn extended_resources_are_upstreams_but_for_the_stale_pod_eni_rows() {
    for resource in [
        RESOURCE_EFA,
        RESOURCE_NVIDIA_GPU,
        RESOURCE_AMD_GPU,
        RESOURCE_NEURON,
        RESOURCE_NEURON_CORE,
        RESOURCE_HABANA_GAUDI,
    ] {
        assert_eq!(differing(resource), Vec::<String>::new(), "{resource}");
    }
    // The page predates the VPC limits table upstream reads pod ENIs from.
    // 56 types the page shows without branch ENIs are trunking-compatible
    // there now, and upstream at the pinned commit (so this crate) gives
    // them the table's branch ENIs; 3 types of the old v1.0 page that showed
    // branch ENIs are no longer in the table, so upstream gives them none.
    let catalog = Catalog::embedded().unwrap();
    let published = published_allocatable();
    let differing = differing(RESOURCE_POD_ENI);
    let (in_table, dropped): (Vec<&String>, Vec<&String>) = differing
        .iter()
        .partition(|name| catalog.vpc_limits(name).is_some());
    assert_eq!(in_table.len(), 56);
    for name in in_table {
        assert_eq!(published[name.as_str()][RESOURCE_POD_ENI], "", "{name}");
        let limits = catalog.vpc_limits(name).unwrap();
        assert!(limits.pod_eni > 0, "{name}");
        let computed = instance_type(catalog, name, "us-east-1").unwrap();
        assert_eq!(
            computed.allocatable().get(RESOURCE_POD_ENI),
            i64::from(limits.pod_eni) * 1000
        );
    }
    assert_eq!(dropped, ["g3.4xlarge", "g3.8xlarge", "g3s.xlarge"]);
    for name in dropped {
        let computed = instance_type(catalog, name, "us-east-1").unwrap();
        assert_eq!(computed.allocatable().get(RESOURCE_POD_ENI), 0, "{name}");
    }
}

#[test]
fn kube_reserved_cpu_is_tiered_by_core() {
    let reserved: Vec<i64> = [1, 2, 4, 8, 96]
        .into_iter()
        .map(kube_reserved_cpu_millis)
        .collect();
    assert_eq!(reserved, [60, 70, 80, 90, 310]);
}

#[test]
fn memory_loses_the_vm_share_and_gravitons_cma() {
    // 8192 − ceil(614.4)
    assert_eq!(memory_capacity_mib(8192, Arch::Amd64, 0.075), 7577);
    // (4096 − 64) − ceil(302.4)
    assert_eq!(memory_capacity_mib(4096, Arch::Arm64, 0.075), 3729);
    assert_eq!(kube_reserved_memory_mib(29), 574);
}

#[test]
fn pods_are_eni_limited_and_reserved_enis_can_leave_none() {
    let catalog = Catalog::embedded().unwrap();
    let m5 = catalog.record("m5.large").unwrap();
    assert_eq!(eni_limited_pods(catalog, m5, 0), 29);
    assert_eq!(eni_limited_pods(catalog, m5, 1), 20);
    assert_eq!(eni_limited_pods(catalog, m5, 3), 0);
    assert_eq!(eni_limited_pods(catalog, m5, 9), 0);
}

#[test]
fn labels_are_requirements_and_absent_ones_do_not_exist() {
    let catalog = Catalog::embedded().unwrap();
    let g5 = instance_type(catalog, "g5.12xlarge", "us-west-2").unwrap();
    let has = |t: &InstanceType, key: &str, value: &str| t.requirements.get(key).has(value);
    assert!(has(&g5, "karpenter.k8s.aws/instance-gpu-name", "a10g"));
    assert!(has(&g5, "karpenter.k8s.aws/instance-family", "g5"));
    assert!(has(&g5, LABEL_TOPOLOGY_REGION, "us-west-2"));
    assert!(has(&g5, LABEL_ARCH_STABLE, "amd64"));
    assert!(has(&g5, "node.kubernetes.io/instance-type", "g5.12xlarge"));
    assert_eq!(g5.allocatable().get(RESOURCE_NVIDIA_GPU), 4000);

    let m5 = instance_type(catalog, "m5.metal", "us-west-2").unwrap();
    let absent = m5.requirements.get("karpenter.k8s.aws/instance-gpu-name");
    assert_eq!(absent.operator(), Operator::DoesNotExist);
    // Bare metal has the hypervisor label, empty.
    assert!(has(&m5, "karpenter.k8s.aws/instance-hypervisor", ""));
    assert!(has(&m5, labels::INSTANCE_TENANCY, "dedicated"));
    let reservation = m5.requirements.get(labels::CAPACITY_RESERVATION_ID);
    assert_eq!(reservation.operator(), Operator::DoesNotExist);

    // The bandwidth comes from upstream's table, which has moved on from
    // the page for g7.
    let g7 = instance_type(catalog, "g7.2xlarge", "us-east-1").unwrap();
    assert!(has(&g7, labels::INSTANCE_NETWORK_BANDWIDTH, "40000"));
    let p2 = instance_type(catalog, "p2.xlarge", "us-east-1").unwrap();
    let vague = p2.requirements.get(labels::INSTANCE_NETWORK_BANDWIDTH);
    assert_eq!(vague.operator(), Operator::DoesNotExist);
}

#[test]
fn bad_requests_are_errors() {
    let catalog = Catalog::embedded().unwrap();
    assert_eq!(
        instance_type(catalog, "m5.huge", "us-east-1").unwrap_err(),
        InstanceTypeError::UnknownType("m5.huge".into())
    );
    for region in [
        "",
        "useast1",
        "us-east-",
        "US-east-1",
        "us--1",
        "mars-north-1",
        "eastus-west-1",
    ] {
        assert_eq!(
            instance_types(catalog, region).unwrap_err(),
            InstanceTypeError::Region(region.into())
        );
    }
    for region in [
        "us-gov-west-1",
        "cn-northwest-1",
        "il-central-1",
        "mx-central-1",
        "us-isob-east-1",
        "eusc-de-east-1",
    ] {
        assert!(instance_types(catalog, region).is_ok(), "{region}");
    }
    let message = instance_types(catalog, "mars-north-1")
        .unwrap_err()
        .to_string();
    assert!(message.contains("us-gov-west-1"), "{message}");
}

#[test]
fn the_same_input_gives_the_same_types() {
    let catalog = Catalog::embedded().unwrap();
    let first = instance_types(catalog, "eu-west-1").unwrap();
    let second = instance_types(catalog, "eu-west-1").unwrap();
    assert_eq!(format!("{first:?}"), format!("{second:?}"));
}
