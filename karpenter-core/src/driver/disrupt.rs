//! Disruption commands, carried out so that no pod loses the capacity it
//! has: the candidates are tainted so nothing new lands on them, the
//! replacements are launched, and only once every replacement is initialized
//! are the candidates deleted (and drained). A replacement that fails, or
//! does not initialize in time, aborts the command: the candidates are
//! untainted and the remaining replacements deleted.
//!
//! Planning also says why nodes are left alone: the nodes that may not be
//! disrupted now ([`Event::DisruptionBlocked`]) and the candidates
//! single-node consolidation evaluated and refused
//! ([`Event::Unconsolidatable`]), both from the evaluation that looked for
//! the command ([`first_command_explained`]), so nothing more is simulated
//! for them. Each is reported once per node and reason (see
//! [`report_reasons`]).
//!
//! A plan that finds no command is remembered with what it read (see
//! [`Quiet`]): while none of that changes, and no moment the plan depends on
//! comes, planning again would find the same nothing, and is skipped.
//!
//! An emptiness or consolidation command waits first, in the driver's
//! memory, and is checked again before it starts (see
//! [`validate`](super::validate)). A started command lives on the cluster,
//! not in the driver: its candidates' claims carry [`COMMAND_ANNOTATION`]
//! (with the start time and the number of replacements), its replacements
//! [`REPLACES_ANNOTATION`]. A driver started afresh reads them and carries
//! on.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use jiff::Timestamp;

use super::annotations::{
    COMMAND_ANNOTATION, COMMAND_REPLACEMENTS_ANNOTATION, COMMAND_STARTED_ANNOTATION,
    REPLACES_ANNOTATION,
};
use super::lifecycle::{Launch, launch};
use super::manifest::pods_by_key;
use super::planning::run_planning;
use super::report::{Event, Report, Step};
use super::validate::{self, Checked};
use super::{Driver, annotate, annotation, candidate_claims, is_true, name_of, node_name_of};
use crate::api::{NodeClaim, condition_types};
use crate::cloudprovider::{InstanceType, LaunchRank};
use crate::disruption::{
    Command, DisruptionOptions, FirstCommand, first_command_explained, next_change,
};
use crate::error::{Error, with_causes};
use crate::scheduling::{DISRUPTED_NO_SCHEDULE_TAINT, DISRUPTED_TAINT_KEY, WellKnownLabels};
use crate::snapshot::Snapshot;

/// Everything a disruption plan reads, but the moment and what the cluster
/// revision stands for: two plans with equal inputs at moments between
/// which nothing turns (see [`next_change`]) find the same.
#[derive(Debug, PartialEq)]
struct Inputs {
    /// The cluster's revision the snapshot was read at.
    revision: u64,
    /// The plan's options, the provider's repair policies included.
    options: DisruptionOptions,
    /// The provider's drift verdicts, by claim.
    provider_drift: BTreeMap<String, String>,
    /// The provider's instance types by pool, the unavailable offerings and
    /// NodeOverlays applied: a provider's catalog may change on its own.
    instance_types: InstanceTypes,
    /// The provider's well-known labels.
    well_known_labels: WellKnownLabels,
    /// The provider's launch rank.
    launch_rank: LaunchRank,
    /// The generation of the driver's unavailable offerings.
    unavailable: u64,
}

/// Instance types by pool, compared by pointer first: a provider that
/// shares its lists hands the same ones out while they do not change, and
/// comparing hundreds of types at every pass costs more than the pass.
#[derive(Debug)]
struct InstanceTypes(BTreeMap<String, Arc<[InstanceType]>>);

impl PartialEq for InstanceTypes {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|((a, x), (b, y))| a == b && (Arc::ptr_eq(x, y) || x == y))
    }
}

/// The last disruption plan, which found no command, with what it read.
#[derive(Debug)]
pub(super) struct Quiet {
    inputs: Inputs,
    /// When it was made: an earlier moment may plan otherwise.
    at: Timestamp,
    /// The first moment after `at` at which it may plan otherwise (the
    /// plan's own [`next_change`], or an unavailable offering expiring);
    /// `None`: none.
    until: Option<Timestamp>,
    /// What it found: no command, and why the nodes it left stay.
    explained: FirstCommand,
}

impl Quiet {
    /// Whether a plan at `now` on `inputs` finds what this one found.
    fn holds(&self, inputs: &Inputs, now: Timestamp) -> bool {
        self.at <= now && self.until.is_none_or(|until| now < until) && self.inputs == *inputs
    }
}

/// What a plan of `snapshot` with `options` reads, when the cluster can say
/// that the snapshot is of its current revision (else nothing can be
/// skipped).
fn inputs(driver: &Driver, snapshot: &Snapshot, options: &DisruptionOptions) -> Option<Inputs> {
    if !driver.options.quiet_skip {
        return None;
    }
    let revision = driver.cluster.revision()?;
    if driver.snapshot_revision != Some(revision) {
        return None;
    }
    Some(Inputs {
        revision,
        options: options.clone(),
        provider_drift: snapshot.provider_drift.clone(),
        instance_types: InstanceTypes(snapshot.instance_types.clone()),
        well_known_labels: snapshot.well_known_labels.clone(),
        launch_rank: snapshot.launch_rank,
        unavailable: driver.unavailable.generation(),
    })
}

/// A command as the cluster records it.
struct UnderWay<'c> {
    candidates: Vec<&'c NodeClaim>,
    replacements: Vec<&'c NodeClaim>,
}

/// Moves the commands under way on; returns whether any still is.
pub(super) async fn progress(
    driver: &mut Driver,
    now: Timestamp,
    report: &mut Report,
) -> Result<bool, Error> {
    let claims = driver.cluster.node_claims().await?;
    let mut commands: BTreeMap<&str, UnderWay<'_>> = BTreeMap::new();
    for claim in &claims {
        if let Some(id) = annotation(claim, COMMAND_ANNOTATION) {
            commands
                .entry(id)
                .or_insert_with(|| UnderWay {
                    candidates: vec![],
                    replacements: vec![],
                })
                .candidates
                .push(claim);
        }
    }
    // Replacements of a command whose candidates are all gone serve no
    // command any more.
    for claim in &claims {
        let Some(id) = annotation(claim, REPLACES_ANNOTATION) else {
            continue;
        };
        match commands.get_mut(id) {
            Some(command) => command.replacements.push(claim),
            None if claim.metadata.deletion_timestamp.is_none() => {
                let mut done = claim.clone();
                annotate(&mut done, REPLACES_ANNOTATION, None);
                driver.cluster.update_node_claim(done).await?;
            }
            None => {}
        }
    }
    // A node left tainted by a command that no longer exists (a driver
    // stopped mid-abort) is untainted.
    let tainted: BTreeSet<String> = driver
        .cluster
        .nodes()
        .await?
        .into_iter()
        .filter(|n| {
            n.spec
                .as_ref()
                .and_then(|s| s.taints.as_ref())
                .is_some_and(|t| t.iter().any(|t| t.key == DISRUPTED_TAINT_KEY))
        })
        .filter_map(|n| n.metadata.name.clone())
        .collect();
    for claim in &claims {
        let node = node_name_of(claim);
        if let Some(node) = node
            && annotation(claim, COMMAND_ANNOTATION).is_none()
            && claim.metadata.deletion_timestamp.is_none()
            && tainted.contains(node)
        {
            driver
                .cluster
                .untaint_node(node, DISRUPTED_TAINT_KEY)
                .await?;
        }
    }
    let under_way = !commands.is_empty();
    for (id, command) in commands {
        advance(driver, id, &command, now, report).await?;
    }
    Ok(under_way)
}

/// One step of one command.
async fn advance(
    driver: &mut Driver,
    id: &str,
    command: &UnderWay<'_>,
    now: Timestamp,
    report: &mut Report,
) -> Result<(), Error> {
    let deleting = command
        .candidates
        .iter()
        .filter(|c| c.metadata.deletion_timestamp.is_some())
        .count();
    if deleting == command.candidates.len() {
        return Ok(()); // termination takes it from here
    }
    if deleting > 0 {
        // The driver stopped while deleting the candidates: finish.
        return delete_candidates(driver, id, command, report).await;
    }
    for candidate in &command.candidates {
        taint(driver, candidate).await?;
    }
    let first = command.candidates[0];
    let expected: usize = annotation(first, COMMAND_REPLACEMENTS_ANNOTATION)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let started: Timestamp = annotation(first, COMMAND_STARTED_ANNOTATION)
        .and_then(|t| t.parse().ok())
        .unwrap_or(now);
    let live: Vec<&NodeClaim> = command
        .replacements
        .iter()
        .copied()
        .filter(|c| c.metadata.deletion_timestamp.is_none())
        .collect();
    if live.len() < expected {
        return abort(
            driver,
            id,
            command,
            "a replacement failed to launch",
            report,
        )
        .await;
    }
    let initialized = live
        .iter()
        .all(|c| is_true(c, condition_types::INITIALIZED));
    if initialized {
        return delete_candidates(driver, id, command, report).await;
    }
    let waited = now.duration_since(started).unsigned_abs();
    if waited >= driver.options.replacement_timeout {
        let why = format!(
            "replacements not initialized after {}s",
            driver.options.replacement_timeout.as_secs()
        );
        return abort(driver, id, command, &why, report).await;
    }
    Ok(())
}

async fn delete_candidates(
    driver: &Driver,
    id: &str,
    command: &UnderWay<'_>,
    report: &mut Report,
) -> Result<(), Error> {
    for candidate in &command.candidates {
        driver.cluster.delete_node_claim(name_of(candidate)).await?;
    }
    report.push(Event::CandidatesDeleted { id: id.to_owned() });
    Ok(())
}

/// Gives the command up: the candidates forget it (then lose the taint), the
/// replacements still there are deleted.
async fn abort(
    driver: &Driver,
    id: &str,
    command: &UnderWay<'_>,
    why: &str,
    report: &mut Report,
) -> Result<(), Error> {
    for candidate in &command.candidates {
        let mut released = (*candidate).clone();
        for key in [
            COMMAND_ANNOTATION,
            COMMAND_STARTED_ANNOTATION,
            COMMAND_REPLACEMENTS_ANNOTATION,
        ] {
            annotate(&mut released, key, None);
        }
        driver.cluster.update_node_claim(released).await?;
        if let Some(node) = node_name_of(candidate) {
            driver
                .cluster
                .untaint_node(node, DISRUPTED_TAINT_KEY)
                .await?;
        }
    }
    for replacement in &command.replacements {
        driver
            .cluster
            .delete_node_claim(name_of(replacement))
            .await?;
    }
    report.push(Event::CommandAborted {
        id: id.to_owned(),
        why: why.to_owned(),
    });
    Ok(())
}

/// Taints the candidate's node so that nothing new lands on it.
async fn taint(driver: &Driver, candidate: &NodeClaim) -> Result<(), Error> {
    if let Some(node) = node_name_of(candidate) {
        driver
            .cluster
            .taint_node(node, DISRUPTED_NO_SCHEDULE_TAINT.to_taint())
            .await?;
    }
    Ok(())
}

/// Plans disruption on the settled cluster (`snapshot`) and starts the
/// plan's first command, or holds it for its check when it is one that
/// waits (see [`validate`](super::validate)). While a command is held
/// nothing is planned: at its time it is checked against `snapshot`, and
/// started, or dropped and the cluster planned afresh.
pub(super) async fn start(
    driver: &mut Driver,
    snapshot: Snapshot,
    now: Timestamp,
    report: &mut Report,
) -> Result<(), Error> {
    if validate::waiting(driver, now) {
        return Ok(());
    }
    let snapshot = with_provider_drift(driver, snapshot, report).await;
    let options = driver.options.disruption(driver.provider.repair_policies());
    let snapshot = match validate::check(driver, snapshot, &options, now, report).await? {
        Checked::Valid(snapshot, command) => {
            return begin(driver, &snapshot, &command, now, report).await;
        }
        Checked::Plan(snapshot) => snapshot,
    };
    let inputs = inputs(driver, &snapshot, &options);
    if let (Some(inputs), Some(quiet)) = (&inputs, &driver.quiet)
        && quiet.holds(inputs, now)
    {
        // Nothing the last plan read has changed: it would find the same
        // nothing. Its reasons are reported as a plan's are (each once,
        // so nothing new).
        tracing::debug!("disruption plan skipped: nothing changed since the last one");
        let explained = quiet.explained.clone();
        report_reasons(driver, &snapshot, &explained, report);
        return Ok(());
    }
    // The plan is CPU-bound: it runs on the driver's planning runner, the
    // snapshot moved in and handed back (with, when it finds no command,
    // the first moment it may find one with nothing else changed).
    let runner = driver.options.planning_runner.as_ref();
    let remember = inputs.is_some();
    let (snapshot, explained, until) = run_planning(runner, Step::Disruption, report, move || {
        let explained = first_command_explained(&snapshot, now, &options);
        let until = (remember && explained.command.is_none())
            .then(|| next_change(&snapshot, now, &options));
        (snapshot, explained, until)
    })
    .await?;
    report_reasons(driver, &snapshot, &explained, report);
    driver.quiet = match (inputs, until) {
        (Some(inputs), Some(until)) => {
            // An offering that becomes available again changes the
            // snapshot's instance types.
            let expiry = driver.unavailable.earliest_expiry();
            let until = until.into_iter().chain(expiry).min();
            Some(Quiet {
                inputs,
                at: now,
                until,
                explained: explained.clone(),
            })
        }
        _ => None,
    };
    let Some(command) = explained.command else {
        return Ok(());
    };
    if validate::hold(driver, &snapshot, &command, now, report) {
        return Ok(());
    }
    begin(driver, &snapshot, &command, now, report).await
}

/// `snapshot` with the provider's drift verdicts on its launched claims;
/// a verdict the provider fails to give is reported, and the claim read as
/// not drifted.
async fn with_provider_drift(
    driver: &Driver,
    mut snapshot: Snapshot,
    report: &mut Report,
) -> Snapshot {
    for node in &snapshot.nodes {
        let Some(claim) = &node.node_claim else {
            continue;
        };
        if claim
            .status
            .as_ref()
            .and_then(|s| s.provider_id.as_ref())
            .is_none()
        {
            continue;
        }
        match driver.provider.is_drifted(claim).await {
            Ok(Some(reason)) => {
                snapshot
                    .provider_drift
                    .insert(name_of(claim).to_owned(), reason);
            }
            Ok(None) => {}
            Err(error) => report.push(Event::ProviderError {
                action: format!("checking {} for drift", name_of(claim)),
                error: with_causes(&error),
            }),
        }
    }
    snapshot
}

/// Starts `command`, planned on `snapshot`: its candidates marked and
/// tainted, its replacements created and launched.
async fn begin(
    driver: &mut Driver,
    snapshot: &Snapshot,
    command: &Command,
    now: Timestamp,
    report: &mut Report,
) -> Result<(), Error> {
    let candidates = candidate_claims(snapshot, command);
    let Some(first) = candidates.first() else {
        return Ok(());
    };
    let id = name_of(first).to_owned();
    // Written down first, so that a driver stopped from here on finds the
    // command and finishes or aborts it.
    for candidate in &candidates {
        let mut marked = candidate.clone();
        annotate(&mut marked, COMMAND_ANNOTATION, Some(id.clone()));
        annotate(
            &mut marked,
            COMMAND_STARTED_ANNOTATION,
            Some(now.to_string()),
        );
        annotate(
            &mut marked,
            COMMAND_REPLACEMENTS_ANNOTATION,
            Some(command.replacements.len().to_string()),
        );
        driver.cluster.update_node_claim(marked).await?;
        taint(driver, candidate).await?;
    }
    let pods = pods_by_key(&snapshot.pods);
    let mut claims = driver.cluster.node_claims().await?;
    let mut names = Vec::new();
    let mut failed = false;
    for planned in &command.replacements {
        let Some(claim) = driver
            .create_claim(planned, snapshot, &pods, &mut claims, Some(&id), now)
            .await?
        else {
            failed = true;
            break;
        };
        let name = name_of(&claim).to_owned();
        names.push(name);
        if launch(driver, &claim, now, report).await? != Launch::Launched {
            failed = true;
            break;
        }
    }
    report.push(Event::CommandStarted {
        id: id.clone(),
        reason: command.reason,
        candidates: candidates.iter().map(|c| name_of(c).to_owned()).collect(),
        replacements: names,
        savings_per_hour: command.savings_per_hour,
        drift: command.drift.clone(),
    });
    if failed || command.replacements.is_empty() {
        // Move on at once: abort on a failed launch, delete when nothing
        // needs launching.
        progress(driver, now, report).await?;
    }
    Ok(())
}

/// Reports why the plan leaves nodes alone, each node once per reason: a
/// blocked node ([`Event::DisruptionBlocked`]) or a refused candidate
/// ([`Event::Unconsolidatable`]) already reported with the same reason is not
/// reported again.
///
/// The driver forgets a blocked node once a plan no longer blocks it. It
/// forgets an unconsolidatable node when single-node consolidation gave it a
/// command, when a plan that found no command (so tried every candidate it
/// could) did not refuse it, or when it is gone; a plan whose command came
/// before the node was tried says nothing of it, and changes nothing.
fn report_reasons(
    driver: &mut Driver,
    snapshot: &Snapshot,
    explained: &FirstCommand,
    report: &mut Report,
) {
    let blocked = explained
        .blocked
        .iter()
        .map(|b| (b.node.as_str(), b.reason.clone()));
    let refused = explained
        .unconsolidatable
        .iter()
        .map(|(node, why)| (node.as_str(), why.to_string()));
    let refused: BTreeMap<&str, String> = refused.collect();
    match &explained.command {
        // Every candidate it could try was tried: the refused are all there is.
        None => driver
            .unconsolidatable
            .retain(|node, _| refused.contains_key(node.as_str())),
        Some(command) => {
            let live: BTreeSet<&str> = snapshot.nodes.iter().map(|n| n.name()).collect();
            driver.unconsolidatable.retain(|node, _| {
                live.contains(node.as_str()) && !command.candidates.contains(node)
            });
        }
    }
    let blocked: BTreeMap<&str, String> = blocked.collect();
    driver
        .blocked
        .retain(|node, _| blocked.contains_key(node.as_str()));
    for (node, reason) in blocked {
        if remember(&mut driver.blocked, node, &reason) {
            report.push(Event::DisruptionBlocked {
                node: node.to_owned(),
                reason,
            });
        }
    }
    for (node, reason) in refused {
        if remember(&mut driver.unconsolidatable, node, &reason) {
            report.push(Event::Unconsolidatable {
                node: node.to_owned(),
                reason,
            });
        }
    }
}

/// Remembers `reason` for `node`; whether it is new (the node was not
/// remembered, or with another reason).
fn remember(memory: &mut BTreeMap<String, String>, node: &str, reason: &str) -> bool {
    if memory.get(node).map(String::as_str) == Some(reason) {
        return false;
    }
    memory.insert(node.to_owned(), reason.to_owned());
    true
}
