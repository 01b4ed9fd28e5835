//! Budget schedules read as robfig/cron's `ParseStandard` reads them (the
//! library upstream uses), in UTC, and their next hit.

// cronexpr walks the calendar (month lengths, leap years, weekdays) to find a
// schedule's next minute. It was chosen because it is maintained (1.7.0; 1.2
// to 1.5 were released from July 2025 to April 2026), is built on jiff, which
// this crate already uses, and brings no other dependency. No Rust cron crate
// reads schedules as robfig/cron does (cronexpr has no macros and intersects
// the day fields for `*/2`; croner lacks `@midnight` and takes `7`, `L`, `W`
// and `#`; cron wants a seconds field), so this file parses robfig's grammar
// itself and hands cronexpr only plain lists of numbers.
use std::fmt::Write as _;
use std::num::ParseIntError;

use cronexpr::{Crontab, FallbackTimezoneOption, ParseOptions};
use k8s_openapi::jiff::tz::Offset;
use k8s_openapi::jiff::{RoundMode, SignedDuration, Timestamp, TimestampRound, Unit};

/// Why a schedule cannot be read, worded as robfig/cron words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ScheduleError {
    /// Not five fields once a macro is expanded.
    #[error("expected exactly 5 fields, found {found}: [{fields}]")]
    FieldCount {
        /// How many fields there are.
        found: usize,
        /// The fields, joined by spaces.
        fields: String,
    },
    /// `@every`, which the NodePool CRD rejects.
    #[error("@every is not supported (the NodePool CRD rejects it)")]
    Every,
    /// An `@` macro robfig does not know.
    #[error("unrecognized descriptor: @{0}")]
    UnknownDescriptor(String),
    /// An item with more than one `/`.
    #[error("too many slashes: {0}")]
    TooManySlashes(String),
    /// An item with more than one `-`.
    #[error("too many hyphens: {0}")]
    TooManyHyphens(String),
    /// A range starting below the field's minimum.
    #[error("beginning of range ({start}) below minimum ({min}): {item}")]
    BelowMinimum {
        /// Where the range starts.
        start: u64,
        /// The field's least value.
        min: u64,
        /// The item as written.
        item: String,
    },
    /// A range ending above the field's maximum.
    #[error("end of range ({end}) above maximum ({max}): {item}")]
    AboveMaximum {
        /// Where the range ends.
        end: u64,
        /// The field's greatest value.
        max: u64,
        /// The item as written.
        item: String,
    },
    /// A range that starts after it ends.
    #[error("beginning of range ({start}) beyond end of range ({end}): {item}")]
    Reversed {
        /// Where the range starts.
        start: u64,
        /// Where it ends.
        end: u64,
        /// The item as written.
        item: String,
    },
    /// A step of zero.
    #[error("step of range should be a positive number: {0}")]
    ZeroStep(String),
    /// A negative number.
    #[error("negative number ({number}) not allowed: {text}")]
    Negative {
        /// The number read.
        number: i64,
        /// As written.
        text: String,
    },
    /// Not a number (nor a name of the field's values).
    #[error("failed to parse int from {text}: {error}")]
    NotANumber {
        /// As written.
        text: String,
        /// Why it is not one.
        error: ParseIntError,
    },
    /// cronexpr refused the plain expression a readable schedule was turned
    /// into: a fault here, not in the schedule.
    #[error("internal error, {expression:?} was refused: {error}")]
    Refused {
        /// The expression handed to cronexpr.
        expression: String,
        /// cronexpr's error, as it words it.
        error: String,
    },
}

/// Minutes, hours, days of month, months, days of week.
pub(super) const FIELDS: [FieldSpec; 5] = [
    FieldSpec::new(0, 59, &[]),
    FieldSpec::new(0, 23, &[]),
    FieldSpec::new(1, 31, &[]),
    FieldSpec::new(
        1,
        12,
        &[
            "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
        ],
    ),
    FieldSpec::new(0, 6, &["sun", "mon", "tue", "wed", "thu", "fri", "sat"]),
];

/// The range of one field and the names of its values, from `min` on.
pub(super) struct FieldSpec {
    min: u64,
    max: u64,
    names: &'static [&'static str],
}

impl FieldSpec {
    const fn new(min: u64, max: u64, names: &'static [&'static str]) -> Self {
        Self { min, max, names }
    }
}

/// A field's values as bits (bit `n` for value `n`), and whether robfig
/// counts it as a wildcard, which decides how the two day fields combine.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Field {
    pub(super) bits: u64,
    pub(super) star: bool,
}

/// Reads a schedule as robfig/cron's `ParseStandard` does (with upstream's
/// `TZ=UTC` prefix) into a crontab for cronexpr, or `None` for a schedule
/// that matches no minute at all. The error names the problem as robfig does.
pub(super) fn parse_schedule(text: &str) -> Result<Option<Crontab>, ScheduleError> {
    let text = text.trim();
    let fields = match text.strip_prefix('@') {
        Some(name) => macro_fields(name)?,
        None => text.split_whitespace().collect(),
    };
    let [minute, hour, day, month, weekday] = fields[..] else {
        return Err(ScheduleError::FieldCount {
            found: fields.len(),
            fields: fields.join(" "),
        });
    };
    let mut parsed = [Field::default(); 5];
    for ((slot, text), spec) in parsed
        .iter_mut()
        .zip([minute, hour, day, month, weekday])
        .zip(&FIELDS)
    {
        *slot = parse_field(text, spec)?;
    }
    let [minute, hour, day, month, weekday] = parsed;
    let Some((day, weekday)) = day_fields(day, weekday) else {
        return Ok(None);
    };
    if [minute, hour, month].iter().any(|f| f.bits == 0) {
        return Ok(None);
    }
    let expression = format!(
        "{} {} {day} {} {weekday}",
        list(minute.bits),
        list(hour.bits),
        list(month.bits)
    );
    let mut options = ParseOptions::default();
    options.fallback_timezone_option = FallbackTimezoneOption::UTC;
    cronexpr::parse_crontab_with(&expression, options)
        .map(Some)
        .map_err(|error| ScheduleError::Refused {
            error: error.to_string(),
            expression,
        })
}

/// The fields robfig's macros stand for (its descriptors set the same bits).
fn macro_fields(name: &str) -> Result<Vec<&'static str>, ScheduleError> {
    let fields = match name {
        "yearly" | "annually" => "0 0 1 1 *",
        "monthly" => "0 0 1 * *",
        "weekly" => "0 0 * * 0",
        "daily" | "midnight" => "0 0 * * *",
        "hourly" => "0 * * * *",
        _ if name.starts_with("every ") => {
            return Err(ScheduleError::Every);
        }
        _ => return Err(ScheduleError::UnknownDescriptor(name.to_owned())),
    };
    Ok(fields.split(' ').collect())
}

/// The day-of-month and day-of-week fields for cronexpr, or `None` when no
/// day matches.
///
/// robfig intersects the two when either is a wildcard and unites them
/// otherwise; cronexpr intersects when either starts with `*` (Vixie cron's
/// rule), which differs for `*/2` and `1,*`. A robfig wildcard covers its
/// whole range, so it becomes `*`; every other field becomes a list of
/// numbers, which never starts with `*`.
fn day_fields(day: Field, weekday: Field) -> Option<(String, String)> {
    let text = |field: Field| {
        if field.star {
            "*".to_owned()
        } else {
            list(field.bits)
        }
    };
    if day.star || weekday.star {
        let restricted_empty = (!day.star && day.bits == 0) || (!weekday.star && weekday.bits == 0);
        return (!restricted_empty).then(|| (text(day), text(weekday)));
    }
    // A union with an empty side is the other side alone: intersecting it
    // with `*` says that to cronexpr.
    match (day.bits, weekday.bits) {
        (0, 0) => None,
        (0, _) => Some(("*".to_owned(), list(weekday.bits))),
        (_, 0) => Some((list(day.bits), "*".to_owned())),
        _ => Some((list(day.bits), list(weekday.bits))),
    }
}

/// `bits` as a comma-separated list of values.
fn list(bits: u64) -> String {
    let mut out = String::new();
    for value in (0..64).filter(|v| bits >> v & 1 == 1) {
        let comma = if out.is_empty() { "" } else { "," };
        let _ = write!(out, "{comma}{value}");
    }
    out
}

/// One comma-separated field. robfig drops empty items, so `1,,2` is `1,2`
/// and `,` matches nothing.
pub(super) fn parse_field(text: &str, spec: &FieldSpec) -> Result<Field, ScheduleError> {
    let mut field = Field::default();
    for item in text.split(',').filter(|item| !item.is_empty()) {
        let (bits, star) = parse_item(item, spec)?;
        field.bits |= bits;
        field.star |= star;
    }
    Ok(field)
}

/// One item: `*`, `?`, `N` or `N-M`, optionally followed by `/step`.
fn parse_item(item: &str, spec: &FieldSpec) -> Result<(u64, bool), ScheduleError> {
    let mut slashes = item.split('/');
    let range = slashes.next().unwrap_or_default();
    let step = slashes.next();
    if slashes.next().is_some() {
        return Err(ScheduleError::TooManySlashes(item.to_owned()));
    }
    let bounds: Vec<&str> = range.split('-').collect();
    let (start, mut end, mut star) = match bounds[..] {
        // robfig reads nothing after a leading `*` or `?`, not even `-5`.
        ["*" | "?", ..] => (spec.min, spec.max, true),
        [value] => {
            let value = parse_value(value, spec)?;
            (value, value, false)
        }
        [low, high] => (parse_value(low, spec)?, parse_value(high, spec)?, false),
        _ => return Err(ScheduleError::TooManyHyphens(item.to_owned())),
    };
    let step = match step {
        None => 1,
        Some(step) => {
            let step = parse_number(step)?;
            if bounds.len() == 1 {
                end = spec.max;
            }
            // `*/1` is still a wildcard; `*/2` is not.
            star &= step <= 1;
            step
        }
    };
    if start < spec.min {
        return Err(ScheduleError::BelowMinimum {
            start,
            min: spec.min,
            item: item.to_owned(),
        });
    }
    if end > spec.max {
        return Err(ScheduleError::AboveMaximum {
            end,
            max: spec.max,
            item: item.to_owned(),
        });
    }
    if start > end {
        return Err(ScheduleError::Reversed {
            start,
            end,
            item: item.to_owned(),
        });
    }
    if step == 0 {
        return Err(ScheduleError::ZeroStep(item.to_owned()));
    }
    // `end` is at most 59, so every shift fits.
    let step = usize::try_from(step).unwrap_or(usize::MAX);
    let bits = (start..=end).step_by(step).fold(0, |bits, v| bits | 1 << v);
    Ok((bits, star))
}

/// A value's name (any case) or number.
fn parse_value(text: &str, spec: &FieldSpec) -> Result<u64, ScheduleError> {
    match spec.names.iter().position(|n| n.eq_ignore_ascii_case(text)) {
        Some(index) => Ok(spec.min + index as u64),
        None => parse_number(text),
    }
}

/// A non-negative decimal, as Go's `strconv.Atoi` reads it (a leading `+` is
/// allowed).
fn parse_number(text: &str) -> Result<u64, ScheduleError> {
    match text.parse::<i64>() {
        Ok(number) => u64::try_from(number).map_err(|_| ScheduleError::Negative {
            number,
            text: text.to_owned(),
        }),
        Err(error) => Err(ScheduleError::NotANumber {
            text: text.to_owned(),
            error,
        }),
    }
}

/// cronexpr cannot step a date past year 9999 (its search adds years with an
/// operator that panics there), so searches that could are not started.
const LAST_SEARCHABLE_YEAR: i16 = 9980;

/// Where robfig's search from `after` starts: the next whole second.
fn search_start(after: Timestamp) -> Option<Timestamp> {
    after
        .round(
            TimestampRound::new()
                .smallest(Unit::Second)
                .mode(RoundMode::Floor),
        )
        .ok()?
        .checked_add(SignedDuration::from_secs(1))
        .ok()
}

/// The first `after` from which [`next_hit`] counts its five years from a
/// later year than it does from this `after`: it counts from the year of
/// [`search_start`], so a second before that year ends.
pub(super) fn year_turn(after: Timestamp) -> Option<Timestamp> {
    let year = Offset::UTC
        .to_datetime(search_start(after)?)
        .year()
        .checked_add(1)?;
    let next_year = k8s_openapi::jiff::civil::date(year, 1, 1)
        .at(0, 0, 0, 0)
        .to_zoned(k8s_openapi::jiff::tz::TimeZone::UTC)
        .ok()?
        .timestamp();
    next_year.checked_sub(SignedDuration::from_secs(1)).ok()
}

/// robfig/cron's `Next`: the first minute the schedule matches strictly
/// after `after`, or `None` when there is none by the end of the fifth year
/// after the one `after` falls in (robfig gives up there).
pub(super) fn next_hit(crontab: &Crontab, after: Timestamp) -> Option<Timestamp> {
    // robfig starts at the next whole second and takes its year for the limit.
    let start = search_start(after)?;
    let start_year = Offset::UTC.to_datetime(start).year();
    if start_year > LAST_SEARCHABLE_YEAR {
        return None;
    }
    let last_year = start_year + 5;
    // cronexpr looks four years ahead per call. When that fails, no hit lies
    // in the first 1460 days, so a second call from there finds the first hit
    // and looks far enough (about eight years in all) for robfig's limit.
    let reach = SignedDuration::from_hours(1460 * 24);
    let mut from = after;
    for _ in 0..2 {
        match crontab.find_next(from) {
            Ok(hit) => return (hit.year() <= last_year).then(|| hit.timestamp()),
            Err(_) => from = from.checked_add(reach).ok()?,
        }
    }
    None
}
