//! The `karpenter.sim/v1alpha1` `Trace` document: what happens to a cluster
//! over a replay (`karpenter-sim replay --trace`).
//!
//! A trace is read in two steps: the YAML (or JSON) into plain fields, with
//! the path of a field of the wrong type named; then every value checked
//! (durations, times, counts, exactly one action per event), naming the
//! field as `events[3].scale.replicas`. What needs the cluster (does the
//! deployment exist?) or the replay's start (is an event before it?) is
//! checked by the replay, in the same shape.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use karpenter_core::api::GoDuration;
use serde::Deserialize;

use super::{LoadError, LoadOptions, Source, aliases, limits, parse, state};

/// The `apiVersion` of a trace.
pub const TRACE_API_VERSION: &str = "karpenter.sim/v1alpha1";

/// What happens to a cluster over a replay: events at offsets from the
/// start, or at times.
///
/// ```
/// use karpenter_scenario::{Action, At, LoadOptions, Trace};
///
/// let trace = Trace::from_str("day.yaml", r#"
/// apiVersion: karpenter.sim/v1alpha1
/// kind: Trace
/// events:
///   - at: 8h
///     scale: {deployment: default/web, replicas: 40}
/// "#, &LoadOptions::default())?;
/// assert_eq!(trace.events[0].at, At::Offset(std::time::Duration::from_secs(8 * 3600)));
/// assert!(matches!(&trace.events[0].action, Action::Scale { replicas: 40, .. }));
/// # Ok::<(), karpenter_scenario::LoadError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// When the replay starts, unless `--start` says.
    pub start: Option<Timestamp>,
    /// How long a launched node takes to register and be ready.
    pub launch_delay: Option<Duration>,
    /// The events, in the document's order.
    pub events: Vec<TraceEvent>,
    /// Where the trace was read from (document 1 of its file).
    pub source: Source,
}

/// One event of a [`Trace`].
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent {
    /// When it happens.
    pub at: At,
    /// What happens.
    pub action: Action,
}

/// When an event happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// This long after the replay's start.
    Offset(Duration),
    /// At this time.
    Time(Timestamp),
}

/// A Deployment an event names: `namespace/name`, or a bare name in
/// `default`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeploymentRef {
    /// The namespace.
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl DeploymentRef {
    /// Reads `namespace/name` or `name` (in `default`); `None` for an empty
    /// part or more than one `/`.
    pub fn parse(text: &str) -> Option<DeploymentRef> {
        let (namespace, name) = text.split_once('/').unwrap_or(("default", text));
        let valid = |part: &str| !part.is_empty() && !part.contains('/');
        (valid(namespace) && valid(name)).then(|| DeploymentRef {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        })
    }
}

impl std::fmt::Display for DeploymentRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// What an event does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// The Deployment is scaled to `replicas`.
    Scale {
        /// Which.
        deployment: DeploymentRef,
        /// How many pods it should have.
        replicas: u32,
    },
    /// That many nodes of a capacity type get the cloud's interruption
    /// notice; the cloud takes them away after it.
    Interrupt {
        /// How many.
        nodes: u32,
        /// Of which capacity type (`spot` unless the event says).
        capacity_type: String,
    },
    /// That many nodes turn NotReady.
    Fail {
        /// How many.
        nodes: u32,
    },
    /// The NodePool's template changes: its nodes drift.
    Drift {
        /// Which.
        node_pool: String,
    },
    /// From now on, every `every`, the Deployment is scaled to a count drawn
    /// (by the replay's seed) between `min` and `max`, both included, until
    /// another `scale` or `random` of the same Deployment.
    Random {
        /// Which.
        deployment: DeploymentRef,
        /// How often a new count is drawn.
        every: Duration,
        /// The least count.
        min: u32,
        /// The greatest count.
        max: u32,
    },
}

impl Action {
    /// The action's key in the document (`scale`, `interrupt`, ...).
    pub fn key(&self) -> &'static str {
        match self {
            Action::Scale { .. } => "scale",
            Action::Interrupt { .. } => "interrupt",
            Action::Fail { .. } => "fail",
            Action::Drift { .. } => "drift",
            Action::Random { .. } => "random",
        }
    }

    /// The Deployment a `scale` or `random` names.
    pub fn deployment(&self) -> Option<&DeploymentRef> {
        match self {
            Action::Scale { deployment, .. } | Action::Random { deployment, .. } => {
                Some(deployment)
            }
            _ => None,
        }
    }
}

/// The document as written, before its values are checked.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawTrace {
    api_version: Option<String>,
    kind: Option<String>,
    start: Option<String>,
    launch_delay: Option<String>,
    #[serde(default)]
    events: Vec<RawEvent>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEvent {
    at: Option<String>,
    scale: Option<RawScale>,
    interrupt: Option<RawNodes>,
    fail: Option<RawNodes>,
    drift: Option<RawDrift>,
    random: Option<RawRandom>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScale {
    deployment: String,
    replicas: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawNodes {
    nodes: i64,
    capacity_type: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawDrift {
    node_pool: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRandom {
    deployment: String,
    every: String,
    min: i64,
    max: i64,
}

/// [`RawTrace`] deserialized with the path of a failing field recorded.
struct Tracked(RawTrace);

impl<'de> Deserialize<'de> for Tracked {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut track = serde_path_to_error::Track::new();
        let tracked = serde_path_to_error::Deserializer::new(deserializer, &mut track);
        RawTrace::deserialize(tracked)
            .map(Tracked)
            .inspect_err(|_| {
                let path = track.path().to_string();
                let known: Vec<&str> = path
                    .split('.')
                    .take_while(|s| *s != "?")
                    .filter(|s| !s.is_empty())
                    .collect();
                if !known.is_empty() {
                    state::record_failed_path(known.join("."));
                }
            })
    }
}

/// The capacity types an `interrupt` may name.
const CAPACITY_TYPES: [&str; 3] = ["spot", "on-demand", "reserved"];

impl Trace {
    /// Reads and checks a trace file (`-` is standard input).
    pub fn read_file(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Trace, LoadError> {
        let (name, bytes) = limits::read_input(path.as_ref(), options)?;
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        let text = std::str::from_utf8(bytes).map_err(|e| LoadError::Parse {
            file: name.to_string(),
            document: None,
            line: None,
            column: None,
            field: None,
            message: format!("not UTF-8 text (byte {})", e.valid_up_to()),
        })?;
        Self::parse(name, text, options)
    }

    /// Reads and checks a trace's text, named `name` in errors.
    pub fn from_str(name: &str, text: &str, options: &LoadOptions) -> Result<Trace, LoadError> {
        limits::check_size(name, text.len() as u64, options)?;
        Self::parse(Arc::from(name), text, options)
    }

    fn parse(file: Arc<str>, text: &str, options: &LoadOptions) -> Result<Trace, LoadError> {
        let parse_error = |document, line, column, field, message| LoadError::Parse {
            file: file.to_string(),
            document,
            line,
            column,
            field,
            message,
        };
        let aliases = aliases::check(text).map_err(|refused| {
            parse_error(
                refused.at.map(|(d, _, _)| d),
                refused.at.map(|(_, l, _)| l),
                refused.at.map(|(_, _, c)| c),
                None,
                refused.message(),
            )
        })?;
        state::start_file(None);
        let documents: Vec<Tracked> =
            serde_saphyr::from_multiple_with_options(text, options.yaml_options(aliases)).map_err(
                |e| {
                    let location = e.location();
                    parse_error(
                        Some(1),
                        location.map(|l| l.line()),
                        location.map(|l| l.column()),
                        state::take_failed_path(),
                        parse::yaml_message(&e),
                    )
                },
            )?;
        let source = Source {
            file: file.clone(),
            document: 1,
            item: None,
        };
        let mut documents = documents.into_iter();
        let (Some(Tracked(raw)), None) = (documents.next(), documents.next()) else {
            return Err(parse_error(
                None,
                None,
                None,
                None,
                "a trace file holds exactly one Trace document".to_owned(),
            ));
        };
        check(raw, source)
    }
}

/// A semantic error in the trace's one document.
fn invalid(source: &Source, field: impl Into<String>, message: impl Into<String>) -> LoadError {
    LoadError::Invalid {
        origin: source.clone(),
        object: "Trace".to_owned(),
        field: field.into(),
        message: message.into(),
    }
}

/// A positive Go duration.
fn positive_duration(source: &Source, field: &str, text: &str) -> Result<Duration, LoadError> {
    let duration = GoDuration::parse(text)
        .map_err(|e| invalid(source, field, e.to_string()))?
        .as_std();
    if duration.is_zero() {
        return Err(invalid(source, field, "must be longer than zero"));
    }
    Ok(duration)
}

/// A count that is not negative.
fn count(source: &Source, field: String, value: i64) -> Result<u32, LoadError> {
    if value < 0 {
        return Err(invalid(source, field, format!("{value} is negative")));
    }
    u32::try_from(value)
        .map_err(|_| invalid(source, field, format!("{value} is more than {}", u32::MAX)))
}

fn deployment(source: &Source, field: String, text: &str) -> Result<DeploymentRef, LoadError> {
    DeploymentRef::parse(text).ok_or_else(|| {
        invalid(
            source,
            field,
            format!("{text:?} is not namespace/name (or a name in default)"),
        )
    })
}

/// An event's `at`: a Go duration from the start, or an RFC 3339 time.
fn at(source: &Source, field: &str, text: &str) -> Result<At, LoadError> {
    if let Ok(time) = text.parse::<Timestamp>() {
        return Ok(At::Time(time));
    }
    GoDuration::parse(text)
        .map(|d| At::Offset(d.as_std()))
        .map_err(|e| {
            invalid(
                source,
                field,
                format!("neither a duration from the start nor an RFC 3339 time: {e}"),
            )
        })
}

fn check(raw: RawTrace, source: Source) -> Result<Trace, LoadError> {
    if raw.api_version.as_deref() != Some(TRACE_API_VERSION) {
        return Err(invalid(
            &source,
            "apiVersion",
            format!(
                "{:?} is not {TRACE_API_VERSION}",
                raw.api_version.unwrap_or_default()
            ),
        ));
    }
    if raw.kind.as_deref() != Some("Trace") {
        return Err(invalid(
            &source,
            "kind",
            format!("{:?} is not Trace", raw.kind.unwrap_or_default()),
        ));
    }
    let start = raw
        .start
        .map(|text| {
            text.parse::<Timestamp>()
                .map_err(|e| invalid(&source, "start", format!("not an RFC 3339 time: {e}")))
        })
        .transpose()?;
    let launch_delay = raw
        .launch_delay
        .map(|text| {
            GoDuration::parse(&text)
                .map(|d| d.as_std())
                .map_err(|e| invalid(&source, "launchDelay", e.to_string()))
        })
        .transpose()?;
    let events = raw
        .events
        .into_iter()
        .enumerate()
        .map(|(i, event)| check_event(&source, i, event))
        .collect::<Result<_, _>>()?;
    Ok(Trace {
        start,
        launch_delay,
        events,
        source,
    })
}

fn check_event(source: &Source, i: usize, event: RawEvent) -> Result<TraceEvent, LoadError> {
    let field = |rest: &str| format!("events[{i}].{rest}");
    let Some(text) = event.at else {
        return Err(invalid(source, field("at"), "is required"));
    };
    let at = at(source, &field("at"), &text)?;
    let mut actions = Vec::new();
    if let Some(scale) = event.scale {
        actions.push(Action::Scale {
            deployment: deployment(source, field("scale.deployment"), &scale.deployment)?,
            replicas: count(source, field("scale.replicas"), scale.replicas)?,
        });
    }
    if let Some(interrupt) = event.interrupt {
        let capacity_type = interrupt.capacity_type.unwrap_or_else(|| "spot".into());
        if !CAPACITY_TYPES.contains(&capacity_type.as_str()) {
            return Err(invalid(
                source,
                field("interrupt.capacityType"),
                format!(
                    "{capacity_type:?} is not one of {}",
                    CAPACITY_TYPES.join(", ")
                ),
            ));
        }
        actions.push(Action::Interrupt {
            nodes: count(source, field("interrupt.nodes"), interrupt.nodes)?,
            capacity_type,
        });
    }
    if let Some(fail) = event.fail {
        if fail.capacity_type.is_some() {
            return Err(invalid(
                source,
                field("fail.capacityType"),
                "fail takes no capacityType",
            ));
        }
        actions.push(Action::Fail {
            nodes: count(source, field("fail.nodes"), fail.nodes)?,
        });
    }
    if let Some(drift) = event.drift {
        if drift.node_pool.is_empty() {
            return Err(invalid(source, field("drift.nodePool"), "is empty"));
        }
        actions.push(Action::Drift {
            node_pool: drift.node_pool,
        });
    }
    if let Some(random) = event.random {
        let min = count(source, field("random.min"), random.min)?;
        let max = count(source, field("random.max"), random.max)?;
        if min > max {
            return Err(invalid(
                source,
                field("random.min"),
                format!("{min} is more than max ({max})"),
            ));
        }
        actions.push(Action::Random {
            deployment: deployment(source, field("random.deployment"), &random.deployment)?,
            every: positive_duration(source, &field("random.every"), &random.every)?,
            min,
            max,
        });
    }
    let mut actions = actions.into_iter();
    match (actions.next(), actions.next()) {
        (Some(action), None) => Ok(TraceEvent { at, action }),
        (None, _) => Err(invalid(
            source,
            format!("events[{i}]"),
            "names no action (one of scale, interrupt, fail, drift, random)",
        )),
        (Some(first), Some(second)) => Err(invalid(
            source,
            format!("events[{i}]"),
            format!(
                "names two actions ({} and {}); give each its own event",
                first.key(),
                second.key()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Trace, LoadError> {
        Trace::from_str("trace.yaml", text, &LoadOptions::default())
    }

    const HEAD: &str = "apiVersion: karpenter.sim/v1alpha1\nkind: Trace\n";

    #[test]
    fn reads_every_action_and_both_kinds_of_at() {
        let trace = read(&format!(
            "{HEAD}start: 2026-01-05T00:00:00Z\nlaunchDelay: 90s\nevents:
  - {{at: 0s, scale: {{deployment: default/web, replicas: 40}}}}
  - {{at: 9h30m, interrupt: {{nodes: 2}}}}
  - {{at: 10h, fail: {{nodes: 1}}}}
  - {{at: '2026-01-05T12:00:00Z', drift: {{nodePool: default}}}}
  - {{at: 20h, random: {{deployment: batch, every: 5m, min: 0, max: 50}}}}
"
        ))
        .expect("a trace");
        assert_eq!(trace.start, Some("2026-01-05T00:00:00Z".parse().unwrap()));
        assert_eq!(trace.launch_delay, Some(Duration::from_secs(90)));
        assert_eq!(trace.events.len(), 5);
        assert_eq!(
            trace.events[1].action,
            Action::Interrupt {
                nodes: 2,
                capacity_type: "spot".into()
            }
        );
        assert_eq!(
            trace.events[3].at,
            At::Time("2026-01-05T12:00:00Z".parse().unwrap())
        );
        assert_eq!(
            trace.events[4].action,
            Action::Random {
                deployment: DeploymentRef::parse("default/batch").unwrap(),
                every: Duration::from_secs(300),
                min: 0,
                max: 50
            }
        );
    }

    fn error_of(events: &str) -> String {
        read(&format!("{HEAD}events:\n{events}"))
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn bad_values_name_the_file_document_and_field() {
        let cases = [
            (
                "  - {at: 1h, scale: {deployment: web, replicas: -3}}\n",
                "trace.yaml, document 1: Trace: field events[0].scale.replicas: -3 is negative",
            ),
            (
                "  - {at: 5x, fail: {nodes: 1}}\n",
                "field events[0].at: neither a duration",
            ),
            (
                "  - {at: 1h, random: {deployment: web, every: 5m, min: 9, max: 2}}\n",
                "field events[0].random.min: 9 is more than max (2)",
            ),
            (
                "  - {at: 1h, random: {deployment: web, every: 0s, min: 0, max: 2}}\n",
                "field events[0].random.every: must be longer than zero",
            ),
            (
                "  - {at: 1h, fail: {nodes: 1}, drift: {nodePool: a}}\n",
                "field events[0]: names two actions (fail and drift)",
            ),
            ("  - {at: 1h}\n", "field events[0]: names no action"),
            (
                "  - {at: 1h, interrupt: {nodes: 1, capacityType: cheap}}\n",
                "field events[0].interrupt.capacityType",
            ),
            (
                "  - {scale: {deployment: web, replicas: 1}}\n",
                "field events[0].at: is required",
            ),
            (
                "  - {at: 1h, scale: {deployment: a/b/c, replicas: 1}}\n",
                "field events[0].scale.deployment",
            ),
        ];
        for (events, expected) in cases {
            let message = error_of(events);
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
        }
    }

    #[test]
    fn type_errors_and_unknown_fields_name_the_field() {
        let message = error_of("  - {at: 1h, scale: {deployment: web, replicas: many}}\n");
        assert!(message.starts_with("trace.yaml, document 1"), "{message}");
        assert!(
            message.contains("field events[0].scale.replicas"),
            "{message}"
        );
        let message = error_of("  - {at: 1h, scale: {deployment: web, replica: 3}}\n");
        assert!(message.contains("replica"), "{message}");
        let message = read("apiVersion: v1\nkind: Trace\n")
            .expect_err("refused")
            .to_string();
        assert!(message.contains("field apiVersion"), "{message}");
        let message = read(&format!("{HEAD}launchDelay: soon\n"))
            .expect_err("refused")
            .to_string();
        assert!(message.contains("field launchDelay"), "{message}");
        let message = read(&format!("{HEAD}---\n{HEAD}"))
            .expect_err("refused")
            .to_string();
        assert!(message.contains("exactly one Trace"), "{message}");
    }
}
