//! The Prometheus text exposition format (version 0.0.4): escaping, numbers,
//! and the lines of a family.

/// Appends `help` escaped for a `# HELP` line: a backslash and a line feed.
pub(super) fn push_help_escaped(out: &mut String, help: &str) {
    for c in help.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// Appends `value` escaped for a label value: a backslash, a double quote
/// and a line feed.
pub(super) fn push_label_value_escaped(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// Appends a sample value or a bucket bound: `+Inf`, `-Inf` and `NaN` as the
/// format spells them, integers without a fraction (`3`, not `3.0`).
pub(super) fn push_number(out: &mut String, value: f64) {
    if value.is_nan() {
        out.push_str("NaN");
    } else if value == f64::INFINITY {
        out.push_str("+Inf");
    } else if value == f64::NEG_INFINITY {
        out.push_str("-Inf");
    } else {
        out.push_str(&value.to_string());
    }
}

/// Appends the `# HELP` and `# TYPE` lines of a family.
pub(super) fn push_header(out: &mut String, name: &str, help: &str, kind: &str) {
    out.push_str("# HELP ");
    out.push_str(name);
    out.push(' ');
    push_help_escaped(out, help);
    out.push_str("\n# TYPE ");
    out.push_str(name);
    out.push(' ');
    out.push_str(kind);
    out.push('\n');
}

/// One sample line: `name{label="value",...} value`. `extra` is a last label
/// (a histogram bucket's `le`); the braces are left out when there is no label.
pub(super) fn push_sample(
    out: &mut String,
    name: &str,
    labels: &[(&str, &str)],
    extra: Option<(&str, &str)>,
    value: f64,
) {
    out.push_str(name);
    let mut pairs = labels.iter().copied().chain(extra).peekable();
    if pairs.peek().is_some() {
        out.push('{');
        for (i, (label, label_value)) in pairs.enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(label);
            out.push_str("=\"");
            push_label_value_escaped(out, label_value);
            out.push('"');
        }
        out.push('}');
    }
    out.push(' ');
    push_number(out, value);
    out.push('\n');
}

/// Whether `name` is a valid metric name: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
pub(super) fn is_metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// Whether `name` is a valid label name: `[a-zA-Z_][a-zA-Z0-9_]*`, not
/// starting with the reserved `__`.
pub(super) fn is_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    !name.starts_with("__")
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_the_format() {
        let cases = [
            (0.0, "0"),
            (3.0, "3"),
            (0.005, "0.005"),
            (2.5, "2.5"),
            (-1.0, "-1"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (f64::NAN, "NaN"),
        ];
        for (value, text) in cases {
            let mut out = String::new();
            push_number(&mut out, value);
            assert_eq!(out, text, "{value}");
        }
    }

    #[test]
    fn label_values_and_help_are_escaped() {
        let mut out = String::new();
        push_label_value_escaped(&mut out, "a\\b\"c\nd");
        assert_eq!(out, r#"a\\b\"c\nd"#);
        let mut out = String::new();
        push_help_escaped(&mut out, "a\\b\"c\nd");
        assert_eq!(out, r#"a\\b"c\nd"#);
    }

    #[test]
    fn samples_without_labels_have_no_braces() {
        let mut out = String::new();
        push_sample(&mut out, "up", &[], None, 1.0);
        push_sample(
            &mut out,
            "x",
            &[("a", "1"), ("b", "2")],
            Some(("le", "+Inf")),
            4.0,
        );
        assert_eq!(out, "up 1\nx{a=\"1\",b=\"2\",le=\"+Inf\"} 4\n");
    }

    #[test]
    fn names_are_checked() {
        assert!(is_metric_name("karpenter_nodes:total"));
        assert!(!is_metric_name(""));
        assert!(!is_metric_name("1abc"));
        assert!(!is_metric_name("a-b"));
        assert!(is_label_name("nodepool"));
        assert!(!is_label_name("__name"));
        assert!(!is_label_name("a:b"));
        assert!(!is_label_name(""));
    }
}
