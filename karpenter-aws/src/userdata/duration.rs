//! Go durations (`1m30s`) read and printed as Go's `time.Duration` does:
//! upstream parses `evictionSoftGracePeriod` and prints it back, so `90s`
//! reaches the kubelet as `1m30s`.

const NANOS_PER_SECOND: i128 = 1_000_000_000;

/// `text` as Go would print it after parsing, or `None` when it is not a Go
/// duration.
pub(crate) fn normalise(text: &str) -> Option<String> {
    parse(text).map(format)
}

/// Nanoseconds of a Go duration string (`-1.5h30m`, `0`, `250ms`).
fn parse(text: &str) -> Option<i128> {
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let digits_end = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(digits_end);
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        let nanos_per_unit: i128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => NANOS_PER_SECOND,
            "m" => 60 * NANOS_PER_SECOND,
            "h" => 3_600 * NANOS_PER_SECOND,
            _ => return None,
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() {
            return None;
        }
        let whole: i128 = if whole.is_empty() {
            0
        } else {
            whole.parse().ok()?
        };
        // Digits beyond 18 cannot change a nanosecond count; dropping them
        // keeps the arithmetic within i128.
        let fraction = &fraction[..fraction.len().min(18)];
        let scale = 10_i128.pow(u32::try_from(fraction.len()).ok()?);
        let fraction: i128 = if fraction.is_empty() {
            0
        } else {
            fraction.parse().ok()?
        };
        let part = whole
            .checked_mul(nanos_per_unit)?
            .checked_add(fraction * nanos_per_unit / scale)?;
        total = total.checked_add(part)?;
        rest = after;
    }
    Some(if negative { -total } else { total })
}

/// Go's `Duration.String`: `0s`, `1.5ms`, `1m30s`, `2h0m0s`.
fn format(nanos: i128) -> String {
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.abs();
    let body = if n == 0 {
        "0s".to_owned()
    } else if n < 1_000 {
        format!("{n}ns")
    } else if n < 1_000_000 {
        format!("{}µs", decimal(n, 1_000))
    } else if n < NANOS_PER_SECOND {
        format!("{}ms", decimal(n, 1_000_000))
    } else {
        let hours = n / (3_600 * NANOS_PER_SECOND);
        let minutes = n / (60 * NANOS_PER_SECOND) % 60;
        let seconds = decimal(n % (60 * NANOS_PER_SECOND), NANOS_PER_SECOND);
        match (hours, minutes) {
            (0, 0) => format!("{seconds}s"),
            (0, m) => format!("{m}m{seconds}s"),
            (h, m) => format!("{h}h{m}m{seconds}s"),
        }
    };
    format!("{sign}{body}")
}

/// `value / unit` in decimal, trailing zeros of the fraction dropped.
fn decimal(value: i128, unit: i128) -> String {
    let whole = value / unit;
    let fraction = value % unit;
    if fraction == 0 {
        return whole.to_string();
    }
    let width = unit.to_string().len() - 1;
    let digits = format!("{fraction:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::normalise;

    #[test]
    fn prints_as_go_does() {
        let cases = [
            ("90s", "1m30s"),
            ("1m", "1m0s"),
            ("2h", "2h0m0s"),
            ("1.5s", "1.5s"),
            ("1h30m", "1h30m0s"),
            ("250ms", "250ms"),
            ("1500us", "1.5ms"),
            ("0", "0s"),
            ("-30s", "-30s"),
            (".5m", "30s"),
        ];
        for (input, expected) in cases {
            assert_eq!(normalise(input).as_deref(), Some(expected), "{input}");
        }
        for bad in ["", "1", "1d", "s", "1.s.", "-", "1m-"] {
            assert_eq!(normalise(bad), None, "{bad}");
        }
    }
}
