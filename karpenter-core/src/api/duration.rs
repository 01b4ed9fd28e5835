//! Go duration strings (`720h`, `1h30m`, `300ms`) and Karpenter's `Never`
//! sentinel.
//!
//! Karpenter's duration fields are Go `time.Duration` values on the wire, so
//! they accept exactly what Go's `time.ParseDuration` accepts: a sequence of
//! decimal numbers, each with an optional fraction and a unit out of `ns`,
//! `us` (or `µs`/`μs`), `ms`, `s`, `m` and `h`, plus the bare `0`. Negative
//! durations are rejected: none of these fields has a meaning for them.
//!
//! Both types keep the text they were parsed from and serialize it verbatim,
//! so `1h30m` is written back as `1h30m` rather than Go's canonical
//! `1h30m0s` (upstream's `NillableDuration` keeps its raw bytes for the same
//! reason: GitOps tools would otherwise report drift).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

/// The text of the sentinel that disables a [`NillableDuration`].
pub const NEVER: &str = "Never";

/// Go's `time.Duration` is an `int64` of nanoseconds, so nothing longer than
/// this (about 292 years) is representable upstream either.
const MAX_NANOS: u64 = i64::MAX as u64;

const NANOS_PER_SECOND: u64 = 1_000_000_000;

/// Why a duration string was rejected (see [`DurationError`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DurationErrorKind {
    /// The string is empty.
    Empty,
    /// The string starts with `-`.
    Negative,
    /// A unit is not preceded by a number (e.g. `h`, `.h`, `1h.m`).
    MissingNumber,
    /// A number is not followed by a unit (e.g. `10`, `1h30`).
    MissingUnit,
    /// The unit is none of `ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`, `h`.
    UnknownUnit(String),
    /// The duration exceeds Go's limit of 2^63-1 nanoseconds.
    Overflow,
    /// `Never` was given for a field that has no such sentinel.
    NeverNotAllowed,
}

impl fmt::Display for DurationErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("the string is empty"),
            Self::Negative => f.write_str("negative durations are not allowed"),
            Self::MissingNumber => f.write_str("expected a number before each unit"),
            Self::MissingUnit => {
                f.write_str("missing unit after a number (use one of ns, us, ms, s, m, h)")
            }
            Self::UnknownUnit(unit) => {
                write!(f, "unknown unit {unit:?} (use one of ns, us, ms, s, m, h)")
            }
            Self::Overflow => f.write_str("longer than the maximum of 2562047h47m16.854775807s"),
            Self::NeverNotAllowed => f.write_str("\"Never\" is not allowed for this field"),
        }
    }
}

/// A duration string that could not be parsed: the text and the reason.
///
/// ```
/// use karpenter_core::api::{DurationErrorKind, GoDuration};
///
/// let err = GoDuration::parse("5d").unwrap_err();
/// assert_eq!(err.text(), "5d");
/// assert_eq!(err.kind(), &DurationErrorKind::UnknownUnit("d".to_owned()));
/// assert_eq!(err.to_string(), r#"invalid duration "5d": unknown unit "d" (use one of ns, us, ms, s, m, h)"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("invalid duration {text:?}: {kind}")]
pub struct DurationError {
    text: String,
    kind: DurationErrorKind,
}

impl DurationError {
    fn new(text: &str, kind: DurationErrorKind) -> Self {
        Self {
            text: text.to_owned(),
            kind,
        }
    }

    /// The rejected text, as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Why it was rejected.
    pub fn kind(&self) -> &DurationErrorKind {
        &self.kind
    }
}

/// A non-negative Go duration (`metav1.Duration` upstream) that remembers its
/// original text.
///
/// Used for `terminationGracePeriod` and a budget's `duration`, which take no
/// `Never`. Equality compares the text, so `60m` and `1h` differ; compare
/// [`GoDuration::as_std`] for the length of time.
///
/// ```
/// use std::time::Duration;
/// use karpenter_core::api::GoDuration;
///
/// let d: GoDuration = "1h30m".parse()?;
/// assert_eq!(d.as_std(), Duration::from_secs(5400));
/// assert_eq!(d.as_str(), "1h30m");
/// assert_eq!(GoDuration::from_std(Duration::from_secs(5400))?.as_str(), "1h30m0s");
/// # Ok::<(), karpenter_core::api::DurationError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GoDuration {
    text: String,
    value: Duration,
}

impl GoDuration {
    /// Parses Go duration syntax; rejects `Never`, negative values and
    /// anything Go's `time.ParseDuration` rejects.
    pub fn parse(text: &str) -> Result<Self, DurationError> {
        if text == NEVER {
            return Err(DurationError::new(text, DurationErrorKind::NeverNotAllowed));
        }
        let value = parse_go_duration(text).map_err(|kind| DurationError::new(text, kind))?;
        Ok(Self {
            text: text.to_owned(),
            value,
        })
    }

    /// Builds a duration from a length of time, with the text Go's
    /// `Duration.String` would write (`90s` becomes `1m30s`). Fails beyond
    /// Go's limit of 2^63-1 nanoseconds.
    pub fn from_std(value: Duration) -> Result<Self, DurationError> {
        let nanos = u64::try_from(value.as_nanos())
            .ok()
            .filter(|&n| n <= MAX_NANOS)
            .ok_or_else(|| {
                DurationError::new(&format!("{value:?}"), DurationErrorKind::Overflow)
            })?;
        Ok(Self {
            text: format_go_duration(nanos),
            value,
        })
    }

    /// The length of time.
    pub fn as_std(&self) -> Duration {
        self.value
    }

    /// The text this duration was parsed from (or formatted to).
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl FromStr for GoDuration {
    type Err = DurationError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

impl fmt::Display for GoDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for GoDuration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for GoDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(ParseVisitor::<Self>::new(
            "a Go duration string such as \"1h30m\"",
        ))
    }
}

/// A Go duration or the `Never` sentinel (`NillableDuration` upstream), for
/// `expireAfter` and `consolidateAfter`.
///
/// ```
/// use std::time::Duration;
/// use karpenter_core::api::NillableDuration;
///
/// let never: NillableDuration = "Never".parse()?;
/// assert!(never.is_never());
/// assert_eq!(never.as_std(), None);
/// let month: NillableDuration = "720h".parse()?;
/// assert_eq!(month.as_std(), Some(Duration::from_secs(720 * 3600)));
/// # Ok::<(), karpenter_core::api::DurationError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NillableDuration {
    /// `Never`: the behaviour the field controls is disabled.
    Never,
    /// A finite duration.
    Duration(GoDuration),
}

impl NillableDuration {
    /// Parses `Never` or Go duration syntax.
    pub fn parse(text: &str) -> Result<Self, DurationError> {
        if text == NEVER {
            Ok(Self::Never)
        } else {
            GoDuration::parse(text).map(Self::Duration)
        }
    }

    /// Whether this is the `Never` sentinel.
    pub fn is_never(&self) -> bool {
        matches!(self, Self::Never)
    }

    /// The length of time, or `None` for `Never`.
    pub fn as_std(&self) -> Option<Duration> {
        match self {
            Self::Never => None,
            Self::Duration(d) => Some(d.as_std()),
        }
    }

    /// The text as it is serialized.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Never => NEVER,
            Self::Duration(d) => d.as_str(),
        }
    }
}

impl From<GoDuration> for NillableDuration {
    fn from(d: GoDuration) -> Self {
        Self::Duration(d)
    }
}

impl FromStr for NillableDuration {
    type Err = DurationError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

impl fmt::Display for NillableDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for NillableDuration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for NillableDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(ParseVisitor::<Self>::new(
            "a Go duration string such as \"720h\", or \"Never\"",
        ))
    }
}

/// Deserializes a string through `FromStr`, so a bad value fails inside the
/// deserializer, at the field that holds it.
struct ParseVisitor<T> {
    expecting: &'static str,
    target: std::marker::PhantomData<T>,
}

impl<T> ParseVisitor<T> {
    fn new(expecting: &'static str) -> Self {
        Self {
            expecting,
            target: std::marker::PhantomData,
        }
    }
}

impl<T> Visitor<'_> for ParseVisitor<T>
where
    T: FromStr<Err = DurationError>,
{
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
        text.parse().map_err(E::custom)
    }
}

/// Nanoseconds in one of Go's duration units.
fn unit_nanos(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => 1,
        // Go accepts the micro sign (U+00B5) and the Greek mu (U+03BC).
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "s" => NANOS_PER_SECOND,
        "m" => 60 * NANOS_PER_SECOND,
        "h" => 3_600 * NANOS_PER_SECOND,
        _ => return None,
    })
}

/// Parses Go's `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+` grammar (or a bare `0`)
/// into a non-negative duration, with Go's results to the nanosecond.
fn parse_go_duration(text: &str) -> Result<Duration, DurationErrorKind> {
    let body = match text.as_bytes().first() {
        Some(b'-') => return Err(DurationErrorKind::Negative),
        Some(b'+') => &text[1..],
        _ => text,
    };
    if body == "0" {
        return Ok(Duration::ZERO);
    }
    if body.is_empty() {
        return Err(DurationErrorKind::Empty);
    }
    let overflow = |_| DurationErrorKind::Overflow;
    let mut total: u64 = 0;
    let mut rest = body;
    while !rest.is_empty() {
        let (whole, after_whole) = split_digits(rest);
        let (fraction, after_fraction) = match after_whole.strip_prefix('.') {
            Some(after_dot) => split_digits(after_dot),
            None => ("", after_whole),
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(DurationErrorKind::MissingNumber);
        }
        // The unit runs up to the next number; slicing there is safe because
        // digits and '.' are ASCII and so always on a char boundary.
        let unit_len = after_fraction
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after_fraction.len());
        let (unit, next) = after_fraction.split_at(unit_len);
        if unit.is_empty() {
            return Err(DurationErrorKind::MissingUnit);
        }
        let nanos = unit_nanos(unit).ok_or_else(|| DurationErrorKind::UnknownUnit(unit.into()))?;
        let whole: u64 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(overflow)?
        };
        let term = whole
            .checked_mul(nanos)
            .and_then(|v| v.checked_add(fraction_nanos(fraction, nanos)))
            .ok_or(DurationErrorKind::Overflow)?;
        total = total
            .checked_add(term)
            .filter(|&t| t <= MAX_NANOS)
            .ok_or(DurationErrorKind::Overflow)?;
        rest = next;
    }
    Ok(Duration::from_nanos(total))
}

/// Splits a leading run of ASCII digits off `s`.
fn split_digits(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s.split_at(end)
}

/// The nanoseconds a fraction's digits add to one unit.
///
/// Computed the way Go does it (digits accumulated until they would pass
/// 2^63, then one `float64` multiplication truncated toward zero), so a value
/// such as `1.0000000001h` lands on the same nanosecond as upstream.
fn fraction_nanos(digits: &str, unit_nanos: u64) -> u64 {
    let mut numerator: u64 = 0;
    let mut scale: f64 = 1.0;
    for digit in digits.bytes().map(|b| u64::from(b - b'0')) {
        match numerator
            .checked_mul(10)
            .and_then(|n| n.checked_add(digit))
            .filter(|&n| n <= 1 << 63)
        {
            Some(n) => {
                numerator = n;
                scale *= 10.0;
            }
            // Later digits are too small to matter; Go drops them too.
            None => break,
        }
    }
    if numerator == 0 {
        return 0;
    }
    // The product is below `unit_nanos` (at most 3.6e12), well inside f64's
    // exact integer range; `as` truncates toward zero like Go's conversion.
    (numerator as f64 * (unit_nanos as f64 / scale)) as u64
}

/// Formats nanoseconds as Go's `Duration.String` does: `0s`, `300ms`,
/// `1.5µs`, `1m30s`, `720h0m0s`.
fn format_go_duration(nanos: u64) -> String {
    if nanos == 0 {
        return "0s".to_owned();
    }
    if nanos < NANOS_PER_SECOND {
        let (per_unit, unit) = match nanos {
            n if n < 1_000 => (1, "ns"),
            n if n < 1_000_000 => (1_000, "\u{b5}s"),
            _ => (1_000_000, "ms"),
        };
        return format!("{}{unit}", decimal(nanos, per_unit));
    }
    let seconds = decimal(nanos % (60 * NANOS_PER_SECOND), NANOS_PER_SECOND);
    let total_minutes = nanos / (60 * NANOS_PER_SECOND);
    match (total_minutes / 60, total_minutes % 60) {
        (0, 0) => format!("{seconds}s"),
        (0, minutes) => format!("{minutes}m{seconds}s"),
        (hours, minutes) => format!("{hours}h{minutes}m{seconds}s"),
    }
}

/// `value / per_unit` as a decimal without trailing zeros (`1500, 1000` is
/// `1.5`).
fn decimal(value: u64, per_unit: u64) -> String {
    let (whole, remainder) = (value / per_unit, value % per_unit);
    if remainder == 0 {
        return whole.to_string();
    }
    let width = per_unit.ilog10() as usize;
    let fraction = format!("{remainder:0width$}");
    format!("{whole}.{}", fraction.trim_end_matches('0'))
}
