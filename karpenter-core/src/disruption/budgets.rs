//! NodePool disruption budgets: how many of a pool's nodes may be disrupted
//! now, for one reason.
//!
//! This follows upstream's `pkg/apis/v1/nodepool.go`
//! (`NodePool.MustGetAllowedDisruptions`, `GetAllowedDisruptionsByReason`,
//! `Budget.GetAllowedDisruptions`, `Budget.IsActive`). Its caller,
//! `BuildDisruptionBudgetMapping` in `pkg/controllers/disruption/helpers.go`,
//! counts the pool's nodes and subtracts those already disrupting; here the
//! caller counts and [`Allowance::remaining`] subtracts.
//!
//! The rules, all upstream's:
//! - no `budgets` field means one budget of `10%`; an empty list means no limit;
//! - for a reason, the pool allows the minimum over its active budgets that
//!   list the reason or list none; an inactive budget does not limit, and a
//!   percentage of the nodes rounds up;
//! - a budget whose schedule, or (while active) `nodes`, cannot be read blocks
//!   the whole pool, for every reason, even reasons it does not list: upstream
//!   collects every budget's error before it filters by reason, then fails
//!   closed on any error.
//!
//! Schedules are read as robfig/cron's `ParseStandard` reads them, in UTC: see
//! [`is_active`].

use k8s_openapi::jiff::Timestamp;

use crate::api::{Budget, BudgetNodesError, DisruptionReason, NodePool};

/// How many of a pool's nodes its budgets let be disrupted now for one reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allowance {
    /// The number allowed, before nodes already disrupting are subtracted;
    /// `None` = no limit.
    pub allowed: Option<u64>,
    /// Why it is limited, for a person: e.g. `budget 0 of nodepool "default"
    /// ("10%" of 15 nodes) allows 2`, or `budget 1 of nodepool "default" has
    /// an invalid schedule "bad": <error>; it allows none`. `None` when
    /// unlimited.
    pub reason: Option<String>,
}

impl Allowance {
    /// What remains once `disrupting` nodes (NotReady or marked for deletion)
    /// are counted: max(0, allowed - disrupting); `None` stays `None`.
    pub fn remaining(&self, disrupting: u64) -> Option<u64> {
        self.allowed
            .map(|allowed| allowed.saturating_sub(disrupting))
    }
}

/// Why a budget's schedule cannot be used. Upstream treats each of these as
/// an error, and the pool then allows no disruption.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BudgetScheduleError {
    /// `schedule` is not a cron expression robfig/cron's standard parser
    /// accepts.
    #[error("invalid schedule {schedule:?}: {reason}")]
    InvalidSchedule {
        /// The schedule as written.
        schedule: String,
        /// What is wrong with it.
        reason: ScheduleError,
    },
    /// `duration` is set without `schedule`. The CRD requires both or
    /// neither; upstream then parses an empty cron expression, which fails.
    #[error("invalid schedule: none is set, but duration {duration:?} is (they go together)")]
    MissingSchedule {
        /// The duration as written.
        duration: String,
    },
}

/// `pool`'s budgets for `reason` at `now`, over `num_nodes` nodes (managed,
/// initialized, not terminating: the caller counts them).
///
/// ```
/// use k8s_openapi::jiff::Timestamp;
/// use karpenter_core::api::{Budget, Disruption, DisruptionReason, NodePool};
/// use karpenter_core::disruption::allowed_disruptions;
///
/// let mut pool = NodePool::default();
/// pool.metadata.name = Some("default".to_owned());
/// let noon: Timestamp = "2024-01-08T12:00:00Z".parse()?;
///
/// // Without budgets, the CRD's default of 10% applies, rounded up.
/// let allowance = allowed_disruptions(&pool, DisruptionReason::Drifted, noon, 15);
/// assert_eq!(allowance.allowed, Some(2));
/// assert_eq!(allowance.remaining(1), Some(1));
///
/// // No drift replacement during the first eight hours of each UTC day.
/// pool.spec.disruption = Some(Disruption {
///     budgets: Some(vec![Budget {
///         nodes: Some("0".to_owned()),
///         schedule: Some("@daily".to_owned()),
///         duration: Some("8h".parse()?),
///         reasons: Some(vec![DisruptionReason::Drifted]),
///         ..Budget::default()
///     }]),
///     ..Disruption::default()
/// });
/// let early: Timestamp = "2024-01-08T03:00:00Z".parse()?;
/// assert_eq!(allowed_disruptions(&pool, DisruptionReason::Drifted, early, 15).allowed, Some(0));
/// assert_eq!(allowed_disruptions(&pool, DisruptionReason::Drifted, noon, 15).allowed, None);
/// // Other reasons are not limited by it.
/// assert_eq!(allowed_disruptions(&pool, DisruptionReason::Empty, early, 15).allowed, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn allowed_disruptions(
    pool: &NodePool,
    reason: DisruptionReason,
    now: Timestamp,
    num_nodes: u64,
) -> Allowance {
    let name = pool.name().unwrap_or_default();
    let budgets = pool.spec.effective_budgets();
    match tightest_budget(&budgets, reason, now, num_nodes) {
        Err((index, problem)) => Allowance {
            allowed: Some(0),
            reason: Some(format!(
                "budget {index} of nodepool {name:?} has {problem}; it allows none"
            )),
        },
        Ok(Some((allowed, index))) => Allowance {
            allowed: Some(allowed),
            reason: Some(format!(
                "budget {index} of nodepool {name:?} ({:?} of {num_nodes} nodes) allows {allowed}",
                budgets[index].nodes()
            )),
        },
        Ok(None) => Allowance {
            allowed: None,
            reason: None,
        },
    }
}

/// [`allowed_disruptions`]' number alone, without the sentence saying which
/// budget sets it: what a check asked once per candidate needs.
pub(crate) fn allowed_count(
    pool: &NodePool,
    reason: DisruptionReason,
    now: Timestamp,
    num_nodes: u64,
) -> Option<u64> {
    match tightest_budget(&pool.spec.effective_budgets(), reason, now, num_nodes) {
        Err(_) => Some(0),
        Ok(tightest) => tightest.map(|(allowed, ..)| allowed),
    }
}

/// The one of a pool's `budgets` allowing the fewest disruptions for `reason`
/// now, as (what it allows, its index); or the first budget that cannot be
/// read, with why (the pool then allows none, as upstream).
fn tightest_budget(
    budgets: &[Budget],
    reason: DisruptionReason,
    now: Timestamp,
    num_nodes: u64,
) -> Result<Option<(u64, usize)>, (usize, BudgetError)> {
    let mut tightest: Option<(u64, usize)> = None;
    for (index, budget) in budgets.iter().enumerate() {
        let limit = budget_limit(budget, now, num_nodes).map_err(|problem| (index, problem))?;
        if let Some(allowed) = limit
            && budget.applies_to(reason)
            && tightest.is_none_or(|(least, ..)| allowed < least)
        {
            tightest = Some((allowed, index));
        }
    }
    Ok(tightest)
}

/// One budget's limit now: `None` while inactive, or what is wrong with it.
/// `nodes` is read only while the budget is active, as upstream does. It is
/// read as the CRD's pattern reads it, so a value such as `150%` fails closed
/// here although upstream's runtime would scale by it; the API server never
/// admits one.
fn budget_limit(
    budget: &Budget,
    now: Timestamp,
    num_nodes: u64,
) -> Result<Option<u64>, BudgetError> {
    if !is_active(budget, now)? {
        return Ok(None);
    }
    let nodes = budget.parse_nodes()?;
    Ok(Some(nodes.allowed(num_nodes)))
}

/// What is wrong with a budget, worded to follow "budget N of nodepool P
/// has".
#[derive(Debug, thiserror::Error)]
enum BudgetError {
    /// Its schedule, or its duration without one.
    #[error("an {0}")]
    Schedule(#[from] BudgetScheduleError),
    /// Its `nodes` (read only while it is active).
    #[error("{0}")]
    Nodes(#[from] BudgetNodesError),
}

/// Whether `budget` is active at `now`; Err with a clear message for an
/// invalid schedule/duration combination.
///
/// As upstream's `Budget.IsActive`:
/// - without `schedule` and `duration`, always;
/// - otherwise it is active when the schedule's first hit strictly after
///   `now - duration` is not after `now`: each hit `h` opens the half-open
///   window `[h, h + duration)`, so a hit exactly at `now` counts and one
///   exactly `duration` ago no longer does;
/// - a `schedule` without `duration` has windows of zero length and is never
///   active, but an invalid one is still an error;
/// - a `duration` without `schedule` is an error (upstream parses an empty
///   cron expression);
/// - when the schedule has no hit by the end of the fifth calendar year after
///   the one `now - duration` falls in (for instance `0 0 30 2 *`),
///   robfig/cron returns Go's zero time, which is never after `now`: such a
///   budget is always active. So is any scheduled budget once
///   `now - duration` passes year 9980, where the search would leave jiff's
///   range.
///
/// The schedule is a standard 5-field cron expression (minute, hour, day of
/// month, month, day of week) in UTC, or one of `@yearly`, `@annually`,
/// `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`, read as
/// robfig/cron's `ParseStandard` reads it: `*` or `?`, values, names (`jan`,
/// `mon`, any case), ranges, `/step` (`N/step` means `N-max/step`) and comma
/// lists; days of week are 0 to 6; macros are case-sensitive. When both day
/// fields are restricted a day matches either one; when either is `*` or `?`
/// (not stepped by more than 1) it must match both. `@every`, which the
/// CRD's pattern rejects, is refused, and so is a `TZ=` prefix, which
/// upstream's own `TZ=UTC` prefix turns into a sixth field.
pub(crate) fn is_active(budget: &Budget, now: Timestamp) -> Result<bool, BudgetScheduleError> {
    let schedule = match (&budget.schedule, &budget.duration) {
        (None, None) => return Ok(true),
        (None, Some(duration)) => {
            return Err(BudgetScheduleError::MissingSchedule {
                duration: duration.to_string(),
            });
        }
        (Some(schedule), _) => schedule,
    };
    let crontab =
        parse_schedule(schedule).map_err(|reason| BudgetScheduleError::InvalidSchedule {
            schedule: schedule.clone(),
            reason,
        })?;
    let window = budget
        .duration
        .as_ref()
        .map_or(std::time::Duration::ZERO, |d| d.as_std());
    // Go's time reaches far further back than jiff's; this only matters for
    // a `now` near year -9999.
    let checkpoint = now.checked_sub(window).unwrap_or(Timestamp::MIN);
    Ok(match crontab.and_then(|c| next_hit(&c, checkpoint)) {
        Some(hit) => hit <= now,
        // robfig's zero time, which is never after `now`.
        None => true,
    })
}

/// The first moment after `now` at which whether `budget` is
/// [active](is_active) may change; `None` when it never will (a budget
/// without a schedule, or one whose schedule cannot be read, is the same at
/// every moment).
///
/// At a moment `t` the budget is active when the schedule's first hit `h`
/// after `t - duration` is not after `t`; that hit stays the first while
/// `t - duration < h`. So it turns active at `h` and its window closes at
/// `h + duration`, where the next hit decides anew. When no hit is found
/// (robfig gives up five years after the year `t - duration` falls in) the
/// answer can change only once that year does.
pub(crate) fn next_activity_change(budget: &Budget, now: Timestamp) -> Option<Timestamp> {
    let crontab = parse_schedule(budget.schedule.as_deref()?).ok()??;
    let window = budget
        .duration
        .as_ref()
        .map_or(std::time::Duration::ZERO, |d| d.as_std());
    let window = k8s_openapi::jiff::SignedDuration::try_from(window).ok()?;
    let checkpoint = now.checked_sub(window).unwrap_or(Timestamp::MIN);
    let candidates = match next_hit(&crontab, checkpoint) {
        Some(hit) => [Some(hit), hit.checked_add(window).ok()],
        None => [
            year_turn(checkpoint).and_then(|t| t.checked_add(window).ok()),
            None,
        ],
    };
    candidates.into_iter().flatten().filter(|t| *t > now).min()
}

mod schedule;
#[cfg(test)]
mod tests;

use schedule::{ScheduleError, next_hit, parse_schedule, year_turn};
