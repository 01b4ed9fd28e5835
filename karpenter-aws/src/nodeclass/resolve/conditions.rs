//! The status conditions the resolution sets, and `Ready` over them as
//! upstream's condition set derives it.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use karpenter_core::api::{Condition, ConditionStatus};

use crate::nodeclass::condition_types as types;

/// The root condition.
pub(crate) const READY: &str = "Ready";

/// When and for which generation conditions are written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamp {
    pub(crate) now: Timestamp,
    pub(crate) generation: Option<i64>,
}

/// Sets condition `type_` in `conditions`: its transition time moves only
/// when its status changes. A True condition's reason is its type, as
/// upstream writes it.
pub(crate) fn set(
    conditions: &mut Vec<Condition>,
    stamp: Stamp,
    type_: &str,
    status: ConditionStatus,
    reason: &str,
    message: &str,
) {
    let index = match conditions.iter().position(|c| c.type_ == type_) {
        Some(index) => index,
        None => {
            conditions.push(Condition::new(type_, ConditionStatus::Unknown));
            conditions.len() - 1
        }
    };
    let Some(condition) = conditions.get_mut(index) else {
        return;
    };
    if condition.status != status || condition.last_transition_time.is_none() {
        condition.last_transition_time = Some(Time(stamp.now));
    }
    condition.status = status;
    condition.observed_generation = stamp.generation;
    condition.reason = Some(reason.to_owned());
    condition.message = (!message.is_empty()).then(|| message.to_owned());
}

/// Sets `type_` True.
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

/// Sets `Ready`: True when every dependent is; else False when one is
/// False, Unknown otherwise, naming the dependents that are not True. A
/// dependent never written starts Unknown, awaiting its reconciler.
pub(crate) fn set_ready(conditions: &mut Vec<Condition>, stamp: Stamp, reserved_capacity: bool) {
    let dependents = dependents(reserved_capacity);
    for type_ in &dependents {
        if !conditions.iter().any(|c| c.type_ == *type_) {
            set(
                conditions,
                stamp,
                type_,
                ConditionStatus::Unknown,
                "AwaitingReconciliation",
                "object is awaiting reconciliation",
            );
        }
    }
    let unhealthy: Vec<(&str, ConditionStatus)> = dependents
        .iter()
        .filter_map(|type_| {
            let condition = conditions.iter().find(|c| c.type_ == *type_)?;
            (!condition.is_true()).then_some((*type_, condition.status))
        })
        .collect();
    if unhealthy.is_empty() {
        set_true(conditions, stamp, READY);
        return;
    }
    let status = if unhealthy.iter().any(|(_, s)| *s == ConditionStatus::False) {
        ConditionStatus::False
    } else {
        ConditionStatus::Unknown
    };
    let message = unhealthy
        .iter()
        .map(|(type_, status)| format!("{type_}={status}"))
        .collect::<Vec<_>>()
        .join(", ");
    set(
        conditions,
        stamp,
        READY,
        status,
        "UnhealthyDependents",
        &message,
    );
}
