//! Reading each setting and saying what is wrong with it, never repeating
//! the value.

use std::time::Duration;

use base64::Engine as _;

use super::{
    AwsFeatureGates, AwsSettings, MIN_REFRESH_INTERVAL, SETTINGS, SettingProblem, SettingsError,
};
use crate::instancetype::DEFAULT_VM_MEMORY_OVERHEAD_PERCENT;

/// Collects values and problems while the settings are read.
struct Reader<'a> {
    lookup: &'a dyn Fn(&str) -> Option<String>,
    problems: Vec<SettingProblem>,
}

impl Reader<'_> {
    /// The value of `variable` (or its first set alias), trimmed; empty is
    /// unset.
    fn get(&self, variable: &str) -> Option<String> {
        let setting = SETTINGS.iter().find(|s| s.variable == variable)?;
        std::iter::once(setting.variable)
            .chain(setting.aliases.iter().copied())
            .find_map(|name| {
                (self.lookup)(name)
                    .map(|v| v.trim().to_owned())
                    .filter(|v| !v.is_empty())
            })
    }

    fn problem(&mut self, variable: &str, message: impl Into<String>) {
        let Some(setting) = SETTINGS.iter().find(|s| s.variable == variable) else {
            return;
        };
        self.problems.push(SettingProblem {
            variable: setting.variable,
            flag: setting.flag,
            message: message.into(),
        });
    }

    /// An optional value checked by `check` (which says what is wrong).
    fn checked<T>(
        &mut self,
        variable: &str,
        check: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        let value = self.get(variable)?;
        check(&value)
            .map_err(|message| self.problem(variable, message))
            .ok()
    }

    /// A flag-like boolean, false when unset.
    fn flag(&mut self, variable: &str) -> bool {
        self.checked(variable, go_bool).unwrap_or(false)
    }

    /// A refresh interval: a Go duration of at least a minute, a minute
    /// when unset.
    fn interval(&mut self, variable: &str) -> Duration {
        self.checked(variable, |text| {
            let interval = go_duration(text)?;
            if interval < MIN_REFRESH_INTERVAL {
                Err("must be at least 1m".to_owned())
            } else {
                Ok(interval)
            }
        })
        .unwrap_or(MIN_REFRESH_INTERVAL)
    }
}

/// A boolean as Go's `strconv.ParseBool` reads one (which upstream's flags
/// and environment use).
pub(super) fn go_bool(text: &str) -> Result<bool, String> {
    match text {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err("is not a boolean (true or false)".to_owned()),
    }
}

/// Nanoseconds per unit of a Go duration.
fn unit_nanos(unit: &str) -> Option<u128> {
    Some(match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// A duration in Go's `time.ParseDuration` syntax (`90s`, `1m30s`,
/// `1.5h`, `0`), negative ones refused since no interval can be negative.
pub(super) fn go_duration(text: &str) -> Result<Duration, String> {
    const SYNTAX: &str = "is not a Go duration such as `90s`, `1m30s` or `1h`";
    let unsigned = text.strip_prefix('+').unwrap_or(text);
    if unsigned.starts_with('-') {
        return Err("must not be negative".to_owned());
    }
    if unsigned == "0" {
        return Ok(Duration::ZERO);
    }
    if unsigned.is_empty() {
        return Err(SYNTAX.to_owned());
    }
    let mut rest = unsigned;
    let mut nanos: u128 = 0;
    while !rest.is_empty() {
        let digits_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("{SYNTAX} (a number without a unit)"))?;
        let (number, after) = rest.split_at(digits_end);
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_end);
        let per_unit = unit_nanos(unit).ok_or_else(|| SYNTAX.to_owned())?;
        nanos = nanos.saturating_add(scaled(number, per_unit).ok_or_else(|| SYNTAX.to_owned())?);
        rest = next;
    }
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| "is too long".to_owned())?;
    // The remainder is below 10^9, so it fits.
    let sub = u32::try_from(nanos % 1_000_000_000).unwrap_or(0);
    Ok(Duration::new(secs, sub))
}

/// `number` (digits, at most one `.`, not empty on both sides) times
/// `per_unit` nanoseconds, truncated to a whole nanosecond as Go does.
fn scaled(number: &str, per_unit: u128) -> Option<u128> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
        return None;
    }
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut total = whole.checked_mul(per_unit)?;
    // Each fractional digit is worth a tenth of the one before; digits
    // past nanosecond precision add nothing.
    let mut place = per_unit;
    for digit in fraction.bytes() {
        place /= 10;
        total = total.checked_add(u128::from(digit - b'0') * place)?;
    }
    Some(total)
}

/// Whether `endpoint` is an absolute https URL with a host, as nodes need
/// to reach the API server over TLS.
fn https_endpoint(endpoint: &str) -> Result<String, String> {
    const WANT: &str = "is not an absolute https URL with a host (`https://<host>[:port]`)";
    let scheme_end = endpoint.find("://").ok_or_else(|| WANT.to_owned())?;
    if !endpoint[..scheme_end].eq_ignore_ascii_case("https") {
        return Err(WANT.to_owned());
    }
    let after = &endpoint[scheme_end + 3..];
    let authority = after.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = if let Some(bracketed) = host_port.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    if host.is_empty() || endpoint.chars().any(char::is_whitespace) {
        return Err(WANT.to_owned());
    }
    Ok(endpoint.to_owned())
}

/// Whether `bundle` is standard base64 (what nodes' user data carries).
fn base64_bundle(bundle: &str) -> Result<String, String> {
    use base64::DecodeError;
    base64::engine::general_purpose::STANDARD
        .decode(bundle)
        .map(|_| bundle.to_owned())
        .map_err(|e| match e {
            DecodeError::InvalidByte(at, _) | DecodeError::InvalidLastSymbol { offset: at, .. } => {
                format!("is not base64 (a bad character at offset {at})")
            }
            DecodeError::InvalidLength(_) => "is not base64 (a length it cannot have)".to_owned(),
            DecodeError::InvalidPadding => "is not base64 (bad padding)".to_owned(),
        })
}

fn overhead(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(v) if v < 0.0 => Err("cannot be negative".to_owned()),
        _ => Err("is not a number at least 0".to_owned()),
    }
}

fn reserved_enis(text: &str) -> Result<u32, String> {
    match text.parse::<i64>() {
        Ok(n) if n < 0 => Err("cannot be negative".to_owned()),
        Ok(n) => u32::try_from(n).map_err(|_| "is too large".to_owned()),
        Err(_) => Err("is not a whole number".to_owned()),
    }
}

/// Feature gates as upstream's `MapStringBool` reads them: `Name=bool`
/// pairs split on commas, blanks skipped, unknown names ignored.
pub(super) fn feature_gates(text: &str) -> Result<AwsFeatureGates, String> {
    let mut gates = AwsFeatureGates::default();
    for (index, pair) in text.split(',').map(str::trim).enumerate() {
        if pair.is_empty() {
            continue;
        }
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("pair {} is not `Name=bool`", index + 1))?;
        let name = name.trim();
        let enabled = go_bool(value.trim()).map_err(|_| {
            format!(
                "pair {} (`{name}`) has a value that is not a boolean",
                index + 1
            )
        })?;
        if name == "NodeClassCEL" {
            gates.node_class_cel = enabled;
        }
    }
    Ok(gates)
}

/// Reads every setting, collecting every problem.
pub(super) fn read(lookup: &dyn Fn(&str) -> Option<String>) -> Result<AwsSettings, SettingsError> {
    let mut r = Reader {
        lookup,
        problems: Vec::new(),
    };
    let cluster_name = r.get("CLUSTER_NAME").unwrap_or_else(|| {
        r.problem("CLUSTER_NAME", "is required");
        String::new()
    });
    let settings = AwsSettings {
        cluster_name,
        cluster_endpoint: r.checked("CLUSTER_ENDPOINT", https_endpoint),
        cluster_ca_bundle: r.checked("CLUSTER_CA_BUNDLE", base64_bundle),
        isolated_vpc: r.flag("ISOLATED_VPC"),
        eks_control_plane: r.flag("EKS_CONTROL_PLANE"),
        vm_memory_overhead_percent: r
            .checked("VM_MEMORY_OVERHEAD_PERCENT", overhead)
            .unwrap_or(DEFAULT_VM_MEMORY_OVERHEAD_PERCENT),
        interruption_queue: r.get("INTERRUPTION_QUEUE"),
        reserved_enis: r.checked("RESERVED_ENIS", reserved_enis).unwrap_or(0),
        disable_dry_run: r.flag("DISABLE_DRY_RUN"),
        enable_zonal_shift: r.flag("ENABLE_ZONAL_SHIFT"),
        ami_refresh_interval: r.interval("AMI_REFRESH_INTERVAL"),
        subnet_refresh_interval: r.interval("SUBNET_REFRESH_INTERVAL"),
        feature_gates: r
            .checked("AWS_FEATURE_GATES", feature_gates)
            .unwrap_or_default(),
        region: r.get("AWS_REGION"),
    };
    if r.problems.is_empty() {
        Ok(settings)
    } else {
        let order = |p: &SettingProblem| SETTINGS.iter().position(|s| s.variable == p.variable);
        r.problems.sort_by_key(order);
        Err(SettingsError {
            problems: r.problems,
        })
    }
}
