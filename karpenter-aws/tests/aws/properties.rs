//! `create` over random claims and random sold-out offerings: it launches
//! one instance whose labels honour every requirement of the claim, whose
//! allocatable holds its requests and whose offering was available, or it
//! answers insufficient capacity and launches nothing.

use std::collections::BTreeSet;

use karpenter_aws::ec2::{InMemoryEc2, TargetCapacityType};
use karpenter_core::api::NodeClaim;
use karpenter_core::cloudprovider::{CloudProvider, CloudProviderError, InstanceType};
use karpenter_core::resources::ResourceList;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::common::{ec2, is_in, label, pool, provider};

const TYPE: &str = "node.kubernetes.io/instance-type";
const ZONE: &str = "topology.kubernetes.io/zone";
const CAPACITY: &str = "karpenter.sh/capacity-type";

/// Types of both architectures and several sizes, all priced in us-east-1.
const TYPES: [&str; 6] = [
    "m5.large",
    "c5.large",
    "m5.xlarge",
    "r5.large",
    "t3.medium",
    "c6g.large",
];
/// The zones of the common set-up's subnets.
const ZONES: [&str; 2] = ["us-east-1a", "us-east-1b"];
const CAPACITY_TYPES: [&str; 2] = ["on-demand", "spot"];

/// What a case asks for and which offerings EC2 has run out of.
#[derive(Clone, Debug)]
struct Case {
    types: Vec<&'static str>,
    zones: Option<Vec<&'static str>>,
    capacity_types: Option<Vec<&'static str>>,
    cpu_milli: u32,
    memory_mib: u32,
    sold_out: Vec<(&'static str, &'static str, &'static str)>,
}

impl Case {
    fn claim(&self) -> NodeClaim {
        let mut requirements = vec![is_in(TYPE, &self.types)];
        if let Some(zones) = &self.zones {
            requirements.push(is_in(ZONE, zones));
        }
        if let Some(capacity_types) = &self.capacity_types {
            requirements.push(is_in(CAPACITY, capacity_types));
        }
        serde_json::from_value(json!({
            "metadata": {"name": "prop-1", "labels": {"karpenter.sh/nodepool": "default"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": Value::Array(requirements),
                "resources": {"requests": {
                    "cpu": format!("{}m", self.cpu_milli),
                    "memory": format!("{}Mi", self.memory_mib),
                }},
            },
        }))
        .expect("a NodeClaim")
    }

    fn requests(&self) -> ResourceList {
        let mut requests = ResourceList::new();
        requests.set("cpu", i64::from(self.cpu_milli));
        requests.set("memory", i64::from(self.memory_mib) * (1 << 20) * 1000);
        requests
    }
}

/// A non-empty subset of `values`, in their order.
fn subset(values: &'static [&'static str]) -> impl Strategy<Value = Vec<&'static str>> {
    prop::sample::subsequence(values, 1..=values.len())
}

fn case() -> impl Strategy<Value = Case> {
    let offering = (
        prop::sample::select(TYPES.as_slice()),
        prop::sample::select(ZONES.as_slice()),
        prop::sample::select(CAPACITY_TYPES.as_slice()),
    );
    (
        subset(&TYPES),
        proptest::option::of(subset(&ZONES)),
        proptest::option::of(subset(&CAPACITY_TYPES)),
        // Up to a little over the largest type's (m5.xlarge: 4 vCPUs,
        // 16 GiB), so that most claims fit some type and some fit none.
        100_u32..=4500,
        128_u32..=18 * 1024,
        prop::collection::vec(offering, 0..8),
    )
        .prop_map(
            |(types, zones, capacity_types, cpu_milli, memory_mib, sold_out)| Case {
                types,
                zones,
                capacity_types,
                cpu_milli,
                memory_mib,
                sold_out,
            },
        )
}

fn target(capacity_type: &str) -> TargetCapacityType {
    if capacity_type == "spot" {
        TargetCapacityType::Spot
    } else {
        TargetCapacityType::OnDemand
    }
}

fn instance_ids(ec2: &InMemoryEc2) -> BTreeSet<String> {
    ec2.instances().into_iter().map(|i| i.instance_id).collect()
}

/// Whether `types` offered `name` in `zone` as `capacity_type`, available.
fn was_available(types: &[InstanceType], name: &str, zone: &str, capacity_type: &str) -> bool {
    types
        .iter()
        .filter(|t| t.name == name)
        .flat_map(|t| &t.offerings)
        .any(|o| o.available && o.zone == zone && o.capacity_type == capacity_type)
}

/// Runs one case; `Err` describes the broken invariant.
async fn check(case: &Case) -> Result<(), String> {
    let ec2 = ec2();
    for (name, zone, capacity_type) in &case.sold_out {
        ec2.set_capacity(name, zone, target(capacity_type), 0);
    }
    let (provider, _clock) = provider(&ec2);
    let types = provider
        .instance_types(&pool())
        .await
        .map_err(|e| format!("instance types: {e}"))?;
    let before = instance_ids(&ec2);
    let result = provider.create(&case.claim()).await;
    let after = instance_ids(&ec2);
    let launched = match result {
        Ok(launched) => launched,
        Err(CloudProviderError::InsufficientCapacity { .. }) if after == before => return Ok(()),
        Err(CloudProviderError::InsufficientCapacity { .. }) => {
            return Err(format!(
                "insufficient capacity, yet {after:?} after {before:?}"
            ));
        }
        Err(other) => {
            return Err(format!(
                "neither a launch nor insufficient capacity: {other}"
            ));
        }
    };
    if after.len() != before.len() + 1 || !before.is_subset(&after) {
        return Err(format!("launched {after:?} after {before:?}"));
    }
    let (name, zone, capacity_type) = (
        label(&launched, TYPE),
        label(&launched, ZONE),
        label(&launched, CAPACITY),
    );
    let allowed = |values: Option<&Vec<&str>>, value: &str| {
        values.is_none_or(|values| values.contains(&value))
    };
    if !allowed(Some(&case.types), &name)
        || !allowed(case.zones.as_ref(), &zone)
        || !allowed(case.capacity_types.as_ref(), &capacity_type)
    {
        return Err(format!(
            "{name} {zone} {capacity_type} breaks the claim's requirements"
        ));
    }
    if case
        .sold_out
        .iter()
        .any(|&(n, z, c)| (n, z, c) == (name.as_str(), zone.as_str(), capacity_type.as_str()))
    {
        return Err(format!("{name} {zone} {capacity_type} was sold out"));
    }
    if !was_available(&types, &name, &zone, &capacity_type) {
        return Err(format!(
            "{name} {zone} {capacity_type} was not an available offering"
        ));
    }
    let allocatable = launched
        .status
        .as_ref()
        .and_then(|s| s.allocatable.as_ref())
        .map(|q| ResourceList::from_quantities(q.as_map()))
        .transpose()
        .map_err(|e| format!("allocatable: {e}"))?
        .unwrap_or_default();
    if !case.requests().fits(&allocatable) {
        return Err(format!(
            "{name}'s allocatable {allocatable:?} does not hold the requests"
        ));
    }
    Ok(())
}

proptest! {
    // Each case builds a provider and its 1,382 types; 32 keep it quick.
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn create_launches_one_instance_honouring_the_claim_or_none(case in case()) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
        prop_assert!(runtime.is_ok(), "a runtime");
        let outcome = runtime.map(|r| r.block_on(check(&case)));
        prop_assert_eq!(outcome.ok(), Some(Ok(())));
    }
}
