//! The status conditions the resolution sets, and `Ready` over them, as
//! upstream's condition set (awslabs/operatorpkg `status`) keeps them.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use karpenter_core::api::{Condition, ConditionStatus};

use crate::nodeclass::condition_types as types;

/// The root condition.
pub(crate) const READY: &str = "Ready";

/// When and for which generation conditions are written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamp {
    /// Now: the transition time of a condition whose status changes.
    pub(crate) now: Timestamp,
    /// The object's creation: the transition time of a condition first
    /// written as awaiting reconciliation.
    pub(crate) created: Timestamp,
    /// `metadata.generation`, every written condition's observed one.
    pub(crate) generation: Option<i64>,
}

impl Stamp {
    /// The stamp of conditions written on `class` at `now`.
    pub(crate) fn of(class: &crate::nodeclass::EC2NodeClass, now: Timestamp) -> Self {
        let created = class.metadata.creation_timestamp.as_ref();
        Stamp {
            now,
            created: created.map_or(now, |time| time.0),
            generation: class.metadata.generation,
        }
    }
}

/// Sets condition `type_` in `conditions`: its transition time moves only
/// when its status changes.
pub(crate) fn set(
    conditions: &mut Vec<Condition>,
    stamp: Stamp,
    type_: &str,
    status: ConditionStatus,
    reason: &str,
    message: &str,
) {
    let previous = conditions.iter().position(|c| c.type_ == type_);
    let mut condition = match previous {
        Some(index) => conditions.remove(index),
        None => Condition::new(type_, status),
    };
    if previous.is_none() || condition.status != status || condition.last_transition_time.is_none()
    {
        condition.last_transition_time = Some(Time(stamp.now));
    }
    condition.status = status;
    condition.observed_generation = stamp.generation;
    condition.reason = Some(reason.to_owned());
    condition.message = (!message.is_empty()).then(|| message.to_owned());
    conditions.push(condition);
}

/// Sets `type_` True, its reason its type, as upstream writes it.
pub(crate) fn set_true(conditions: &mut Vec<Condition>, stamp: Stamp, type_: &str) {
    set(conditions, stamp, type_, ConditionStatus::True, type_, "");
}

/// The conditions `Ready` rests on; `CapacityReservationsReady` only with
/// the `ReservedCapacity` gate.
pub(crate) fn dependents(reserved_capacity: bool) -> Vec<&'static str> {
    let mut dependents = vec![
        types::AMIS_READY,
        types::SUBNETS_READY,
        types::SECURITY_GROUPS_READY,
        types::INSTANCE_PROFILE_READY,
        types::VALIDATION_SUCCEEDED,
        types::PLACEMENT_GROUP_READY,
    ];
    if reserved_capacity {
        dependents.push(types::CAPACITY_RESERVATIONS_READY);
    }
    dependents
}

/// Writes `Ready` and every dependent never written (Unknown, awaiting
/// reconciliation, since the object's creation), then orders the
/// conditions as upstream stores them: oldest transition first, `Ready`
/// last.
///
/// `Ready` is True when every dependent is True for this generation.
/// Otherwise it names those that are not (most recent transition first):
/// False (`UnhealthyDependents`) when one of them is False for this
/// generation, else Unknown (`ReconcilingDependents`).
pub(crate) fn set_ready(conditions: &mut Vec<Condition>, stamp: Stamp, reserved_capacity: bool) {
    let dependents = dependents(reserved_capacity);
    for type_ in dependents.iter().copied().chain([READY]) {
        if !conditions.iter().any(|c| c.type_ == type_) {
            let mut awaiting = Condition::new(type_, ConditionStatus::Unknown);
            awaiting.observed_generation = stamp.generation;
            awaiting.last_transition_time = Some(Time(stamp.created));
            awaiting.reason = Some("AwaitingReconciliation".into());
            awaiting.message = Some("object is awaiting reconciliation".into());
            conditions.push(awaiting);
        }
    }
    let current = |c: &Condition| c.observed_generation == stamp.generation;
    let mut unhealthy: Vec<&Condition> = conditions
        .iter()
        .filter(|c| dependents.contains(&c.type_.as_str()))
        .filter(|c| !c.is_true() || !current(c))
        .collect();
    unhealthy.sort_by(|a, b| b.last_transition_time.cmp(&a.last_transition_time));
    if unhealthy.is_empty() {
        set_true(conditions, stamp, READY);
    } else {
        let failed = unhealthy
            .iter()
            .any(|c| c.status == ConditionStatus::False && current(c));
        let (status, reason) = if failed {
            (ConditionStatus::False, "UnhealthyDependents")
        } else {
            (ConditionStatus::Unknown, "ReconcilingDependents")
        };
        let message = unhealthy
            .iter()
            .map(|c| format!("{}={}", c.type_, c.status))
            .collect::<Vec<_>>()
            .join(", ");
        set(conditions, stamp, READY, status, reason, &message);
    }
    // Stable: conditions of one transition time keep their order.
    conditions.sort_by(|a, b| {
        (a.type_ == READY)
            .cmp(&(b.type_ == READY))
            .then(a.last_transition_time.cmp(&b.last_transition_time))
    });
}
