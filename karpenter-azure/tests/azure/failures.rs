//! Each row of upstream's failure table: what an Azure error marks
//! unavailable, and for how long.

use jiff::{SignedDuration, Timestamp};
use karpenter_azure::{Attempt, AzureError, FailureCache, FailureReason};
use karpenter_core::cloudprovider::Offering;

const ZONES: [&str; 4] = ["eastus-1", "eastus-2", "eastus-3", "0"];

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000).expect("a time") + SignedDuration::from_secs(seconds)
}

fn attempt(zone: &str, capacity_type: &str) -> Attempt {
    sized(4, zone, capacity_type)
}

/// A launch of `Standard_D<vcpus>s_v5`.
fn sized(vcpus: u32, zone: &str, capacity_type: &str) -> Attempt {
    Attempt {
        sku: format!("Standard_D{vcpus}s_v5"),
        family: "standardDSv5Family".into(),
        vcpus,
        zone: zone.into(),
        capacity_type: capacity_type.into(),
    }
}

/// On-demand and spot offerings in each of `zones`.
fn offered_in(zones: &[&str]) -> Vec<Offering> {
    zones
        .iter()
        .flat_map(|z| {
            [
                Offering::new(*z, "on-demand", 0.2),
                Offering::new(*z, "spot", 0.2),
            ]
        })
        .collect()
}

fn error(code: &str, message: &str) -> AzureError {
    AzureError {
        code: code.into(),
        message: message.into(),
    }
}

/// Whether `Standard_D<vcpus>s_v5` is unavailable in `zone` as `ct` at `t`.
fn d_blocked(cache: &FailureCache, vcpus: u32, zone: &str, ct: &str, t: Timestamp) -> bool {
    let sku = format!("Standard_D{vcpus}s_v5");
    cache.is_unavailable(&sku, "standardDSv5Family", vcpus, zone, ct, t)
}

/// The (zone, capacity type) pairs of D4s_v5 unavailable at `t`.
fn blocked(cache: &FailureCache, t: Timestamp) -> Vec<String> {
    let mut out = Vec::new();
    for zone in ZONES {
        for ct in ["on-demand", "spot"] {
            if cache.is_unavailable("Standard_D4s_v5", "standardDSv5Family", 4, zone, ct, t) {
                out.push(format!("{zone}/{ct}"));
            }
        }
    }
    out
}

fn record(
    code: &str,
    message: &str,
    zone: &str,
    ct: &str,
) -> (FailureCache, Option<FailureReason>) {
    let mut cache = FailureCache::new();
    let error = error(code, message);
    let reason = cache.record(&error, &attempt(zone, ct), &offered_in(&ZONES), at(0));
    (cache, reason)
}

const HOUR: i64 = 3600;

/// A row of the table: the error's code and message, the zone and capacity
/// type launched into, the reason recorded, the (zone, capacity type) pairs
/// it blocks, and for how many seconds.
type Case = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Option<FailureReason>,
    Vec<String>,
    i64,
);

/// The zones of the region (not the regional `0`).
const ZONAL_ALL: [&str; 3] = ["eastus-1", "eastus-2", "eastus-3"];

/// Quota errors: the capacity type everywhere (a family limit for a while).
fn quota_cases() -> Vec<Case> {
    use FailureReason::*;
    vec![
        (
            "OperationNotAllowed",
            "Operation could not be completed as it results in exceeding approved LowPriorityCores quota",
            "eastus-1",
            "spot",
            Some(SubscriptionQuotaReached),
            ZONES.iter().map(|z| format!("{z}/spot")).collect(),
            HOUR,
        ),
        (
            "OperationNotAllowed",
            "exceeding approved standardDSv5Family Cores quota. Current Limit: 0",
            "eastus-1",
            "on-demand",
            Some(SubscriptionQuotaReached),
            ZONES.iter().map(|z| format!("{z}/on-demand")).collect(),
            HOUR,
        ),
        (
            "OperationNotAllowed",
            "exceeding approved standardDSv5Family Family Cores quota. Current Limit: 100",
            "eastus-1",
            "on-demand",
            Some(SubscriptionQuotaReached),
            ZONES.iter().map(|z| format!("{z}/on-demand")).collect(),
            600,
        ),
    ]
}

/// A size not available: its capacity type in every zone.
fn sku_not_available_cases() -> Vec<Case> {
    use FailureReason::*;
    vec![
        (
            "SkuNotAvailable",
            "The requested VM size is not available",
            "eastus-2",
            "on-demand",
            Some(SkuNotAvailable),
            ZONAL_ALL.iter().map(|z| format!("{z}/on-demand")).collect(),
            23 * HOUR,
        ),
        (
            "SkuNotAvailable",
            "The requested VM size is not available",
            "eastus-2",
            "spot",
            Some(SkuNotAvailable),
            ZONAL_ALL.iter().map(|z| format!("{z}/spot")).collect(),
            HOUR,
        ),
    ]
}

/// Allocation failures: the zone, or the capacity type across zones.
fn allocation_cases() -> Vec<Case> {
    use FailureReason::*;
    vec![
        (
            "ZonalAllocationFailed",
            "Allocation failed",
            "eastus-3",
            "spot",
            Some(ZonalAllocationFailure),
            vec!["eastus-3/on-demand".into(), "eastus-3/spot".into()],
            HOUR,
        ),
        (
            "AllocationFailed",
            "Allocation failed",
            "0",
            "on-demand",
            Some(AllocationFailure),
            vec!["0/on-demand".into(), "0/spot".into()],
            HOUR,
        ),
        (
            "OverconstrainedZonalAllocationRequest",
            "",
            "eastus-1",
            "on-demand",
            Some(OverconstrainedZonalAllocationFailure),
            vec!["eastus-1/on-demand".into()],
            HOUR,
        ),
        (
            "OverconstrainedAllocationRequest",
            "",
            "eastus-1",
            "spot",
            Some(OverconstrainedAllocationFailure),
            ZONAL_ALL.iter().map(|z| format!("{z}/spot")).collect(),
            HOUR,
        ),
    ]
}

/// A size the region does not support: every offering.
fn vm_size_not_supported_cases() -> Vec<Case> {
    use FailureReason::*;
    vec![(
        "VMSizeNotSupported",
        "",
        "eastus-1",
        "on-demand",
        Some(SkuNotAvailable),
        ZONES
            .iter()
            .flat_map(|z| [format!("{z}/on-demand"), format!("{z}/spot")])
            .collect(),
        23 * HOUR,
    )]
}

#[test]
fn each_error_marks_its_scope_for_its_time() {
    let rows: Vec<Case> = [
        quota_cases(),
        sku_not_available_cases(),
        allocation_cases(),
        vm_size_not_supported_cases(),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert_eq!(rows.len(), 10);
    for (code, message, zone, ct, reason, expected, ttl) in rows {
        let (cache, got) = record(code, message, zone, ct);
        assert_eq!(got, reason, "{code} {message}");
        let mut expected = expected;
        expected.sort();
        let mut now_blocked = blocked(&cache, at(ttl - 1));
        now_blocked.sort();
        assert_eq!(now_blocked, expected, "{code} {message}: within the TTL");
        assert!(
            blocked(&cache, at(ttl)).is_empty(),
            "{code} {message}: after {ttl}s"
        );
    }
}

#[test]
fn some_errors_mark_nothing() {
    let (cache, reason) = record(
        "OperationNotAllowed",
        "Operation results in exceeding approved Total Regional Cores quota",
        "eastus-1",
        "on-demand",
    );
    assert_eq!(reason, None);
    assert!(blocked(&cache, at(1)).is_empty());
    let (cache, reason) = record(
        "BadRequest",
        "is not supported for subscription",
        "eastus-1",
        "on-demand",
    );
    assert_eq!(reason, Some(FailureReason::SkuNotAvailable));
    assert_eq!(blocked(&cache, at(1)).len(), 8);
}

#[test]
fn a_failed_size_blocks_its_larger_siblings_in_that_zone_and_capacity_type() {
    let (cache, _) = record(
        "OverconstrainedZonalAllocationRequest",
        "",
        "eastus-1",
        "on-demand",
    );
    let family = "standardDSv5Family";
    assert!(cache.is_unavailable("Standard_D8s_v5", family, 8, "eastus-1", "on-demand", at(1)));
    assert!(!cache.is_unavailable("Standard_D2s_v5", family, 2, "eastus-1", "on-demand", at(1)));
    assert!(!cache.is_unavailable("Standard_D8s_v5", family, 8, "eastus-2", "on-demand", at(1)));
    assert!(!cache.is_unavailable("Standard_D8s_v5", family, 8, "eastus-1", "spot", at(1)));
    assert!(!cache.is_unavailable(
        "Standard_E8s_v5",
        "standardESv5Family",
        8,
        "eastus-1",
        "on-demand",
        at(1)
    ));
}

#[test]
fn apply_marks_the_instance_types_offerings() {
    use karpenter_azure::instancetype::{Settings, instance_type};
    let catalog = karpenter_azure::Catalog::embedded();
    let (cache, _) = record("ZonalAllocationFailed", "", "eastus-2", "on-demand");
    let sku = catalog.sku("Standard_D16s_v5").expect("D16s_v5");
    let mut types =
        vec![instance_type(catalog, sku, &Settings::for_region("eastus")).expect("offered")];
    cache.apply(catalog, &mut types, at(5));
    let unavailable: Vec<String> = types[0]
        .offerings
        .iter()
        .filter(|o| !o.available)
        .map(|o| format!("{}/{}", o.zone, o.capacity_type))
        .collect();
    assert_eq!(unavailable, ["eastus-2/on-demand", "eastus-2/spot"]);
    // Nothing launches in eastus-2 now: it is no zone of the type's.
    let zones = types[0]
        .requirements
        .get("topology.kubernetes.io/zone")
        .into_owned();
    assert!(!zones.has("eastus-2") && zones.has("eastus-1"), "{zones:?}");
}

/// Upstream's handlers walk the failed size's offerings: a scope wider than
/// the zone covers the zones the size is offered in, so its family is not
/// blocked where the size is not offered.
#[test]
fn a_scope_covers_only_the_zones_the_failed_size_is_offered_in() {
    let offerings = offered_in(&["eastus-1", "eastus-2", "0"]);
    for (code, message, ct) in [
        (
            "OperationNotAllowed",
            "exceeding approved standardDSv5Family Family Cores quota. Current Limit: 100",
            "on-demand",
        ),
        ("SkuNotAvailable", "", "spot"),
        ("AllocationFailed", "", "on-demand"),
        ("OverconstrainedAllocationRequest", "", "on-demand"),
        ("VMSizeNotSupported", "", "on-demand"),
    ] {
        let mut cache = FailureCache::new();
        let reason = cache.record(
            &error(code, message),
            &sized(4, "eastus-1", ct),
            &offerings,
            at(0),
        );
        assert!(reason.is_some(), "{code}");
        // The larger size is blocked in a zone the failed one is offered in...
        assert!(d_blocked(&cache, 8, "eastus-2", ct, at(1)), "{code}");
        // ...but not in the zone the failed one is not offered in.
        assert!(!d_blocked(&cache, 8, "eastus-3", ct, at(1)), "{code}");
    }
}

/// A family's block that ran out leaves nothing behind: a later failure of
/// a larger size blocks from its own vCPU count, not the old one's.
#[test]
fn a_family_block_that_ran_out_leaves_no_trace() {
    let mut cache = FailureCache::new();
    let offerings = offered_in(&ZONES);
    let zonal = error("ZonalAllocationFailed", "Allocation failed");
    cache.record(
        &zonal,
        &sized(2, "eastus-1", "on-demand"),
        &offerings,
        at(0),
    );
    assert!(d_blocked(&cache, 4, "eastus-1", "on-demand", at(HOUR - 1)));
    cache.record(
        &zonal,
        &sized(16, "eastus-1", "on-demand"),
        &offerings,
        at(2 * HOUR),
    );
    let later = at(2 * HOUR + 1);
    assert!(!d_blocked(&cache, 2, "eastus-1", "on-demand", later));
    assert!(!d_blocked(&cache, 8, "eastus-1", "on-demand", later));
    assert!(d_blocked(&cache, 16, "eastus-1", "on-demand", later));
    assert!(d_blocked(&cache, 32, "eastus-1", "spot", later));
}

/// A repeat failure sets the time again from now; a shorter failure after a
/// longer one neither cuts the longer one short nor stretches its own block
/// to the longer time.
#[test]
fn each_failure_blocks_for_its_own_time_and_a_repeat_extends_it() {
    let offerings = offered_in(&ZONES);
    let zonal = error("OverconstrainedZonalAllocationRequest", "");
    let mut cache = FailureCache::new();
    cache.record(
        &zonal,
        &sized(4, "eastus-1", "on-demand"),
        &offerings,
        at(0),
    );
    cache.record(
        &zonal,
        &sized(4, "eastus-1", "on-demand"),
        &offerings,
        at(1800),
    );
    assert!(d_blocked(
        &cache,
        4,
        "eastus-1",
        "on-demand",
        at(HOUR + 1799)
    ));
    assert!(d_blocked(
        &cache,
        8,
        "eastus-1",
        "on-demand",
        at(HOUR + 1799)
    ));
    assert!(!d_blocked(
        &cache,
        4,
        "eastus-1",
        "on-demand",
        at(HOUR + 1800)
    ));

    let mut cache = FailureCache::new();
    let unavailable = error("SkuNotAvailable", "The requested VM size is not available");
    cache.record(
        &unavailable,
        &sized(16, "eastus-1", "on-demand"),
        &offerings,
        at(0),
    );
    cache.record(
        &zonal,
        &sized(4, "eastus-1", "on-demand"),
        &offerings,
        at(60),
    );
    // Within the short failure's hour: from 4 vCPUs up.
    assert!(d_blocked(&cache, 8, "eastus-1", "on-demand", at(HOUR)));
    // After it: the 8-vCPU size is free again, the long block still holds.
    assert!(!d_blocked(&cache, 4, "eastus-1", "on-demand", at(2 * HOUR)));
    assert!(!d_blocked(&cache, 8, "eastus-1", "on-demand", at(2 * HOUR)));
    assert!(d_blocked(&cache, 16, "eastus-1", "on-demand", at(2 * HOUR)));
    assert!(d_blocked(
        &cache,
        32,
        "eastus-1",
        "on-demand",
        at(23 * HOUR - 1)
    ));
    assert!(!d_blocked(
        &cache,
        32,
        "eastus-1",
        "on-demand",
        at(23 * HOUR)
    ));
}
