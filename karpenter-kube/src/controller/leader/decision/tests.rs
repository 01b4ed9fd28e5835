use super::*;

const ME: &str = "karpenter-a_1234";
const OTHER: &str = "karpenter-b_5678";

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + second).unwrap()
}

/// A Lease as read from the API server (with a resourceVersion).
fn lease(
    holder: Option<&str>,
    acquired: Option<i64>,
    renewed: Option<i64>,
    duration: Option<i32>,
) -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some("karpenter-leader-election".into()),
            namespace: Some("kube-system".into()),
            resource_version: Some("42".into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: holder.map(str::to_owned),
            acquire_time: acquired.map(|s| MicroTime(at(s))),
            renew_time: renewed.map(|s| MicroTime(at(s))),
            lease_duration_seconds: duration,
            lease_transitions: Some(3),
            ..LeaseSpec::default()
        }),
    }
}

fn wait(holder: &str, until: Timestamp) -> Decision {
    Decision::Wait {
        holder: holder.into(),
        until,
    }
}

#[test]
fn no_lease_is_created() {
    assert_eq!(decide(None, ME, at(0)), Decision::Create);
}

#[test]
fn a_lease_without_a_spec_or_holder_is_taken_over() {
    let mut bare = lease(None, None, None, None);
    bare.spec = None;
    assert_eq!(decide(Some(&bare), ME, at(0)), Decision::TakeOver);
    // Fresh times do not matter without a holder.
    let fresh = lease(None, Some(0), Some(0), Some(15));
    assert_eq!(decide(Some(&fresh), ME, at(1)), Decision::TakeOver);
    let empty = lease(Some(""), Some(0), Some(0), Some(15));
    assert_eq!(decide(Some(&empty), ME, at(1)), Decision::TakeOver);
}

#[test]
fn our_own_lease_is_renewed_fresh_or_expired() {
    let fresh = lease(Some(ME), Some(0), Some(10), Some(15));
    assert_eq!(decide(Some(&fresh), ME, at(12)), Decision::Renew);
    assert_eq!(decide(Some(&fresh), ME, at(1000)), Decision::Renew);
    let timeless = lease(Some(ME), None, None, None);
    assert_eq!(decide(Some(&timeless), ME, at(0)), Decision::Renew);
}

#[test]
fn another_holder_is_waited_for_until_renewal_plus_duration() {
    let held = lease(Some(OTHER), Some(0), Some(10), Some(15));
    assert_eq!(decide(Some(&held), ME, at(10)), wait(OTHER, at(25)));
    assert_eq!(decide(Some(&held), ME, at(24)), wait(OTHER, at(25)));
    // Expired: renewTime + leaseDurationSeconds is not after now.
    assert_eq!(decide(Some(&held), ME, at(25)), Decision::TakeOver);
    assert_eq!(decide(Some(&held), ME, at(60)), Decision::TakeOver);
}

#[test]
fn expiry_counts_from_the_renewal_not_the_acquisition() {
    let held = lease(Some(OTHER), Some(-100), Some(10), Some(15));
    assert_eq!(decide(Some(&held), ME, at(20)), wait(OTHER, at(25)));
}

#[test]
fn a_never_renewed_lease_counts_from_its_acquisition() {
    let held = lease(Some(OTHER), Some(0), None, Some(15));
    assert_eq!(decide(Some(&held), ME, at(5)), wait(OTHER, at(15)));
    assert_eq!(decide(Some(&held), ME, at(15)), Decision::TakeOver);
}

#[test]
fn a_lease_without_times_or_duration_is_expired() {
    let timeless = lease(Some(OTHER), None, None, Some(15));
    assert_eq!(decide(Some(&timeless), ME, at(0)), Decision::TakeOver);
    let no_duration = lease(Some(OTHER), Some(0), Some(0), None);
    assert_eq!(decide(Some(&no_duration), ME, at(0)), Decision::TakeOver);
    let zero = lease(Some(OTHER), Some(0), Some(0), Some(0));
    assert_eq!(decide(Some(&zero), ME, at(0)), Decision::TakeOver);
    let negative = lease(Some(OTHER), Some(0), Some(10), Some(-5));
    assert_eq!(decide(Some(&negative), ME, at(0)), wait(OTHER, at(10)));
    assert_eq!(decide(Some(&negative), ME, at(10)), Decision::TakeOver);
}

#[test]
fn a_renewal_ahead_of_our_clock_is_waited_for() {
    let skewed = lease(Some(OTHER), Some(100), Some(100), Some(15));
    assert_eq!(decide(Some(&skewed), ME, at(0)), wait(OTHER, at(115)));
}

#[test]
fn an_expiry_past_the_end_of_time_saturates() {
    let mut forever = lease(Some(OTHER), None, None, Some(i32::MAX));
    if let Some(spec) = forever.spec.as_mut() {
        spec.renew_time = Some(MicroTime(Timestamp::MAX));
    }
    assert_eq!(
        decide(Some(&forever), ME, at(0)),
        wait(OTHER, Timestamp::MAX)
    );
}

#[test]
fn a_created_lease_is_held_from_now() {
    let created = created(
        "karpenter-leader-election",
        ME,
        at(5),
        Duration::from_secs(15),
    );
    assert_eq!(
        created.metadata.name.as_deref(),
        Some("karpenter-leader-election")
    );
    assert_eq!(created.metadata.resource_version, None);
    let spec = created.spec.as_ref().unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some(ME));
    assert_eq!(spec.lease_duration_seconds, Some(15));
    assert_eq!(spec.acquire_time, Some(MicroTime(at(5))));
    assert_eq!(spec.renew_time, Some(MicroTime(at(5))));
    assert_eq!(spec.lease_transitions, Some(0));
    assert_eq!(decide(Some(&created), ME, at(6)), Decision::Renew);
    assert_eq!(decide(Some(&created), OTHER, at(6)), wait(ME, at(20)));
}

#[test]
fn a_renewal_moves_only_the_renew_time() {
    let read = lease(Some(ME), Some(0), Some(10), Some(30));
    let written = renewed(&read, ME, at(12), Duration::from_secs(15));
    assert_eq!(written.metadata, read.metadata);
    let spec = written.spec.as_ref().unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some(ME));
    assert_eq!(spec.acquire_time, Some(MicroTime(at(0))));
    assert_eq!(spec.renew_time, Some(MicroTime(at(12))));
    assert_eq!(spec.lease_duration_seconds, Some(15));
    assert_eq!(spec.lease_transitions, Some(3));
    // A lease missing its acquisition time gets one.
    let timeless = lease(Some(ME), None, None, None);
    let spec = renewed(&timeless, ME, at(7), Duration::from_secs(15))
        .spec
        .unwrap();
    assert_eq!(spec.acquire_time, Some(MicroTime(at(7))));
}

#[test]
fn a_take_over_counts_a_transition_and_keeps_the_resource_version() {
    let read = lease(Some(OTHER), Some(0), Some(10), Some(15));
    let taken = taken_over(&read, ME, at(30), Duration::from_secs(15));
    assert_eq!(taken.metadata.resource_version.as_deref(), Some("42"));
    let spec = taken.spec.as_ref().unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some(ME));
    assert_eq!(spec.acquire_time, Some(MicroTime(at(30))));
    assert_eq!(spec.renew_time, Some(MicroTime(at(30))));
    assert_eq!(spec.lease_duration_seconds, Some(15));
    assert_eq!(spec.lease_transitions, Some(4));
    let mut bare = read.clone();
    bare.spec = None;
    let spec = taken_over(&bare, ME, at(30), Duration::from_secs(15))
        .spec
        .unwrap();
    assert_eq!(spec.lease_transitions, Some(1));
    let mut saturated = read;
    if let Some(spec) = saturated.spec.as_mut() {
        spec.lease_transitions = Some(i32::MAX);
    }
    let spec = taken_over(&saturated, ME, at(30), Duration::from_secs(15))
        .spec
        .unwrap();
    assert_eq!(spec.lease_transitions, Some(i32::MAX));
}

#[test]
fn a_released_lease_has_no_holder_and_is_free_to_all() {
    let held = lease(Some(ME), Some(0), Some(10), Some(15));
    let written = released(&held, at(11));
    assert_eq!(written.metadata, held.metadata);
    let spec = written.spec.as_ref().unwrap();
    assert_eq!(spec.holder_identity, None);
    assert_eq!(spec.lease_duration_seconds, Some(1));
    assert_eq!(spec.renew_time, Some(MicroTime(at(11))));
    assert_eq!(spec.acquire_time, Some(MicroTime(at(11))));
    assert_eq!(spec.lease_transitions, Some(3));
    assert_eq!(decide(Some(&written), OTHER, at(11)), Decision::TakeOver);
    assert_eq!(decide(Some(&written), ME, at(11)), Decision::TakeOver);
}

#[test]
fn durations_are_whole_positive_seconds() {
    assert_eq!(seconds(Duration::from_millis(15_900)), 15);
    assert_eq!(seconds(Duration::ZERO), 1);
    assert_eq!(seconds(Duration::from_secs(u64::MAX)), i32::MAX);
}
