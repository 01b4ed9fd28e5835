//! Tests of [`super`]: upstream's budget cases and robfig's schedule grammar.
use k8s_openapi::jiff::tz::Offset;
use k8s_openapi::jiff::{RoundMode, SignedDuration, TimestampRound, Unit};

use super::schedule::{FIELDS, Field, parse_field};
use super::*;
use crate::api::Disruption;
use DisruptionReason::{Drifted, Empty, Underutilized};

const ALL_REASONS: [DisruptionReason; 3] = [Empty, Underutilized, Drifted];

fn at(text: &str) -> Timestamp {
    text.parse().expect("test timestamp")
}

fn scheduled(nodes: &str, schedule: &str, duration: &str) -> Budget {
    Budget {
        schedule: Some(schedule.to_owned()),
        duration: Some(duration.parse().expect("test duration")),
        ..Budget::new(nodes)
    }
}

fn only_for(reasons: &[DisruptionReason], budget: Budget) -> Budget {
    Budget {
        reasons: Some(reasons.to_vec()),
        ..budget
    }
}

fn pool(budgets: Option<Vec<Budget>>) -> NodePool {
    let mut pool = NodePool::default();
    pool.metadata.name = Some("default".to_owned());
    pool.spec.disruption = Some(Disruption {
        budgets,
        ..Disruption::default()
    });
    pool
}

/// What the pool allows, as `allowed_disruptions` says it and, the same,
/// as `allowed_count` (the number alone) does.
fn allowed(pool: &NodePool, reason: DisruptionReason, now: &str, nodes: u64) -> Option<u64> {
    let allowed = allowed_disruptions(pool, reason, at(now), nodes).allowed;
    assert_eq!(allowed_count(pool, reason, at(now), nodes), allowed);
    allowed
}

/// Whether a budget on `schedule` for `duration` is active at `now`.
fn active(schedule: &str, duration: &str, now: &str) -> bool {
    is_active(&scheduled("1", schedule, duration), at(now)).expect("valid schedule")
}

fn schedule_error(schedule: &str) -> String {
    match is_active(&scheduled("1", schedule, "1h"), at("2024-01-07T00:00:00Z")) {
        Err(BudgetScheduleError::InvalidSchedule { reason, .. }) => reason.to_string(),
        other => panic!("{schedule:?} gave {other:?}"),
    }
}

const NOW: &str = "2000-06-15T12:30:30Z";

/// Upstream's fixture (`nodepool_budgets_test.go`): five budgets active
/// every minute for an hour, and a `@weekly` one that is not active now.
fn upstream_budgets() -> Vec<Budget> {
    vec![
        scheduled("10", "* * * * *", "1h"),
        scheduled("100", "* * * * *", "1h"),
        scheduled("100%", "* * * * *", "1h"),
        only_for(
            &[Drifted, Underutilized],
            scheduled("15", "* * * * *", "1h"),
        ),
        only_for(&[Drifted], scheduled("5", "* * * * *", "1h")),
        only_for(&ALL_REASONS, scheduled("0", "@weekly", "1h")),
    ]
}

#[test]
fn default_budget_is_ten_percent_rounded_up() {
    for pool in [pool(None), NodePool::default()] {
        for (nodes, expected) in [(15, 2), (0, 0), (1, 1), (10, 1), (11, 2), (100, 10)] {
            assert_eq!(allowed(&pool, Empty, NOW, nodes), Some(expected), "{nodes}");
        }
    }
    let allowance = allowed_disruptions(&pool(None), Drifted, at(NOW), 15);
    assert_eq!(
        allowance.reason.as_deref(),
        Some(r#"budget 0 of nodepool "default" ("10%" of 15 nodes) allows 2"#)
    );
}

#[test]
fn counts_are_not_capped_by_the_node_count() {
    let pool = pool(Some(vec![Budget::new("5")]));
    assert_eq!(allowed(&pool, Empty, NOW, 3), Some(5));
    assert_eq!(allowed(&pool, Empty, NOW, 0), Some(5));
    let none = self::pool(Some(vec![Budget::new("0")]));
    assert_eq!(allowed(&none, Drifted, NOW, 50), Some(0));
}

#[test]
fn the_tightest_active_budget_wins_and_is_named() {
    let pool = pool(Some(vec![
        Budget::new("50%"),
        Budget::new("3"),
        Budget::new("20%"),
        Budget::new("3"),
    ]));
    let allowance = allowed_disruptions(&pool, Underutilized, at(NOW), 10);
    assert_eq!(allowance.allowed, Some(2));
    assert_eq!(
        allowance.reason.as_deref(),
        Some(r#"budget 2 of nodepool "default" ("20%" of 10 nodes) allows 2"#)
    );
    // On a tie, the first budget is named.
    let allowance = allowed_disruptions(&pool, Underutilized, at(NOW), 20);
    assert_eq!(allowance.allowed, Some(3));
    assert!(allowance.reason.unwrap().starts_with("budget 1 "));
}

#[test]
fn budgets_limit_only_the_reasons_they_list() {
    // Upstream: "should get the minimum budget for each reason".
    let mut budgets = upstream_budgets();
    budgets.push(only_for(&[Empty], scheduled("4", "* * * * *", "1h")));
    let pool = pool(Some(budgets));
    assert_eq!(allowed(&pool, Empty, NOW, 100), Some(4));
    assert_eq!(allowed(&pool, Drifted, NOW, 100), Some(5));
    // The budget without reasons (10) is tighter than the one for it (15).
    assert_eq!(allowed(&pool, Underutilized, NOW, 100), Some(10));
    // `reasons: []` is not absent: like upstream, it limits no reason.
    let none = self::pool(Some(vec![only_for(&[], Budget::new("0"))]));
    for reason in ALL_REASONS {
        assert_eq!(allowed(&none, reason, NOW, 100), None);
    }
}

#[test]
fn upstream_budget_fixture() {
    // "should return the budget for all disruption reasons when undefined"
    let first = pool(Some(upstream_budgets()[..1].to_vec()));
    for reason in ALL_REASONS {
        assert_eq!(allowed(&first, reason, NOW, 100), Some(10));
    }
    // "should return 0 for all reasons if a budget is active for all reasons"
    let mut budgets = upstream_budgets();
    budgets[5].schedule = Some("* * * * *".to_owned());
    for reason in ALL_REASONS {
        assert_eq!(
            allowed(&pool(Some(budgets.clone())), reason, NOW, 100),
            Some(0)
        );
    }
    // "should ignore reason-defined budgets when inactive"
    let mut budgets = upstream_budgets();
    budgets[3].schedule = Some("@yearly".to_owned());
    budgets[4].schedule = Some("@yearly".to_owned());
    for reason in ALL_REASONS {
        assert_eq!(
            allowed(&pool(Some(budgets.clone())), reason, NOW, 100),
            Some(10)
        );
    }
    // "should return MaxInt32 for all reasons when there are no active budgets"
    let mut budgets = upstream_budgets();
    for budget in &mut budgets {
        budget.schedule = Some("@yearly".to_owned());
    }
    for reason in ALL_REASONS {
        let allowance = allowed_disruptions(&pool(Some(budgets.clone())), reason, at(NOW), 100);
        assert_eq!(
            allowance,
            Allowance {
                allowed: None,
                reason: None
            }
        );
    }
    // "should return the string value when a budget is active"
    let percent = pool(Some(upstream_budgets()[2..3].to_vec()));
    assert_eq!(allowed(&percent, Empty, NOW, 100), Some(100));
}

#[test]
fn an_empty_list_places_no_limit() {
    let allowance = allowed_disruptions(&pool(Some(vec![])), Drifted, at(NOW), 15);
    assert_eq!(
        allowance,
        Allowance {
            allowed: None,
            reason: None
        }
    );
    assert_eq!(allowance.remaining(7), None);
}

#[test]
fn remaining_subtracts_disrupting_nodes_down_to_zero() {
    let allowance = |allowed| Allowance {
        allowed,
        reason: None,
    };
    assert_eq!(allowance(Some(5)).remaining(2), Some(3));
    assert_eq!(allowance(Some(2)).remaining(2), Some(0));
    assert_eq!(allowance(Some(2)).remaining(5), Some(0));
    assert_eq!(allowance(Some(0)).remaining(0), Some(0));
    assert_eq!(allowance(None).remaining(u64::MAX), None);
}

#[test]
fn an_inactive_scheduled_budget_is_ignored() {
    // Blocks everything from 09:00 for two hours on weekdays.
    let pool = pool(Some(vec![
        scheduled("0", "0 9 * * 1-5", "2h"),
        Budget::new("3"),
    ]));
    assert_eq!(allowed(&pool, Empty, "2024-01-08T10:00:00Z", 20), Some(0));
    assert_eq!(allowed(&pool, Empty, "2024-01-08T11:00:00Z", 20), Some(3));
    assert_eq!(allowed(&pool, Empty, "2024-01-07T10:00:00Z", 20), Some(3)); // Sunday
}

#[test]
fn a_budget_is_active_for_duration_after_each_hit() {
    assert!(active("0 12 * * *", "1h", "2024-01-08T12:30:00Z")); // hit 30 min ago
    assert!(!active("0 12 * * *", "1h", "2024-01-08T14:00:00Z")); // hit 2 h ago
    assert!(!active("0 12 * * *", "1h", "2024-01-08T11:59:59Z"));
    // Upstream: "active"/"inactive" with its fixture's clock.
    assert!(active("* * * * *", "1h", NOW));
    assert!(!active("@yearly", "1h", NOW));
}

#[test]
fn windows_are_half_open() {
    // A hit exactly now counts.
    assert!(active("0 12 * * *", "1h", "2024-01-08T12:00:00Z"));
    // One exactly `duration` ago no longer does; a nanosecond less does.
    assert!(!active("0 12 * * *", "1h", "2024-01-08T13:00:00Z"));
    assert!(active("0 12 * * *", "1h", "2024-01-08T12:59:59.999999999Z"));
    assert!(!active("0 12 * * *", "90s", "2024-01-08T12:01:30Z"));
    assert!(active("0 12 * * *", "90s", "2024-01-08T12:01:29.5Z"));
    // A schedule without a duration has empty windows.
    let budget = Budget {
        schedule: Some("* * * * *".to_owned()),
        ..Budget::new("0")
    };
    assert_eq!(is_active(&budget, at("2024-01-08T12:00:00Z")), Ok(false));
    assert_eq!(allowed(&pool(Some(vec![budget])), Empty, NOW, 10), None);
}

#[test]
fn upstream_is_active_cases() {
    // "should always consider a schedule and time in UTC": midnight at
    // UTC+1 is 23:00 UTC, after the 30 minutes that follow midnight UTC.
    assert!(!active("@daily", "30m", "2000-05-31T00:00:00+01:00"));
    // "...when the schedule hit is in the middle of the duration"
    assert!(active("@yearly", "24h", "1000-01-01T12:00:00Z"));
    // "...when the duration is longer than the recurrence"
    assert!(active("@daily", "48h", "2024-01-07T00:00:00Z"));
    // "...inactive when the schedule hit is after the duration"
    assert!(!active("30 6 * * SUN", "6h", "2024-01-07T00:00:00Z"));
    // "should return an error indicating why the cron fails to parse"
    assert!(
        schedule_error("0 0 * * tue-mon")
            .contains("beginning of range (2) beyond end of range (1)")
    );
}

#[test]
fn each_macro() {
    // (macro, active at, inactive at), with a one-hour window.
    let cases = [
        ("@yearly", "2024-01-01T00:30:00Z", "2024-01-01T01:00:00Z"),
        ("@annually", "2025-01-01T00:59:00Z", "2024-07-01T00:30:00Z"),
        ("@monthly", "2024-03-01T00:30:00Z", "2024-03-02T00:30:00Z"),
        ("@weekly", "2024-01-07T00:30:00Z", "2024-01-08T00:30:00Z"), // Sunday, Monday
        ("@daily", "2024-01-08T00:30:00Z", "2024-01-08T01:30:00Z"),
        ("@midnight", "2024-01-09T00:00:00Z", "2024-01-08T23:59:00Z"),
        ("@hourly", "2024-01-08T13:59:59Z", "2024-01-08T13:00:00Z"), // window 1h: always
    ];
    for (schedule, on, off) in cases {
        assert!(active(schedule, "1h", on), "{schedule} at {on}");
        if schedule != "@hourly" {
            assert!(!active(schedule, "1h", off), "{schedule} at {off}");
        }
    }
    assert!(active("@hourly", "10m", "2024-01-08T13:05:00Z"));
    assert!(!active("@hourly", "10m", "2024-01-08T13:15:00Z"));
    // Surrounding blanks are trimmed, as robfig does.
    assert!(active("  @daily\t", "1h", "2024-01-08T00:30:00Z"));
    // robfig's macros are case-sensitive and take nothing after them.
    for bad in ["@Daily", "@daily 1", "@every 1h", "@", "@reboot"] {
        schedule_error(bad);
    }
}

#[test]
fn restricted_day_fields_unite_and_wildcards_intersect() {
    // 2024-09-13 is a Friday; 2024-01-05 a Friday; 2024-02-13 a Tuesday;
    // 2024-01-08 a Monday.
    let either = "0 0 13 * 5";
    assert!(active(either, "1h", "2024-09-13T00:30:00Z"));
    assert!(active(either, "1h", "2024-01-05T00:30:00Z"));
    assert!(active(either, "1h", "2024-02-13T00:30:00Z"));
    assert!(!active(either, "1h", "2024-01-08T00:30:00Z"));
    // A wildcard day of month leaves the day of week alone deciding...
    assert!(active("0 0 * * 5", "1h", "2024-01-05T00:30:00Z"));
    assert!(!active("0 0 * * 5", "1h", "2024-02-13T00:30:00Z"));
    assert!(!active("0 0 ? * 5", "1h", "2024-02-13T00:30:00Z"));
    // ...and the other way round.
    assert!(!active("0 0 13 * *", "1h", "2024-01-05T00:30:00Z"));
    assert!(active("0 0 13 * ?", "1h", "2024-02-13T00:30:00Z"));
    // robfig, unlike Vixie cron: `*/2` is no wildcard, so it unites with
    // Mondays (odd days or Mondays)...
    assert!(active("0 0 */2 * 1", "1h", "2024-01-08T00:30:00Z")); // Monday the 8th
    assert!(active("0 0 */2 * 1", "1h", "2024-01-09T00:30:00Z")); // Tuesday the 9th
    assert!(!active("0 0 */2 * 1", "1h", "2024-01-10T00:30:00Z")); // Wednesday the 10th
    // ...`*/1` still is one (Mondays only)...
    assert!(!active("0 0 */1 * 1", "1h", "2024-01-09T00:30:00Z"));
    // ...and so is a list holding `*` anywhere (Tuesdays only).
    assert!(!active("0 0 10,* * 2", "1h", "2024-01-10T00:30:00Z"));
    assert!(active("0 0 10,* * 2", "1h", "2024-01-09T00:30:00Z"));
    // `1-31` is no wildcard: every day matches.
    assert!(active("0 0 1-31 * 2", "1h", "2024-01-10T00:30:00Z"));
}

#[test]
fn robfig_field_syntax() {
    // Names in any case, ranges of names.
    assert!(active(
        "0 9 * JAN-mar Mon-FRI",
        "1h",
        "2024-02-05T09:10:00Z"
    ));
    assert!(!active(
        "0 9 * JAN-mar Mon-FRI",
        "1h",
        "2024-04-01T09:10:00Z"
    ));
    // `N/step` runs to the end of the range: minutes 50 and 55 only.
    assert!(active("50/5 * * * *", "1m", "2024-01-08T10:55:30Z"));
    assert!(!active("50/5 * * * *", "1m", "2024-01-08T10:05:30Z"));
    // A step beyond the range keeps only its start; `+5` and `05` read as 5.
    assert!(active("*/100 * * * *", "1m", "2024-01-08T10:00:30Z"));
    assert!(!active("*/100 * * * *", "1m", "2024-01-08T10:01:30Z"));
    assert!(active("+5 05 * * *", "1m", "2024-01-08T05:05:30Z"));
    // Empty list items are dropped; blanks between fields are free.
    assert!(active("1,,2   *\t* * *", "1m", "2024-01-08T05:02:30Z"));
    // robfig reads nothing after `*-`.
    assert!(active("*-5 * * * *", "1m", "2024-01-08T05:42:30Z"));

    for (schedule, problem) in [
        ("", "expected exactly 5 fields, found 0: []"),
        ("* * * *", "expected exactly 5 fields, found 4"),
        ("0 * * * * *", "expected exactly 5 fields, found 6"),
        (
            "TZ=Europe/Paris 0 0 * * *",
            "expected exactly 5 fields, found 6",
        ),
        ("0 0 * * 7", "end of range (7) above maximum (6): 7"),
        ("60 * * * *", "end of range (60) above maximum (59)"),
        ("* 24 * * *", "end of range (24) above maximum (23)"),
        ("* * 0 * *", "beginning of range (0) below minimum (1)"),
        ("* * * 13 *", "end of range (13) above maximum (12)"),
        ("*/0 * * * *", "step of range should be a positive number"),
        ("*/-2 * * * *", "negative number (-2) not allowed"),
        ("1/2/3 * * * *", "too many slashes"),
        ("1-2-3 * * * *", "too many hyphens"),
        ("* * L * *", "failed to parse int from L"),
        ("* * 15W * *", "failed to parse int from 15W"),
        ("* * * * 5#3", "failed to parse int from 5#3"),
        ("* * * * monday", "failed to parse int from monday"),
        ("* * mon * *", "failed to parse int from mon"),
        ("*/ * * * *", "failed to parse int from "),
        ("@wrongly", "unrecognized descriptor: @wrongly"),
    ] {
        let error = schedule_error(schedule);
        assert!(error.contains(problem), "{schedule:?}: {error}");
    }
}

#[test]
fn an_invalid_schedule_allows_none_for_every_reason() {
    let pool = pool(Some(vec![
        Budget::new("10"),
        only_for(&[Drifted], scheduled("5", "bad", "1h")),
    ]));
    for reason in ALL_REASONS {
        let allowance = allowed_disruptions(&pool, reason, at(NOW), 100);
        assert_eq!(allowance.allowed, Some(0));
        assert_eq!(
            allowance.reason.as_deref(),
            Some(
                r#"budget 1 of nodepool "default" has an invalid schedule "bad": expected exactly 5 fields, found 1: [bad]; it allows none"#
            )
        );
    }
    // Upstream: "should return zero values if a schedule is invalid".
    let mut budgets = upstream_budgets();
    budgets[0].schedule = Some("@wrongly".to_owned());
    assert_eq!(
        allowed(&self::pool(Some(budgets)), Empty, NOW, 100),
        Some(0)
    );
}

#[test]
fn a_duration_without_a_schedule_is_an_error() {
    let budget = Budget {
        duration: Some("1h".parse().expect("duration")),
        ..Budget::new("10")
    };
    assert_eq!(
        is_active(&budget, at(NOW)),
        Err(BudgetScheduleError::MissingSchedule {
            duration: "1h".to_owned()
        })
    );
    let allowance = allowed_disruptions(&pool(Some(vec![budget])), Empty, at(NOW), 100);
    assert_eq!(allowance.allowed, Some(0));
    assert_eq!(
        allowance.reason.as_deref(),
        Some(
            r#"budget 0 of nodepool "default" has an invalid schedule: none is set, but duration "1h" is (they go together); it allows none"#
        )
    );
}

#[test]
fn invalid_nodes_allow_none_while_active() {
    // Upstream: "should return zero values if a nodes value is invalid".
    let mut budgets = upstream_budgets();
    budgets[0].nodes = Some("1000a%".to_owned());
    let allowance = allowed_disruptions(&pool(Some(budgets.clone())), Empty, at(NOW), 100);
    assert_eq!(allowance.allowed, Some(0));
    let reason = allowance.reason.expect("a reason");
    assert!(
        reason.starts_with(r#"budget 0 of nodepool "default" has invalid budget nodes "1000a%""#),
        "{reason}"
    );
    assert!(reason.ends_with("; it allows none"), "{reason}");
    // Upstream reads `nodes` only while the budget is active.
    budgets[0].schedule = Some("@yearly".to_owned());
    assert_eq!(
        allowed(&pool(Some(budgets)), Underutilized, NOW, 100),
        Some(15)
    );
}

#[test]
fn schedules_without_hits_are_always_active() {
    // robfig gives up after five years and returns Go's zero time, which
    // is never after now: upstream counts such a budget as active.
    assert!(active("0 0 30 2 *", "1h", "2024-06-01T12:00:00Z"));
    assert!(active("0 0 31 4,6,9,11 *", "1h", "2024-06-01T12:00:00Z"));
    assert!(active(", * * * *", "1h", "2024-06-01T12:00:00Z"));
    let pool = pool(Some(vec![scheduled("0", "0 0 30 2 *", "1h")]));
    assert_eq!(allowed(&pool, Drifted, "2024-06-01T12:00:00Z", 10), Some(0));
    // February 29th: the next hit is within robfig's reach...
    assert!(!active("0 0 29 2 *", "1h", "2024-03-01T00:00:00Z"));
    assert!(active("0 0 29 2 *", "1h", "2024-02-29T00:30:00Z"));
    // ...until 2100, which is no leap year: from 2097 the next is in 2104,
    // past robfig's limit of 2102...
    assert!(active("0 0 29 2 *", "1h", "2097-03-01T00:00:00Z"));
    // ...but from 2099 it is within it (2104), and cronexpr needs a
    // second look to find it.
    assert!(!active("0 0 29 2 *", "1h", "2099-03-01T00:00:00Z"));
}

#[test]
fn extreme_times_do_not_panic() {
    let budgets = vec![
        scheduled("1", "* * * * *", "1h"),
        scheduled("1", "0 0 29 2 *", "2562047h"),
        scheduled("1", "0 0 30 2 *", "1m"),
        scheduled("1", "@yearly", "0s"),
    ];
    for now in [Timestamp::MIN, Timestamp::MAX, Timestamp::UNIX_EPOCH] {
        for budget in &budgets {
            let _ = is_active(budget, now);
        }
        let _ = allowed_disruptions(&pool(Some(budgets.clone())), Empty, now, u64::MAX);
    }
    assert_eq!(
        allowed(&pool(Some(vec![Budget::new("100%")])), Empty, NOW, u64::MAX),
        Some(u64::MAX)
    );
}

/// Whether robfig's day rule, read straight from the parsed fields,
/// accepts `time`.
fn robfig_matches(fields: &[Field; 5], time: Timestamp) -> bool {
    let dt = Offset::UTC.to_datetime(time);
    let has = |field: Field, value: i8| field.bits >> value & 1 == 1;
    let [minute, hour, day, month, weekday] = *fields;
    let day_ok = has(day, dt.day());
    let weekday_ok = has(weekday, dt.weekday().to_sunday_zero_offset());
    let days = if day.star || weekday.star {
        day_ok && weekday_ok
    } else {
        day_ok || weekday_ok
    };
    days && has(minute, dt.minute()) && has(hour, dt.hour()) && has(month, dt.month())
}

#[test]
fn next_hit_agrees_with_a_minute_by_minute_scan() {
    let schedules = [
        "*/7 */5 * * *",
        "15 3 */2 * 1",
        "0 0 */1 * 1",
        "0 12 10,* * 2",
        "0 12 *,10 * 2",
        "30 6 1-31/3 * sat,sun",
        "0 0 1,15 * 3",
        "45 23 31 * *",
        "0 0 ? * 0",
        "5-10 1 * feb,mar 4-6",
    ];
    let starts = [
        "2024-01-30T23:59:59.5Z",
        "2024-02-28T12:00:00Z",
        "2023-12-31T23:50:00Z",
    ];
    for schedule in schedules {
        let parsed: Vec<&str> = schedule.split_whitespace().collect();
        let mut fields = [Field::default(); 5];
        for ((slot, text), spec) in fields.iter_mut().zip(&parsed).zip(&FIELDS) {
            *slot = parse_field(text, spec).expect("valid field");
        }
        let crontab = parse_schedule(schedule).expect("valid").expect("has hits");
        for start in starts {
            let start = at(start);
            let hit = next_hit(&crontab, start).expect("a hit");
            let mut minute = start
                .round(
                    TimestampRound::new()
                        .smallest(Unit::Minute)
                        .mode(RoundMode::Floor),
                )
                .expect("round")
                + SignedDuration::from_mins(1);
            while !robfig_matches(&fields, minute) {
                minute += SignedDuration::from_mins(1);
                assert!(minute <= hit, "{schedule} from {start}: scan passed {hit}");
            }
            assert_eq!(minute, hit, "{schedule} from {start}");
        }
    }
}

/// Walks `budget` from `start` through `next_activity_change`'s moments for
/// `horizon`, checking that whether it is active does not change between
/// one moment and the next (at every half minute, and a nanosecond before
/// the next moment); returns the moments.
fn walk_activity(budget: &Budget, start: Timestamp, horizon: SignedDuration) -> Vec<Timestamp> {
    let end = start + horizon;
    let mut moments = Vec::new();
    let mut from = start;
    while from < end {
        let active = is_active(budget, from).expect("valid");
        let next = next_activity_change(budget, from);
        if let Some(next) = next {
            assert!(next > from, "{budget:?}: {next} is not after {from}");
        }
        let until = next.unwrap_or(end).min(end);
        let mut probe = from
            .round(
                TimestampRound::new()
                    .smallest(Unit::Second)
                    .increment(30)
                    .mode(RoundMode::Floor),
            )
            .expect("round");
        while probe < until {
            if probe >= from {
                assert_eq!(
                    is_active(budget, probe).expect("valid"),
                    active,
                    "{budget:?}: changed at {probe}, before {until} (from {from})"
                );
            }
            probe += SignedDuration::from_secs(30);
        }
        let last = until - SignedDuration::from_nanos(1);
        assert_eq!(
            is_active(budget, last).expect("valid"),
            active,
            "{budget:?} at {last}"
        );
        let Some(next) = next else {
            break;
        };
        moments.push(next);
        from = next;
    }
    moments
}

#[test]
fn activity_changes_only_at_the_moments_found() {
    let cases = [
        ("0 9 * * 1-5", "8h"),
        ("*/15 * * * *", "5m"),
        ("0 0 * * *", "24h"),
        ("0 0 * * *", "25h"),
        ("30 */2 * * *", "90m"),
        ("@hourly", "0s"),
        ("@daily", "90s"),
    ];
    for (schedule, duration) in cases {
        let budget = scheduled("0", schedule, duration);
        for start in [
            "2024-01-05T16:59:30Z",
            "2024-01-06T00:00:00Z",
            "2024-01-06T08:59:59.5Z",
        ] {
            walk_activity(&budget, at(start), SignedDuration::from_hours(80));
        }
    }
    // Working hours: on at 09:00, off at 17:00, through a weekend (the
    // last moment found is past the horizon).
    let working = scheduled("0", "0 9 * * 1-5", "8h");
    let moments = walk_activity(
        &working,
        at("2024-01-05T12:00:00Z"),
        SignedDuration::from_hours(80),
    );
    assert_eq!(
        moments,
        [
            at("2024-01-05T17:00:00Z"),
            at("2024-01-08T09:00:00Z"),
            at("2024-01-08T17:00:00Z"),
            at("2024-01-09T09:00:00Z"),
        ]
    );
}

#[test]
fn a_budget_without_a_readable_schedule_never_changes() {
    let now = at("2024-01-05T12:00:00Z");
    assert_eq!(next_activity_change(&Budget::new("10%"), now), None);
    assert_eq!(
        next_activity_change(&scheduled("1", "bad", "1h"), now),
        None
    );
    let mut missing = scheduled("1", "@daily", "1h");
    missing.schedule = None;
    assert_eq!(next_activity_change(&missing, now), None);
    // A schedule matching no minute at all.
    assert_eq!(
        next_activity_change(&scheduled("1", ", * * * *", "1h"), now),
        None
    );
}

#[test]
fn without_a_hit_in_reach_the_year_decides() {
    // No February 30th: active, until robfig's five years move on with
    // the year, which changes nothing here but is looked at again.
    let never = scheduled("0", "0 0 30 2 *", "1h");
    assert_eq!(
        next_activity_change(&never, at("2024-06-01T12:00:00Z")),
        Some(at("2025-01-01T00:59:59Z"))
    );
    // From 2098 the next February 29th (2104) is out of reach, so the
    // budget is active; once 2099 starts (an hour late, the duration) it
    // is in reach, and the budget inactive.
    let leap = scheduled("0", "0 0 29 2 *", "1h");
    let turn = at("2099-01-01T00:59:59Z");
    assert_eq!(
        next_activity_change(&leap, at("2098-06-01T00:00:00Z")),
        Some(turn)
    );
    assert!(is_active(&leap, turn - SignedDuration::from_nanos(1)).expect("valid"));
    assert!(!is_active(&leap, turn).expect("valid"));
}
