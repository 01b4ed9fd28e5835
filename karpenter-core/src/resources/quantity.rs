//! Exact parsing of Kubernetes quantity strings into integer milli-units.
//!
//! The accepted grammar is the one `resource.ParseQuantity` documents:
//!
//! ```text
//! quantity        ::= signedNumber suffix
//! signedNumber    ::= number | sign number
//! sign            ::= "+" | "-"
//! number          ::= digits | digits "." digits | digits "." | "." digits
//! suffix          ::= binarySI | decimalExponent | decimalSI
//! binarySI        ::= "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"
//! decimalSI       ::= "n" | "u" | "m" | "" | "k" | "M" | "G" | "T" | "P" | "E"
//! decimalExponent ::= ("e" | "E") sign? digits
//! ```
//!
//! The exponent is an integer, as in Kubernetes' implementation (its grammar
//! comment suggests a fraction would be allowed, the parser refuses one).
//!
//! No floating point is involved: the digits are kept as a decimal digit
//! string, multiplied by the binary factor exactly, and only then cut at the
//! milli position. That is what makes `0.1Ki` or `1.0001m` come out exact.

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use thiserror::Error;

/// Why a quantity was rejected; carried by [`QuantityError`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Error)]
#[non_exhaustive]
pub enum QuantityErrorKind {
    /// The text is empty.
    #[error("empty string")]
    Empty,
    /// There is no digit before the suffix (`"G"`, `"+"`, `"."`).
    #[error("no digits")]
    MissingNumber,
    /// A character that cannot appear where it does, such as a space or a
    /// second decimal point.
    #[error("unexpected character {ch:?} at byte {at}")]
    UnexpectedChar {
        /// The offending character.
        ch: char,
        /// Its byte offset in the text.
        at: usize,
    },
    /// The suffix is none of the SI, binary or exponent forms (`1Kb`, `1ki`).
    #[error("unknown suffix {0:?}")]
    UnknownSuffix(String),
    /// An `e`/`E` exponent without digits, with a fraction, or beyond `i64`.
    #[error("invalid exponent {0:?}")]
    InvalidExponent(String),
    /// The value is well formed but its milli-value does not fit in an `i64`.
    #[error("its milli-value does not fit in a 64-bit integer")]
    OutOfRange,
    /// The quantity parsed, but adding it to a running total (such as the sum
    /// of a pod's requests for `resource`) leaves the `i64` milli range.
    #[error("the total {resource} exceeds the 64-bit milli-unit range")]
    TotalOutOfRange {
        /// The resource whose total overflowed.
        resource: String,
    },
}

impl QuantityErrorKind {
    /// How the message describes the quantity: a total that overflowed was
    /// made of valid quantities, so it is not called invalid.
    fn adjective(&self) -> &'static str {
        match self {
            Self::TotalOutOfRange { .. } => "",
            _ => "invalid ",
        }
    }
}

/// A quantity that could not be turned into milli-units: the text, the
/// reason, and where it came from when known (a resource name or a field path
/// such as `spec.containers[0].resources.requests.memory`).
///
/// ```
/// use karpenter_core::resources::parse_milli;
///
/// let err = parse_milli("1Kb").unwrap_err();
/// assert_eq!(err.to_string(), r#"invalid quantity "1Kb": unknown suffix "Kb""#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Error)]
#[error("{}{}quantity {text:?}: {kind}", FieldPrefix(.path.as_deref()), .kind.adjective())]
pub struct QuantityError {
    path: Option<String>,
    text: String,
    kind: QuantityErrorKind,
}

/// Renders `path: ` before the message, or nothing when there is no path.
struct FieldPrefix<'a>(Option<&'a str>);

impl std::fmt::Display for FieldPrefix<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(path) => write!(f, "{path}: "),
            None => Ok(()),
        }
    }
}

impl QuantityError {
    /// An error about `text`, with no location yet.
    pub fn new(text: impl Into<String>, kind: QuantityErrorKind) -> Self {
        Self {
            path: None,
            text: text.into(),
            kind,
        }
    }

    /// Places the error under `parent`: a path `memory` becomes
    /// `parent.memory`, and an error without a path gets `parent` as its path.
    #[must_use]
    pub fn within(mut self, parent: &str) -> Self {
        self.path = Some(match self.path.take() {
            Some(path) => format!("{parent}.{path}"),
            None => parent.to_owned(),
        });
        self
    }

    /// Where the quantity came from, if known.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// The quantity text as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Why it was rejected.
    pub fn kind(&self) -> &QuantityErrorKind {
        &self.kind
    }
}

/// Parses a Kubernetes quantity into milli-units (`"100m"` is 100, `"2Gi"` is
/// 2147483648000).
///
/// A value that is not a whole number of milli-units is rounded up, towards
/// positive infinity, as Kubernetes' `MilliValue()` does for the positive
/// values that matter in practice: `"1n"` is 1, `"-1.5m"` is -1. A value
/// whose milli-value does not fit in an `i64` is an error, never saturated.
///
/// ```
/// use karpenter_core::resources::parse_milli;
///
/// assert_eq!(parse_milli("1.5").unwrap(), 1500);
/// assert_eq!(parse_milli("0.5Ki").unwrap(), 512_000);
/// assert_eq!(parse_milli("2.5e-3").unwrap(), 3);
/// assert!(parse_milli("1.2.3").is_err());
/// ```
pub fn parse_milli(s: &str) -> Result<i64, QuantityError> {
    parse(s).map_err(|kind| QuantityError::new(s, kind))
}

/// [`parse_milli`] for a k8s-openapi [`Quantity`].
///
/// ```
/// use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
/// use karpenter_core::resources::milli_value;
///
/// assert_eq!(milli_value(&Quantity("250m".into())).unwrap(), 250);
/// ```
pub fn milli_value(quantity: &Quantity) -> Result<i64, QuantityError> {
    parse_milli(&quantity.0)
}

/// How a suffix scales the number.
enum Scale {
    /// Multiply by ten to this power.
    Decimal(i64),
    /// Multiply by two to this power (at most 60).
    Binary(u32),
}

fn parse(s: &str) -> Result<i64, QuantityErrorKind> {
    if s.is_empty() {
        return Err(QuantityErrorKind::Empty);
    }
    let (negative, unsigned) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (whole, rest) = split_digits(unsigned);
    let (fraction, suffix) = match rest.strip_prefix('.') {
        Some(after_point) => split_digits(after_point),
        None => ("", rest),
    };
    if whole.is_empty() && fraction.is_empty() {
        return Err(match suffix.chars().next() {
            Some(ch) if !ch.is_ascii_alphabetic() => unexpected(s, suffix, ch),
            _ => QuantityErrorKind::MissingNumber,
        });
    }
    let scale = match suffix.chars().next() {
        // Only a suffix that starts like one is reported as a suffix; `1.2.3`
        // or `1 ` are malformed numbers, and saying so is more helpful.
        Some(ch) if !ch.is_ascii_alphabetic() => return Err(unexpected(s, suffix, ch)),
        _ => suffix_scale(suffix)?,
    };
    if fraction.is_empty()
        && let Some(milli) = whole_to_milli(negative, whole, &scale)
    {
        return Ok(milli);
    }
    to_milli(negative, whole, fraction, scale)
}

/// The common case of [`to_milli`] without its digit vector: a whole number
/// of at most 18 digits (`250m`, `2Gi`, `4`), scaled in checked `i128`.
/// `None` when the exponent or the result is beyond what this handles;
/// [`to_milli`] then decides, with the same rounding.
fn whole_to_milli(negative: bool, whole: &str, scale: &Scale) -> Option<i64> {
    if whole.len() > 18 {
        return None;
    }
    let mut value: i128 = 0;
    for d in whole.bytes() {
        value = value * 10 + i128::from(d - b'0');
    }
    let milli = match *scale {
        Scale::Binary(power) => value.checked_mul(1i128 << power)?.checked_mul(1000)?,
        Scale::Decimal(exponent) => {
            let shift = exponent.checked_add(3)?;
            if !(-18..=18).contains(&shift) {
                return None;
            }
            let factor = 10i128.pow(shift.unsigned_abs() as u32);
            if shift >= 0 {
                value.checked_mul(factor)?
            } else if negative {
                // Rounding towards +infinity drops a negative value's fraction.
                value / factor
            } else {
                (value + factor - 1) / factor
            }
        }
    };
    let milli = if negative { -milli } else { milli };
    // Out of range is the general path's error to give.
    i64::try_from(milli).ok()
}

/// The error for `ch`, the first character of the tail `rest` of `s`.
fn unexpected(s: &str, rest: &str, ch: char) -> QuantityErrorKind {
    QuantityErrorKind::UnexpectedChar {
        ch,
        at: s.len().saturating_sub(rest.len()),
    }
}

/// Splits off the leading ASCII digits.
fn split_digits(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s.split_at(end)
}

fn suffix_scale(suffix: &str) -> Result<Scale, QuantityErrorKind> {
    let scale = match suffix {
        "n" => Scale::Decimal(-9),
        "u" => Scale::Decimal(-6),
        "m" => Scale::Decimal(-3),
        "" => Scale::Decimal(0),
        "k" => Scale::Decimal(3),
        "M" => Scale::Decimal(6),
        "G" => Scale::Decimal(9),
        "T" => Scale::Decimal(12),
        "P" => Scale::Decimal(15),
        "E" => Scale::Decimal(18),
        "Ki" => Scale::Binary(10),
        "Mi" => Scale::Binary(20),
        "Gi" => Scale::Binary(30),
        "Ti" => Scale::Binary(40),
        "Pi" => Scale::Binary(50),
        "Ei" => Scale::Binary(60),
        _ => {
            // `E` alone is exa (matched above); `E3` or `e-3` is an exponent.
            let Some(exponent) = suffix.strip_prefix(['e', 'E']) else {
                return Err(QuantityErrorKind::UnknownSuffix(suffix.to_owned()));
            };
            // `i64::from_str` takes exactly an optional sign and ASCII digits.
            let exponent = exponent
                .parse::<i64>()
                .map_err(|_| QuantityErrorKind::InvalidExponent(suffix.to_owned()))?;
            Scale::Decimal(exponent)
        }
    };
    Ok(scale)
}

/// Scales `whole.fraction` by `scale`, to milli-units, rounding up.
fn to_milli(
    negative: bool,
    whole: &str,
    fraction: &str,
    scale: Scale,
) -> Result<i64, QuantityErrorKind> {
    // The significant digits of `whole.fraction` as one integer `digits`,
    // with the value being `digits * 10^-fraction.len()`.
    let mut digits: Vec<u8> = whole
        .bytes()
        .chain(fraction.bytes())
        .map(|b| b.wrapping_sub(b'0'))
        .skip_while(|&d| d == 0)
        .collect();
    if digits.is_empty() {
        // Zero whatever the suffix, even a huge exponent.
        return Ok(0);
    }
    // Lengths are bounded by memory, so i128 holds them and the exponent sum.
    let fraction_len = i128::try_from(fraction.len()).map_err(|_| QuantityErrorKind::OutOfRange)?;
    let decimal_exponent = match scale {
        Scale::Decimal(exponent) => i128::from(exponent),
        Scale::Binary(power) => {
            multiply_digits(&mut digits, 1u64 << power);
            0
        }
    };
    // milli = digits * 10^shift
    let shift = decimal_exponent + 3 - fraction_len;
    let len = i128::try_from(digits.len()).map_err(|_| QuantityErrorKind::OutOfRange)?;
    let kept = usize::try_from((len + shift).clamp(0, len)).unwrap_or(0);
    let (integer, dropped) = digits.split_at(kept.min(digits.len()));

    let mut magnitude: i128 = 0;
    for &d in integer {
        magnitude = magnitude
            .checked_mul(10)
            .and_then(|m| m.checked_add(i128::from(d)))
            .ok_or(QuantityErrorKind::OutOfRange)?;
    }
    // Trailing zeros: `magnitude` is at least 1 here (the digits start with a
    // non-zero one), so this ends in overflow within 39 rounds at most.
    let mut zeros = shift.max(0);
    while zeros > 0 {
        magnitude = magnitude
            .checked_mul(10)
            .ok_or(QuantityErrorKind::OutOfRange)?;
        zeros -= 1;
    }
    let has_fraction = dropped.iter().any(|&d| d != 0);
    let value = if negative {
        // Rounding towards +infinity drops the fraction of a negative value;
        // negating a non-negative i128 cannot overflow.
        Some(-magnitude)
    } else {
        // Checked: `magnitude` may be exactly i128::MAX.
        magnitude.checked_add(i128::from(has_fraction))
    };
    value
        .and_then(|v| i64::try_from(v).ok())
        .ok_or(QuantityErrorKind::OutOfRange)
}

/// Multiplies the big-endian decimal `digits` by `factor` in place.
fn multiply_digits(digits: &mut Vec<u8>, factor: u64) {
    let mut carry: u128 = 0;
    for d in digits.iter_mut().rev() {
        // At most 9 * 2^64 + carry: far inside u128.
        let product = u128::from(*d) * u128::from(factor) + carry;
        *d = (product % 10) as u8;
        carry = product / 10;
    }
    let mut head = Vec::new();
    while carry > 0 {
        head.push((carry % 10) as u8);
        carry /= 10;
    }
    digits.splice(0..0, head.into_iter().rev());
}

#[cfg(test)]
mod tests;
