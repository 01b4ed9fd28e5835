//! The two price fields of a NodeOverlay: `price` (an override) and
//! `priceAdjustment` (a change), read as the CRD's patterns admit them and
//! applied as upstream's `AdjustedPrice` does.

use std::fmt;

/// How an overlay changes an offering's price.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PriceChange {
    /// `price: "0.25"`: the price becomes this.
    Override(f64),
    /// `priceAdjustment: "-0.5"`: this is added (never below zero).
    Delta(f64),
    /// `priceAdjustment: "+10%"`: the price grows (or shrinks) by this many
    /// percent (never below zero).
    Percent(f64),
}

impl PriceChange {
    /// `price` as the CRD's pattern `^\d+(\.\d+)?$` admits it.
    pub fn parse_price(text: &str) -> Option<PriceChange> {
        let (whole, fraction) = match text.split_once('.') {
            Some((whole, fraction)) => (whole, Some(fraction)),
            None => (text, None),
        };
        let valid = digits(whole) && fraction.is_none_or(digits);
        valid.then(|| text.parse().ok().map(PriceChange::Override))?
    }

    /// `priceAdjustment` as the CRD's pattern admits it: a signed number
    /// (`+0.5`, `-.25`), a positive percentage of any size (`+150%`), or a
    /// negative one down to `-100%` (`-15%`, `-99.5%`).
    pub fn parse_adjustment(text: &str) -> Option<PriceChange> {
        let (sign, rest) = match text.as_bytes().first()? {
            b'+' => (1.0, &text[1..]),
            b'-' => (-1.0, &text[1..]),
            _ => return None,
        };
        if let Some(number) = rest.strip_suffix('%') {
            let allowed = if sign > 0.0 {
                unsigned_number(number)
            } else {
                // `-\d{1,2}(\.\d+)?%` or `-100%`.
                let (whole, fraction) = match number.split_once('.') {
                    Some((whole, fraction)) => (whole, Some(fraction)),
                    None => (number, None),
                };
                number == "100"
                    || ((1..=2).contains(&whole.len())
                        && digits(whole)
                        && fraction.is_none_or(digits))
            };
            let value: f64 = number.parse().ok()?;
            return allowed.then_some(PriceChange::Percent(sign * value));
        }
        let value: f64 = unsigned_number(rest).then(|| rest.parse().ok())??;
        Some(PriceChange::Delta(sign * value))
    }

    /// The price an offering priced `price` gets.
    pub fn apply(self, price: f64) -> f64 {
        let adjusted = match self {
            PriceChange::Override(price) => return price,
            PriceChange::Delta(delta) => price + delta,
            PriceChange::Percent(percent) => price * (1.0 + percent / 100.0),
        };
        if adjusted >= 0.0 { adjusted } else { 0.0 }
    }
}

impl fmt::Display for PriceChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PriceChange::Override(price) => write!(f, "{price}"),
            PriceChange::Delta(delta) => write!(f, "{delta:+}"),
            PriceChange::Percent(percent) => write!(f, "{percent:+}%"),
        }
    }
}

/// One or more ASCII digits.
fn digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// `\d*\.?\d+`: digits, at most one dot, and a digit last.
fn unsigned_number(text: &str) -> bool {
    match text.split_once('.') {
        Some((whole, fraction)) => (whole.is_empty() || digits(whole)) && digits(fraction),
        None => digits(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_read_as_the_crd_admits_them() {
        assert_eq!(
            PriceChange::parse_price("0.25"),
            Some(PriceChange::Override(0.25))
        );
        assert_eq!(
            PriceChange::parse_price("3"),
            Some(PriceChange::Override(3.0))
        );
        for bad in ["", ".5", "5.", "-1", "+1", "1e3", "1.2.3", "0x10", " 1"] {
            assert_eq!(PriceChange::parse_price(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn adjustments_read_as_the_crd_admits_them() {
        let cases = [
            ("+0.5", PriceChange::Delta(0.5)),
            ("-.25", PriceChange::Delta(-0.25)),
            ("+10", PriceChange::Delta(10.0)),
            ("+10%", PriceChange::Percent(10.0)),
            ("+150.5%", PriceChange::Percent(150.5)),
            ("+.5%", PriceChange::Percent(0.5)),
            ("-15%", PriceChange::Percent(-15.0)),
            ("-99.9%", PriceChange::Percent(-99.9)),
            ("-100%", PriceChange::Percent(-100.0)),
        ];
        for (text, change) in cases {
            assert_eq!(PriceChange::parse_adjustment(text), Some(change), "{text}");
        }
        for bad in [
            "", "10", "10%", "+", "-", "+5.", "-101%", "-100.0%", "-.5%", "-150%", "+1e3", "+-1",
            "++1", "+1 ", "+%",
        ] {
            assert_eq!(PriceChange::parse_adjustment(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn adjustments_apply_as_upstream_and_never_below_zero() {
        assert_eq!(PriceChange::Override(0.3).apply(1.0), 0.3);
        assert!((PriceChange::Percent(10.0).apply(0.2) - 0.22).abs() < 1e-12);
        assert!((PriceChange::Percent(-15.0).apply(1.0) - 0.85).abs() < 1e-12);
        assert_eq!(PriceChange::Percent(-100.0).apply(1.0), 0.0);
        assert!((PriceChange::Delta(-0.5).apply(2.0) - 1.5).abs() < 1e-12);
        assert_eq!(PriceChange::Delta(-0.5).apply(0.2), 0.0);
    }
}
