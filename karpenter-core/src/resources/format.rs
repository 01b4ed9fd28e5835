//! Writing milli-unit values back out, for Kubernetes and for people.
//!
//! Every string produced here parses back, with
//! [`parse_milli`](super::parse_milli), to exactly the value it came from.

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// Decimal SI suffixes above milli, each a thousand times the previous.
const DECIMAL_SUFFIXES: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];

/// Binary suffixes from the largest down, with their power of two.
const BINARY_SUFFIXES: [(&str, u32); 6] = [
    ("Ei", 60),
    ("Pi", 50),
    ("Ti", 40),
    ("Gi", 30),
    ("Mi", 20),
    ("Ki", 10),
];

/// Writes `milli` as a canonical Kubernetes quantity in decimal SI form: the
/// largest suffix that keeps the number whole, as Kubernetes canonicalises a
/// `DecimalSI` quantity.
///
/// ```
/// use karpenter_core::resources::format_quantity;
///
/// assert_eq!(format_quantity(1500), "1500m");
/// assert_eq!(format_quantity(2000), "2");
/// assert_eq!(format_quantity(1_500_000), "1500");
/// assert_eq!(format_quantity(3_000_000_000), "3M");
/// assert_eq!(format_quantity(0), "0");
/// ```
pub fn format_quantity(milli: i64) -> String {
    let sign = if milli < 0 { "-" } else { "" };
    // unsigned_abs keeps i64::MIN representable.
    let mut magnitude = milli.unsigned_abs();
    if magnitude == 0 {
        return "0".to_owned();
    }
    let mut suffix = "m";
    for larger in DECIMAL_SUFFIXES {
        if !magnitude.is_multiple_of(1000) {
            break;
        }
        magnitude /= 1000;
        suffix = larger;
    }
    format!("{sign}{magnitude}{suffix}")
}

/// [`format_quantity`] wrapped as a k8s-openapi [`Quantity`].
///
/// ```
/// use karpenter_core::resources::to_quantity;
///
/// assert_eq!(to_quantity(250).0, "250m");
/// ```
pub fn to_quantity(milli: i64) -> Quantity {
    Quantity(format_quantity(milli))
}

/// Whether `resource` is counted in bytes, and so reads best in binary units.
pub(crate) fn is_byte_resource(resource: &str) -> bool {
    matches!(resource, "memory" | "ephemeral-storage" | "storage")
        || resource.starts_with("hugepages-")
}

/// Writes `milli` of `resource` the way a person reads it, for messages.
///
/// Byte resources (`memory`, `ephemeral-storage`, `storage`, `hugepages-*`)
/// use the largest binary unit that divides the value exactly (`2Gi`,
/// `1536Mi`) and plain bytes otherwise; everything else, `cpu` included, is
/// a whole number when it is one and milli-units (`500m`) when not. The
/// result is still a valid quantity with exactly the same value.
///
/// ```
/// use karpenter_core::resources::format_milli;
///
/// assert_eq!(format_milli("cpu", 500), "500m");
/// assert_eq!(format_milli("cpu", 2000), "2");
/// assert_eq!(format_milli("memory", 2 * 1024 * 1024 * 1024 * 1000), "2Gi");
/// assert_eq!(format_milli("memory", 1536 * 1024 * 1024 * 1000), "1536Mi");
/// assert_eq!(format_milli("memory", 1_000_000), "1000");
/// assert_eq!(format_milli("nvidia.com/gpu", 4000), "4");
/// ```
pub fn format_milli(resource: &str, milli: i64) -> String {
    let sign = if milli < 0 { "-" } else { "" };
    let magnitude = milli.unsigned_abs();
    if !magnitude.is_multiple_of(1000) {
        // Fractions (of a core, of a byte) only have the milli form.
        return format!("{sign}{magnitude}m");
    }
    let whole = magnitude / 1000;
    if whole != 0 && is_byte_resource(resource) {
        for (suffix, power) in BINARY_SUFFIXES {
            if whole.trailing_zeros() >= power {
                return format!("{sign}{}{suffix}", whole >> power);
            }
        }
    }
    format!("{sign}{whole}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::parse_milli;
    use proptest::prelude::*;

    #[test]
    fn canonical_decimal_form() {
        assert_eq!(format_quantity(1), "1m");
        assert_eq!(format_quantity(-1500), "-1500m");
        assert_eq!(format_quantity(1000), "1");
        assert_eq!(format_quantity(1_000_000), "1k");
        assert_eq!(format_quantity(2_147_483_648_000), "2147483648");
        assert_eq!(format_quantity(1_000_000_000_000_000_000), "1P");
        assert_eq!(format_quantity(i64::MAX), "9223372036854775807m");
        assert_eq!(format_quantity(i64::MIN), "-9223372036854775808m");
    }

    #[test]
    fn human_form() {
        assert_eq!(format_milli("cpu", 0), "0");
        assert_eq!(format_milli("cpu", 1500), "1500m");
        assert_eq!(format_milli("cpu", -2000), "-2");
        assert_eq!(format_milli("memory", 0), "0");
        assert_eq!(format_milli("memory", 1_024_000), "1Ki");
        assert_eq!(format_milli("memory", -1_024_000), "-1Ki");
        assert_eq!(format_milli("memory", 1500), "1500m");
        assert_eq!(
            format_milli("ephemeral-storage", 20 * (1 << 30) * 1000),
            "20Gi"
        );
        assert_eq!(format_milli("hugepages-2Mi", 4 * (1 << 21) * 1000), "8Mi");
        assert_eq!(format_milli("pods", 110_000), "110");
    }

    proptest! {
        #[test]
        fn canonical_form_round_trips(milli in any::<i64>()) {
            prop_assert_eq!(parse_milli(&format_quantity(milli)), Ok(milli));
        }

        #[test]
        fn human_form_round_trips(
            milli in prop_oneof![
                any::<i64>(),
                // Whole bytes with many trailing binary zeros, to reach the Ki..Ei forms.
                (any::<i16>(), 0u32..=47).prop_map(|(m, p)| (i64::from(m) << p).saturating_mul(1000)),
            ],
            resource in prop_oneof![Just("cpu"), Just("memory"), Just("hugepages-1Gi"), Just("example.com/foo")],
        ) {
            prop_assert_eq!(parse_milli(&format_milli(resource, milli)), Ok(milli));
        }
    }
}
