//! The suite every [`CloudProvider`] runs (see the module above): it
//! launches (and deletes again) a few instances of the cheapest available
//! offering of a pool's instance types. When the provider reports an
//! offering unavailable, it also checks that launching exactly that offering
//! fails with insufficient capacity naming it.

use std::collections::BTreeSet;

use super::check::{Check, Checks, check};
use karpenter_core::api::{NodeClaim, NodePool, NodeSelectorRequirementWithMinValues};
use karpenter_core::cloudprovider::{CloudProvider, CloudProviderError, InstanceType, OfferingKey};
use karpenter_core::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE, NODE_POOL_LABEL_KEY,
    Operator, WellKnownLabels,
};

/// How many times the suite calls `delete` (or `get`) waiting for an
/// instance to be reported gone.
const DELETE_ATTEMPTS: usize = 20;

/// Runs every check against `provider`, launching from `pool`.
pub async fn run(provider: &dyn CloudProvider, pool: &NodePool) -> Vec<Check> {
    let mut checks = Checks::default();
    checks.record(
        "name is not empty",
        check(!provider.name().is_empty(), || "empty name".into()),
    );
    checks.record(
        "repair policies name their condition",
        repair_policies(provider),
    );
    let types = match provider.instance_types(pool).await {
        Ok(types) => types,
        Err(error) => {
            checks.record("instance types are listed", Err(error.to_string()));
            return checks.into_vec();
        }
    };
    checks.record("instance types are well formed", well_formed(&types));
    checks.record(
        "every label of the instance types is well known",
        labels_well_known(provider, &types),
    );
    checks.record(
        "get of an unknown provider ID is not found",
        unknown_get(provider).await,
    );
    checks.record(
        "delete of an unknown claim is not found",
        unknown_delete(provider, pool).await,
    );
    checks.record(
        "an impossible claim launches nothing",
        impossible(provider, pool).await,
    );
    if let Some(offering) = unavailable(&types) {
        checks.record(
            "an unavailable offering fails with insufficient capacity",
            sold_out(provider, pool, &offering).await,
        );
    }
    if let Some((label, offering)) = provider_label(&types) {
        checks.record(
            "a claim selecting a provider label launches a type with it",
            selecting_a_label(provider, pool, &label, &offering).await,
        );
    }
    match cheapest(&types) {
        Some(offering) => {
            checks.record(
                "create, get, list, drift and delete",
                lifecycle(provider, pool, &offering).await,
            );
            checks.record(
                "two launches are two instances",
                twice(provider, pool, &offering).await,
            );
        }
        None => checks.record("an offering is available", Err("none is".into())),
    }
    checks.into_vec()
}

fn repair_policies(provider: &dyn CloudProvider) -> Result<(), String> {
    let policies = provider.repair_policies();
    check(
        policies.iter().all(|p| !p.condition_type.is_empty()),
        || format!("{policies:?}"),
    )
}

/// Every key the types' labels have is in the provider's well-known labels, so
/// that a pod may select it (the driver plans with them).
fn labels_well_known(provider: &dyn CloudProvider, types: &[InstanceType]) -> Result<(), String> {
    let well_known = provider.well_known_labels();
    let missing: BTreeSet<&str> = types
        .iter()
        .flat_map(|t| t.requirements.iter().map(|r| r.key()))
        .filter(|key| !well_known.contains(key))
        .collect();
    check(missing.is_empty(), || {
        format!("not in well_known_labels(): {missing:?}")
    })
}

/// Names unique, offerings with zones and capacity types, allocatable within
/// capacity.
fn well_formed(types: &[InstanceType]) -> Result<(), String> {
    let mut names = BTreeSet::new();
    for instance_type in types {
        if !names.insert(instance_type.name.as_str()) {
            return Err(format!("{} listed twice", instance_type.name));
        }
        if instance_type.offerings.is_empty() {
            return Err(format!("{} has no offering", instance_type.name));
        }
        for offering in &instance_type.offerings {
            if offering.zone.is_empty() || offering.capacity_type.is_empty() {
                return Err(format!(
                    "{} has an offering without zone or capacity type",
                    instance_type.name
                ));
            }
            if !offering.price.is_finite() || offering.price < 0.0 {
                return Err(format!(
                    "{} has price {}",
                    instance_type.name, offering.price
                ));
            }
        }
        if !instance_type.allocatable().fits(&instance_type.capacity) {
            return Err(format!(
                "{}: allocatable exceeds capacity",
                instance_type.name
            ));
        }
    }
    Ok(())
}

fn key(instance_type: &InstanceType, zone: &str, capacity_type: &str) -> OfferingKey {
    OfferingKey::new(instance_type.name.clone(), zone, capacity_type)
}

/// The cheapest available offering (ties by name).
fn cheapest(types: &[InstanceType]) -> Option<OfferingKey> {
    types
        .iter()
        .flat_map(|t| {
            t.offerings
                .iter()
                .filter(|o| o.available)
                .map(move |o| (o.price, key(t, &o.zone, &o.capacity_type)))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)))
        .map(|(_, key)| key)
}

/// A label of the provider's own (not one of the core's) that some type with
/// an available offering carries with one value, and the cheapest such
/// offering (ties by name).
fn provider_label(types: &[InstanceType]) -> Option<((String, String), OfferingKey)> {
    let core = WellKnownLabels::core();
    types
        .iter()
        .flat_map(|t| {
            let label = t
                .requirements
                .iter()
                .find(|r| !core.contains(r.key()) && r.operator() == Operator::In && r.len() == 1)
                .and_then(|r| Some((r.key().to_owned(), r.any()?)));
            t.offerings
                .iter()
                .filter(|o| o.available)
                .filter_map(move |o| {
                    Some((o.price, label.clone()?, key(t, &o.zone, &o.capacity_type)))
                })
        })
        .min_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.2.cmp(&b.2)))
        .map(|(_, label, key)| (label, key))
}

/// A claim that names a provider label instead of an instance type launches a
/// type that carries it: the provider reads its own labels in a claim's
/// requirements, as a pod selecting them asks.
async fn selecting_a_label(
    provider: &dyn CloudProvider,
    pool: &NodePool,
    (key, value): &(String, String),
    offering: &OfferingKey,
) -> Result<(), String> {
    let mut wanted = claim(pool, "conformance-label", offering);
    if let Some(requirements) = wanted.spec.requirements.as_mut() {
        requirements.retain(|r| r.key != LABEL_INSTANCE_TYPE_STABLE);
        requirements.push(NodeSelectorRequirementWithMinValues::new(
            key,
            "In",
            [value.as_str()],
        ));
    }
    let launched = provider
        .create(&wanted)
        .await
        .map_err(|e| format!("create with {key}={value}: {e}"))?;
    let types = provider
        .instance_types(pool)
        .await
        .map_err(|e| e.to_string())?;
    let name = label(&launched, LABEL_INSTANCE_TYPE_STABLE).to_owned();
    let carries = types.iter().any(|t| {
        t.name == name
            && t.requirements
                .get_defined(key)
                .is_some_and(|r| r.has(value))
    });
    delete_until_gone(provider, &launched).await?;
    check(carries, || {
        format!("launched {name:?}, which has no {key}={value}")
    })
}

/// An offering the provider says is unavailable, if any.
fn unavailable(types: &[InstanceType]) -> Option<OfferingKey> {
    types.iter().find_map(|t| {
        let offering = t.offerings.iter().find(|o| !o.available)?;
        Some(key(t, &offering.zone, &offering.capacity_type))
    })
}

/// A claim of `pool` pinned to `offering`'s type, zone and capacity type.
fn claim(pool: &NodePool, name: &str, offering: &OfferingKey) -> NodeClaim {
    let mut claim = pool.spec.template.to_node_claim();
    claim.metadata.name = Some(name.to_owned());
    let pool_name = pool.metadata.name.clone().unwrap_or_default();
    claim
        .metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(NODE_POOL_LABEL_KEY.to_owned(), pool_name);
    claim.spec.requirements = Some(vec![
        NodeSelectorRequirementWithMinValues::new(
            LABEL_INSTANCE_TYPE_STABLE,
            "In",
            [offering.instance_type.as_str()],
        ),
        NodeSelectorRequirementWithMinValues::new(
            LABEL_TOPOLOGY_ZONE,
            "In",
            [offering.zone.as_str()],
        ),
        NodeSelectorRequirementWithMinValues::new(
            CAPACITY_TYPE_LABEL_KEY,
            "In",
            [offering.capacity_type.as_str()],
        ),
    ]);
    claim
}

fn provider_id(claim: &NodeClaim) -> Option<&str> {
    claim.status.as_ref()?.provider_id.as_deref()
}

fn label<'c>(claim: &'c NodeClaim, key: &str) -> &'c str {
    claim
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
        .unwrap_or_default()
}

async fn instance_count(provider: &dyn CloudProvider) -> Result<usize, String> {
    provider
        .list()
        .await
        .map(|l| l.len())
        .map_err(|e| e.to_string())
}

async fn unknown_get(provider: &dyn CloudProvider) -> Result<(), String> {
    match provider.get("conformance:///no-such-instance").await {
        Err(CloudProviderError::NodeClaimNotFound { .. }) => Ok(()),
        other => Err(format!("got {other:?}")),
    }
}

async fn unknown_delete(provider: &dyn CloudProvider, pool: &NodePool) -> Result<(), String> {
    let mut ghost = claim(
        pool,
        "conformance-ghost",
        &OfferingKey::new("none", "none", "none"),
    );
    ghost
        .status
        .get_or_insert_with(Default::default)
        .provider_id = Some("conformance:///no-such-instance".into());
    match provider.delete(&ghost).await {
        Err(CloudProviderError::NodeClaimNotFound { .. }) => Ok(()),
        other => Err(format!("got {other:?}")),
    }
}

async fn impossible(provider: &dyn CloudProvider, pool: &NodePool) -> Result<(), String> {
    let before = instance_count(provider).await?;
    let wanted = claim(
        pool,
        "conformance-impossible",
        &OfferingKey::new(
            "conformance-no-such-type",
            "conformance-no-such-zone",
            "on-demand",
        ),
    );
    match provider.create(&wanted).await {
        Ok(launched) => Err(format!("launched {:?}", provider_id(&launched))),
        Err(_) => check(instance_count(provider).await? == before, || {
            "an instance appeared".into()
        }),
    }
}

async fn sold_out(
    provider: &dyn CloudProvider,
    pool: &NodePool,
    offering: &OfferingKey,
) -> Result<(), String> {
    let before = instance_count(provider).await?;
    match provider
        .create(&claim(pool, "conformance-sold-out", offering))
        .await
    {
        Err(CloudProviderError::InsufficientCapacity { offerings, .. }) => {
            check(offerings.contains(offering), || {
                format!("named {offerings:?}, not {offering}")
            })?;
            check(instance_count(provider).await? == before, || {
                "an instance appeared".into()
            })
        }
        other => Err(format!("got {other:?}")),
    }
}

/// Create returns the claim hydrated; get, list and drift agree; delete ends
/// in not-found.
async fn lifecycle(
    provider: &dyn CloudProvider,
    pool: &NodePool,
    offering: &OfferingKey,
) -> Result<(), String> {
    let wanted = claim(pool, "conformance-1", offering);
    let launched = provider
        .create(&wanted)
        .await
        .map_err(|e| format!("create: {e}"))?;
    let id = provider_id(&launched)
        .ok_or("create returned no provider ID")?
        .to_owned();
    let result = async {
        check(launched.metadata.name == wanted.metadata.name, || {
            "create changed the name".into()
        })?;
        for (key, value) in [
            (LABEL_INSTANCE_TYPE_STABLE, &offering.instance_type),
            (LABEL_TOPOLOGY_ZONE, &offering.zone),
            (CAPACITY_TYPE_LABEL_KEY, &offering.capacity_type),
        ] {
            check(label(&launched, key) == value, || {
                format!("label {key} is {:?}, not {value}", label(&launched, key))
            })?;
        }
        let status = launched.status.as_ref().ok_or("no status")?;
        check(
            status
                .capacity
                .as_ref()
                .is_some_and(|c| !c.as_map().is_empty()),
            || "no capacity".into(),
        )?;
        check(
            status
                .allocatable
                .as_ref()
                .is_some_and(|c| !c.as_map().is_empty()),
            || "no allocatable".into(),
        )?;
        let got = provider.get(&id).await.map_err(|e| format!("get: {e}"))?;
        check(provider_id(&got) == Some(id.as_str()), || {
            "get returned another instance".into()
        })?;
        check(
            label(&got, LABEL_INSTANCE_TYPE_STABLE) == offering.instance_type,
            || "get lost the labels".into(),
        )?;
        let listed = provider.list().await.map_err(|e| format!("list: {e}"))?;
        check(
            listed.iter().any(|c| provider_id(c) == Some(id.as_str())),
            || "list misses the instance".into(),
        )?;
        match provider.is_drifted(&launched).await {
            Ok(None) => Ok(()),
            other => Err(format!("a fresh instance: is_drifted gave {other:?}")),
        }
    }
    .await;
    let deleted = delete_until_gone(provider, &launched).await;
    result?;
    deleted?;
    match provider.get(&id).await {
        Err(CloudProviderError::NodeClaimNotFound { .. }) => {}
        other => return Err(format!("get after delete gave {other:?}")),
    }
    let listed = provider.list().await.map_err(|e| format!("list: {e}"))?;
    check(
        !listed.iter().any(|c| provider_id(c) == Some(id.as_str())),
        || "list still has the deleted instance".into(),
    )
}

async fn twice(
    provider: &dyn CloudProvider,
    pool: &NodePool,
    offering: &OfferingKey,
) -> Result<(), String> {
    let first = provider
        .create(&claim(pool, "conformance-2", offering))
        .await
        .map_err(|e| e.to_string())?;
    let second = provider
        .create(&claim(pool, "conformance-3", offering))
        .await;
    let outcome = match &second {
        Ok(second) => check(provider_id(&first) != provider_id(second), || {
            "the same provider ID twice".into()
        }),
        // The cloud may have had room for one only.
        Err(CloudProviderError::InsufficientCapacity { .. }) => Ok(()),
        Err(error) => Err(error.to_string()),
    };
    delete_until_gone(provider, &first).await?;
    if let Ok(second) = &second {
        delete_until_gone(provider, second).await?;
    }
    outcome
}

/// Deletes until the provider says the instance is gone.
async fn delete_until_gone(provider: &dyn CloudProvider, claim: &NodeClaim) -> Result<(), String> {
    for _ in 0..DELETE_ATTEMPTS {
        match provider.delete(claim).await {
            Ok(()) => continue,
            Err(CloudProviderError::NodeClaimNotFound { .. }) => return Ok(()),
            Err(error) => return Err(format!("delete: {error}")),
        }
    }
    Err(format!("still there after {DELETE_ATTEMPTS} deletes"))
}
