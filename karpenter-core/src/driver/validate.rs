//! The wait before an emptiness or consolidation command runs, and its check
//! at the end of it, as upstream's disruption controller does
//! (`commandValidationDelay`, `validation.go`).
//!
//! Upstream's method computes the command, sleeps 15 s, then checks it
//! against the cluster as it is then: a pod bound to an empty node, a
//! `karpenter.sh/do-not-disrupt` pod or node, a PodDisruptionBudget, a
//! budget that closed, a simulation that no longer holds each drop it (see
//! [`validate`](crate::disruption::validate) for the rules). The driver runs
//! on its caller's clock and never sleeps: it *holds* the command
//! ([`Event::CommandHeld`]) and, at the first settled pass at or after the
//! command's time plus [`DriverOptions::validation_delay`], checks it against
//! that pass's snapshot, then starts it ([`Event::CommandStarted`], for
//! emptiness with the candidates that passed) or drops it
//! ([`Event::CommandDropped`], with upstream's label: budget, scheduling or
//! churn) and plans afresh in the same pass, as upstream's controller moves
//! on to its next method.
//!
//! While a command is held no disruption is planned and no other command
//! starts: upstream's disruption controller is blocked in the method for
//! those seconds. Everything else goes on: claims' lifecycle and
//! provisioning (which upstream runs in other controllers), so pods that
//! come meanwhile get capacity, and may land on a held candidate, which the
//! check then sees. The held command is kept in memory only: a driver
//! started afresh plans again, as upstream's controller, restarted in its
//! wait, computes the command anew.
//!
//! [`DriverOptions::validation_delay`]: super::DriverOptions::validation_delay

use jiff::{SignedDuration, Timestamp};

use super::Driver;
use super::planning::run_planning;
use super::report::{Event, Report, Step};
use super::{candidate_claims, name_of};
use crate::disruption::{Command, DisruptionOptions, is_validated, validate};
use crate::error::Error;
use crate::snapshot::Snapshot;

/// A command computed and waiting for its check.
#[derive(Debug)]
pub(super) struct Held {
    /// The command as computed.
    command: Command,
    /// Its ID, as its events name it (its first candidate's claim).
    id: String,
    /// Its candidates' claims.
    candidates: Vec<String>,
    /// The first moment it may be checked.
    due: Timestamp,
}

impl Held {
    /// The first moment it may be checked.
    pub(super) fn due(&self) -> Timestamp {
        self.due
    }
}

/// What the check of a held command leaves the pass with.
pub(super) enum Checked {
    /// The command passed: start it (as checked), on this snapshot.
    Valid(Snapshot, Command),
    /// No command was held, or it was dropped: plan on this snapshot.
    Plan(Snapshot),
}

/// Whether a held command is still waiting at `now` (the pass plans nothing).
pub(super) fn waiting(driver: &Driver, now: Timestamp) -> bool {
    let Some(held) = &driver.held else {
        return false;
    };
    let waiting = now < held.due;
    if waiting {
        tracing::debug!(command = %held.id, due = %held.due, "disruption command held for its check");
    }
    waiting
}

/// Holds `command`, planned on `snapshot` at `now`, when it is one that
/// waits and the driver waits at all; whether it did.
pub(super) fn hold(
    driver: &mut Driver,
    snapshot: &Snapshot,
    command: &Command,
    now: Timestamp,
    report: &mut Report,
) -> bool {
    let delay = driver.options.validation_delay;
    if delay.is_zero() || !is_validated(command.reason) {
        return false;
    }
    let claims = candidate_claims(snapshot, command);
    let Some(first) = claims.first() else {
        return false;
    };
    // A delay too long for a timestamp holds the command for good.
    let due = SignedDuration::try_from(delay)
        .ok()
        .and_then(|delay| now.checked_add(delay).ok())
        .unwrap_or(Timestamp::MAX);
    let id = name_of(first).to_owned();
    let candidates: Vec<String> = claims.iter().map(|c| name_of(c).to_owned()).collect();
    report.push(Event::CommandHeld {
        id: id.clone(),
        reason: command.reason,
        candidates: candidates.clone(),
        replacements: command.replacements.len(),
        savings_per_hour: command.savings_per_hour,
        until: due,
    });
    driver.held = Some(Held {
        command: command.clone(),
        id,
        candidates,
        due,
    });
    true
}

/// Checks the held command, if any (its time has come: see [`waiting`]),
/// against `snapshot` at `now`, on the driver's planning runner (the check
/// simulates, as a plan does).
pub(super) async fn check(
    driver: &mut Driver,
    snapshot: Snapshot,
    options: &DisruptionOptions,
    now: Timestamp,
    report: &mut Report,
) -> Result<Checked, Error> {
    let Some(held) = driver.held.take() else {
        return Ok(Checked::Plan(snapshot));
    };
    let runner = driver.options.planning_runner.as_ref();
    let options = options.clone();
    let command = held.command.clone();
    let (snapshot, verdict) = run_planning(runner, Step::Validation, report, move || {
        let verdict = validate(&snapshot, now, &options, &command);
        (snapshot, verdict)
    })
    .await?;
    match verdict {
        Ok(command) => Ok(Checked::Valid(snapshot, command)),
        Err(rejected) => {
            report.push(Event::CommandDropped {
                id: held.id,
                reason: held.command.reason,
                candidates: held.candidates,
                failure: rejected.failure,
                why: rejected.why,
            });
            Ok(Checked::Plan(snapshot))
        }
    }
}
