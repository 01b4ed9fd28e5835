//! Tests of quantity parsing: the accepted grammar, its rounding and its rejections.

use super::*;

fn milli(s: &str) -> i64 {
    match parse_milli(s) {
        Ok(v) => v,
        Err(e) => panic!("{s:?} should parse: {e}"),
    }
}

fn kind(s: &str) -> QuantityErrorKind {
    match parse_milli(s) {
        Ok(v) => panic!("{s:?} should be rejected, got {v}"),
        Err(e) => e.kind().clone(),
    }
}

#[test]
fn plain_numbers_and_decimals() {
    assert_eq!(milli("0"), 0);
    assert_eq!(milli("1"), 1000);
    assert_eq!(milli("1.5"), 1500);
    assert_eq!(milli(".5"), 500);
    assert_eq!(milli("1."), 1000);
    assert_eq!(milli("+2"), 2000);
    assert_eq!(milli("-1"), -1000);
    assert_eq!(milli("007"), 7000);
    assert_eq!(milli("-0"), 0);
    assert_eq!(milli("0.000"), 0);
}

#[test]
fn decimal_si_suffixes() {
    assert_eq!(milli("100m"), 100);
    assert_eq!(milli("1000000n"), 1);
    assert_eq!(milli("1000u"), 1);
    assert_eq!(milli("2k"), 2_000_000);
    assert_eq!(milli("500M"), 500_000_000_000);
    assert_eq!(milli("3G"), 3_000_000_000_000);
    assert_eq!(milli("1T"), 1_000_000_000_000_000);
    assert_eq!(milli("1P"), 1_000_000_000_000_000_000);
    assert_eq!(milli("0.001E"), 1_000_000_000_000_000_000);
    assert_eq!(milli("1.5k"), 1_500_000);
    assert_eq!(milli("1.G"), 1_000_000_000_000);
}

#[test]
fn binary_suffixes() {
    assert_eq!(milli("1Ki"), 1_024_000);
    assert_eq!(milli("0.5Ki"), 512_000);
    assert_eq!(milli("1Mi"), 1_048_576_000);
    assert_eq!(milli("2Gi"), 2_147_483_648_000);
    assert_eq!(milli("1.5Gi"), 1_610_612_736_000);
    assert_eq!(milli("1Ti"), 1_099_511_627_776_000);
    assert_eq!(milli("1Pi"), 1_125_899_906_842_624_000);
    assert_eq!(milli("0.001Ei"), 1_152_921_504_606_846_976);
    // 0.1 KiB is 102.4 bytes: 102400 milli exactly.
    assert_eq!(milli("0.1Ki"), 102_400);
    // 0.0001 KiB is 0.1024 bytes: 102.4 milli, rounded up.
    assert_eq!(milli("0.0001Ki"), 103);
}

#[test]
fn decimal_exponents() {
    assert_eq!(milli("1e3"), 1_000_000);
    assert_eq!(milli("1E3"), 1_000_000);
    assert_eq!(milli("2.5e-3"), 3);
    assert_eq!(milli("2.5e-2"), 25);
    assert_eq!(milli("1e+2"), 100_000);
    assert_eq!(milli("1e-3"), 1);
    assert_eq!(milli("12e0"), 12_000);
    assert_eq!(milli("0e999999"), 0);
    assert_eq!(milli("1e-999999"), 1);
}

#[test]
fn rounds_up_towards_positive_infinity() {
    assert_eq!(milli("1n"), 1);
    assert_eq!(milli("1u"), 1);
    assert_eq!(milli("0.1m"), 1);
    assert_eq!(milli("1.0001m"), 2);
    assert_eq!(milli("1.000m"), 1);
    assert_eq!(milli("0.0000000000000000000000001"), 1);
    assert_eq!(milli("-1n"), 0);
    assert_eq!(milli("-1.5m"), -1);
}

#[test]
fn limits_of_i64() {
    assert_eq!(milli("9223372036854775807m"), i64::MAX);
    assert_eq!(milli("-9223372036854775808m"), i64::MIN);
    assert_eq!(milli("9223372036854775.807"), i64::MAX);
    assert_eq!(milli("8191Ti"), 8191 * (1i64 << 40) * 1000);
    assert_eq!(kind("9223372036854775808m"), QuantityErrorKind::OutOfRange);
    assert_eq!(kind("9223372036854775.8071"), QuantityErrorKind::OutOfRange);
    assert_eq!(kind("1Ei"), QuantityErrorKind::OutOfRange);
    assert_eq!(kind("10E"), QuantityErrorKind::OutOfRange);
    assert_eq!(kind("1e999999"), QuantityErrorKind::OutOfRange);
    assert_eq!(
        kind("99999999999999999999999999999999999999999"),
        QuantityErrorKind::OutOfRange
    );
    // i128::MAX with a fraction: the round-up step itself must not overflow.
    assert_eq!(
        kind("170141183460469231731687303715884105.7271"),
        QuantityErrorKind::OutOfRange
    );
}

#[test]
fn rejects_malformed_text() {
    use QuantityErrorKind::*;
    assert_eq!(kind(""), Empty);
    assert_eq!(kind("e"), MissingNumber);
    assert_eq!(kind("G"), MissingNumber);
    assert_eq!(kind("+"), MissingNumber);
    assert_eq!(kind("."), MissingNumber);
    assert_eq!(kind("-.Ki"), MissingNumber);
    assert_eq!(kind("1Kb"), UnknownSuffix("Kb".into()));
    assert_eq!(kind("1ki"), UnknownSuffix("ki".into()));
    assert_eq!(kind("1K"), UnknownSuffix("K".into()));
    assert_eq!(kind("1mi"), UnknownSuffix("mi".into()));
    assert_eq!(kind("1Gi3"), UnknownSuffix("Gi3".into()));
    assert_eq!(kind("1e"), InvalidExponent("e".into()));
    assert_eq!(kind("1e+"), InvalidExponent("e+".into()));
    assert_eq!(kind("1e1.5"), InvalidExponent("e1.5".into()));
    assert_eq!(kind("1e3Ki"), InvalidExponent("e3Ki".into()));
    assert_eq!(
        kind("1e99999999999999999999"),
        InvalidExponent("e99999999999999999999".into())
    );
    assert_eq!(kind("1.2.3"), UnexpectedChar { ch: '.', at: 3 });
    assert_eq!(kind(" 1"), UnexpectedChar { ch: ' ', at: 0 });
    assert_eq!(kind("1 "), UnexpectedChar { ch: ' ', at: 1 });
    assert_eq!(kind("1 Gi"), UnexpectedChar { ch: ' ', at: 1 });
    assert_eq!(kind("+-1"), UnexpectedChar { ch: '-', at: 1 });
    assert_eq!(kind("--1"), UnexpectedChar { ch: '-', at: 1 });
    assert_eq!(kind("1_000"), UnexpectedChar { ch: '_', at: 1 });
    assert_eq!(kind("١"), UnexpectedChar { ch: '١', at: 0 });
    assert_eq!(kind("1é"), UnexpectedChar { ch: 'é', at: 1 });
}

#[test]
fn messages_name_the_text_and_the_reason() {
    let err = parse_milli("12Q").unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"invalid quantity "12Q": unknown suffix "Q""#
    );
    let err = err
        .within("memory")
        .within("spec.containers[0].resources.requests");
    assert_eq!(
        err.path(),
        Some("spec.containers[0].resources.requests.memory")
    );
    assert_eq!(
        err.to_string(),
        r#"spec.containers[0].resources.requests.memory: invalid quantity "12Q": unknown suffix "Q""#
    );
}

/// Suffixes with the exact factor, as `(numerator, denominator)`, that
/// turns units into milli-units: the oracle for the property below.
const FACTORS: [(&str, i128, i128); 12] = [
    ("n", 1, 1_000_000),
    ("u", 1, 1000),
    ("m", 1, 1),
    ("", 1000, 1),
    ("k", 1_000_000, 1),
    ("M", 1_000_000_000, 1),
    ("G", 1_000_000_000_000, 1),
    ("Ki", 1024 * 1000, 1),
    ("Mi", (1 << 20) * 1000, 1),
    ("Gi", (1 << 30) * 1000, 1),
    ("e-2", 10, 1),
    ("E2", 100_000, 1),
];

proptest::proptest! {
    #[test]
    fn never_panics(s in "[-+0-9.eEinumkKMGTP ]{0,24}") {
        let _ = parse_milli(&s);
    }

    #[test]
    fn matches_rational_arithmetic(
        negative in proptest::bool::ANY,
        whole in 0u64..10_000_000,
        fraction in "[0-9]{0,12}",
        factor in 0..FACTORS.len(),
    ) {
        let Some(&(suffix, numerator, denominator)) = FACTORS.get(factor) else {
            return Ok(());
        };
        let sign = if negative { "-" } else { "" };
        let text = format!("{sign}{whole}.{fraction}{suffix}");
        // value = digits / 10^len(fraction) * numerator / denominator
        let digits: i128 = format!("{whole}{fraction}").parse().unwrap_or_default();
        let scale = 10i128.pow(u32::try_from(fraction.len()).unwrap_or_default());
        let (n, d) = (digits * numerator, scale * denominator);
        // Round towards +infinity: ceil for positive, truncate for negative.
        let expected = if negative { -(n / d) } else { (n + d - 1) / d };
        let expected = i64::try_from(expected).map_err(|_| QuantityErrorKind::OutOfRange);
        proptest::prop_assert_eq!(parse_milli(&text).map_err(|e| e.kind().clone()), expected);
    }
}

proptest::proptest! {
    #[test]
    fn whole_numbers_take_a_short_way_to_the_same_answer(
        negative in proptest::bool::ANY,
        whole in "[0-9]{1,20}",
        suffix in proptest::sample::select(vec![
            "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti",
            "Pi", "Ei", "e-25", "e-21", "e-20", "e-3", "e0", "E3", "e15", "e16", "e30",
        ]),
    ) {
        let scale = suffix_scale(suffix).map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e:?}")))?;
        let short = whole_to_milli(negative, &whole, &scale);
        let general = to_milli(negative, &whole, "", suffix_scale(suffix).unwrap_or(Scale::Decimal(0)));
        if let Some(short) = short {
            proptest::prop_assert_eq!(Ok(short), general);
        }
    }
}

#[test]
fn quantity_convenience() {
    assert_eq!(milli_value(&Quantity("2Gi".into())), Ok(2_147_483_648_000));
}
