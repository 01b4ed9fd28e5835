//! Go duration parsing, formatting and the `Never` sentinel.

use std::time::Duration;

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::api::{DurationErrorKind, GoDuration, NillableDuration};

const NS: u64 = 1;
const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;
const M: u64 = 60 * S;
const H: u64 = 60 * M;

#[test]
fn valid_go_durations() {
    let table: &[(&str, u64)] = &[
        ("720h", 720 * H),
        ("1h30m", H + 30 * M),
        ("90s", 90 * S),
        ("1.5h", H + 30 * M),
        ("300ms", 300 * MS),
        ("2h45m0s", 2 * H + 45 * M),
        ("0s", 0),
        ("0", 0),
        ("+0", 0),
        ("+5m", 5 * M),
        ("1ns", NS),
        ("1us", US),
        ("1\u{b5}s", US),
        ("1\u{3bc}s", US),
        (".5s", 500 * MS),
        ("1.s", S),
        ("1h1h", 2 * H),
        ("1m1.5s", M + 1500 * MS),
        ("0.000000001s", NS),
        ("0.0000000009s", 0),
        // Go computes fractions in float64 and truncates: this is its result.
        ("1.0000000001h", H + 360 * NS),
        ("0.333333333333333333333333h", 1_200_000_000_000),
        ("2562047h47m16.854775807s", i64::MAX as u64),
    ];
    for &(text, nanos) in table {
        let parsed = GoDuration::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(parsed.as_std(), Duration::from_nanos(nanos), "{text}");
        assert_eq!(parsed.as_str(), text);
        let nillable = NillableDuration::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(
            nillable.as_std(),
            Some(Duration::from_nanos(nanos)),
            "{text}"
        );
    }
}

#[test]
fn invalid_go_durations() {
    use DurationErrorKind::*;
    let unknown = |unit: &str| UnknownUnit(unit.to_owned());
    let table: Vec<(&str, DurationErrorKind)> = vec![
        ("", Empty),
        ("+", Empty),
        ("-1h", Negative),
        ("-0s", Negative),
        ("1d", unknown("d")),
        ("1H", unknown("H")),
        ("1h ", unknown("h ")),
        ("5 m", unknown(" m")),
        ("1.5.h", MissingUnit),
        ("10", MissingUnit),
        ("1h30", MissingUnit),
        ("00", MissingUnit),
        ("h", MissingNumber),
        (".h", MissingNumber),
        (" 1h", MissingNumber),
        ("never", MissingNumber),
        ("1e3s", unknown("e")),
        ("2562047h47m16.854775808s", Overflow),
        ("9223372036854775808ns", Overflow),
        ("99999999999999999999999h", Overflow),
        ("Never", NeverNotAllowed),
    ];
    for (text, kind) in table {
        let err = GoDuration::parse(text).expect_err(text);
        assert_eq!(err.kind(), &kind, "{text}");
        assert_eq!(err.text(), text);
        assert!(
            err.to_string()
                .starts_with(&format!("invalid duration {text:?}: "))
        );
    }
}

#[test]
fn never_only_where_allowed() {
    assert_eq!(
        NillableDuration::parse("Never"),
        Ok(NillableDuration::Never)
    );
    assert!(NillableDuration::parse("Never").is_ok_and(|d| d.is_never()));
    let err = GoDuration::parse("Never").expect_err("no sentinel");
    assert_eq!(err.kind(), &DurationErrorKind::NeverNotAllowed);
    // The sentinel is case-sensitive, as upstream's.
    assert!(NillableDuration::parse("NEVER").is_err());
    assert!(NillableDuration::parse("-1h").is_err());
}

#[test]
fn formats_like_go() {
    let table: &[(Duration, &str)] = &[
        (Duration::ZERO, "0s"),
        (Duration::from_nanos(1), "1ns"),
        (Duration::from_nanos(1_500), "1.5\u{b5}s"),
        (Duration::from_millis(300), "300ms"),
        (Duration::from_micros(1_500), "1.5ms"),
        (Duration::from_millis(1_500), "1.5s"),
        (Duration::from_secs(90), "1m30s"),
        (Duration::from_secs(3_600), "1h0m0s"),
        (Duration::from_secs(720 * 3_600), "720h0m0s"),
        (Duration::from_millis(5_400_500), "1h30m0.5s"),
        (
            Duration::from_nanos(i64::MAX as u64),
            "2562047h47m16.854775807s",
        ),
    ];
    for &(value, text) in table {
        let d = GoDuration::from_std(value).expect("in range");
        assert_eq!(d.as_str(), text);
        assert_eq!(GoDuration::parse(text).map(|p| p.as_std()), Ok(value));
    }
    let too_long = Duration::from_nanos(i64::MAX as u64 + 1);
    let err = GoDuration::from_std(too_long).expect_err("beyond Go's range");
    assert_eq!(err.kind(), &DurationErrorKind::Overflow);
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Fields {
    fixed: GoDuration,
    nillable: NillableDuration,
}

#[test]
fn serde_keeps_the_text() {
    let input = json!({"fixed": "60m", "nillable": "2h45m0s"});
    let fields: Fields = serde_json::from_value(input.clone()).expect("parses");
    assert_eq!(fields.fixed.as_std(), Duration::from_secs(3_600));
    assert_eq!(serde_json::to_value(&fields).expect("serializes"), input);

    let never = json!({"fixed": "1h", "nillable": "Never"});
    let fields: Fields = serde_json::from_value(never.clone()).expect("parses");
    assert!(fields.nillable.is_never());
    assert_eq!(serde_json::to_value(&fields).expect("serializes"), never);

    for bad in [
        json!({"fixed": "Never", "nillable": "1h"}),
        json!({"fixed": 5, "nillable": "1h"}),
    ] {
        assert!(serde_json::from_value::<Fields>(bad).is_err());
    }
}

proptest! {
    #[test]
    fn parsing_never_panics(text in "\\PC{0,24}") {
        let _ = GoDuration::parse(&text);
        let _ = NillableDuration::parse(&text);
    }

    #[test]
    fn parsing_go_shaped_text_never_panics(text in "[-+]?([0-9]{0,22}(\\.[0-9]{0,22})?(ns|us|µs|ms|s|m|h|x)?){1,4}") {
        let _ = GoDuration::parse(&text);
    }

    #[test]
    fn formatted_durations_parse_back(nanos in 0..=i64::MAX as u64) {
        let value = Duration::from_nanos(nanos);
        let formatted = GoDuration::from_std(value).expect("in range");
        prop_assert_eq!(GoDuration::parse(formatted.as_str()).map(|d| d.as_std()), Ok(value));
    }
}
