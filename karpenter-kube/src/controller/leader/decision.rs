//! What to do with the Lease as read: the pure half of leader election, and
//! the Lease each write sends.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};

/// What a candidate does after reading the Lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// There is no Lease: create one naming this candidate.
    Create,
    /// This candidate holds the Lease: renew it.
    Renew,
    /// Nobody holds the Lease, or its holder let it expire: take it over.
    TakeOver,
    /// Another candidate holds the Lease: wait, at least until `until`, when
    /// it expires unless renewed.
    Wait {
        /// The holder's identity.
        holder: String,
        /// When the holder's lease runs out: its last renewal (or, never
        /// renewed, its acquisition) plus its duration.
        until: Timestamp,
    },
}

/// Decides, for the candidate `identity` at `now`, what to do with `lease`
/// (`None`: there is none).
///
/// A Lease without a holder (released, or never held) is free. One held by
/// another identity is free once `renewTime` (else `acquireTime`) plus
/// `leaseDurationSeconds` is not after `now` (a missing or negative duration
/// counts as zero); without either time it is expired.
pub fn decide(lease: Option<&Lease>, identity: &str, now: Timestamp) -> Decision {
    let Some(lease) = lease else {
        return Decision::Create;
    };
    let spec = lease.spec.as_ref();
    let holder = spec
        .and_then(|spec| spec.holder_identity.as_deref())
        .unwrap_or_default();
    if holder.is_empty() {
        return Decision::TakeOver;
    }
    if holder == identity {
        return Decision::Renew;
    }
    match spec.and_then(expiry) {
        Some(until) if until > now => Decision::Wait {
            holder: holder.to_owned(),
            until,
        },
        _ => Decision::TakeOver,
    }
}

/// When `spec`'s holder's lease runs out, if it names a time.
fn expiry(spec: &LeaseSpec) -> Option<Timestamp> {
    let since = spec.renew_time.as_ref().or(spec.acquire_time.as_ref())?.0;
    let seconds = spec.lease_duration_seconds.unwrap_or(0).max(0);
    let duration = Duration::from_secs(u64::try_from(seconds).unwrap_or(0));
    Some(since.saturating_add(duration).unwrap_or(Timestamp::MAX))
}

/// `duration` in whole seconds, as `leaseDurationSeconds` holds it (at least
/// 1, at most `i32::MAX`).
fn seconds(duration: Duration) -> i32 {
    i32::try_from(duration.as_secs()).unwrap_or(i32::MAX).max(1)
}

/// A new Lease `name` held by `identity` from `now`.
pub(super) fn created(name: &str, identity: &str, now: Timestamp, duration: Duration) -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(identity.to_owned()),
            lease_duration_seconds: Some(seconds(duration)),
            acquire_time: Some(MicroTime(now)),
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(0),
            ..LeaseSpec::default()
        }),
    }
}

/// `read`, which `identity` holds, renewed at `now`. Keeps its metadata
/// (the `resourceVersion` the replace is conditional on).
pub(super) fn renewed(read: &Lease, identity: &str, now: Timestamp, duration: Duration) -> Lease {
    let mut lease = read.clone();
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    spec.holder_identity = Some(identity.to_owned());
    spec.lease_duration_seconds = Some(seconds(duration));
    spec.acquire_time.get_or_insert(MicroTime(now));
    spec.renew_time = Some(MicroTime(now));
    lease
}

/// `read` taken over by `identity` at `now`: one more transition.
pub(super) fn taken_over(
    read: &Lease,
    identity: &str,
    now: Timestamp,
    duration: Duration,
) -> Lease {
    let mut lease = read.clone();
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    spec.holder_identity = Some(identity.to_owned());
    spec.lease_duration_seconds = Some(seconds(duration));
    spec.acquire_time = Some(MicroTime(now));
    spec.renew_time = Some(MicroTime(now));
    spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
    lease
}

/// `held` given up at `now`: no holder, and a one-second duration so that
/// candidates reading an old copy wait no longer than that.
pub(super) fn released(held: &Lease, now: Timestamp) -> Lease {
    let mut lease = held.clone();
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    spec.holder_identity = None;
    spec.lease_duration_seconds = Some(1);
    spec.acquire_time = Some(MicroTime(now));
    spec.renew_time = Some(MicroTime(now));
    lease
}

#[cfg(test)]
mod tests;
