//! The CRD's validation rules (OpenAPI markers and `x-kubernetes-validations`
//! of `karpenter.k8s.aws_ec2nodeclasses.yaml` at upstream main 1d92708), and
//! the kubelet rules upstream's controller checks (reported there as
//! `ValidationSucceeded=False`, since `spec.kubelet` is an open map the API
//! server does not check).
//!
//! Every problem is listed, not only the first, as the API server lists
//! every failed rule of an object.

mod kubelet;
mod objects;
mod terms;

#[cfg(test)]
mod tests;

use std::fmt;

use super::EC2NodeClass;

/// One rule an EC2NodeClass's spec breaks, naming the field (a path under
/// `spec`, e.g. `amiSelectorTerms[0].alias`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// A required field is absent or empty.
    #[error("spec.{field}: required: {message}")]
    Required {
        /// The field.
        field: String,
        /// The CRD's message.
        message: &'static str,
    },
    /// A value outside the field's enumeration.
    #[error("spec.{field}: {value:?} is not one of {}", .allowed.join(", "))]
    NotSupported {
        /// The field.
        field: String,
        /// The value given.
        value: String,
        /// The values the CRD allows.
        allowed: &'static [&'static str],
    },
    /// A number outside the field's bounds.
    #[error("spec.{field}: {value} is not within {min} to {max}")]
    OutOfRange {
        /// The field.
        field: String,
        /// The value given.
        value: i64,
        /// The least allowed.
        min: i64,
        /// The most allowed.
        max: i64,
    },
    /// A string not matching the field's pattern.
    #[error("spec.{field}: {value:?} does not match {pattern}")]
    Pattern {
        /// The field.
        field: String,
        /// The value given.
        value: String,
        /// The CRD's pattern.
        pattern: &'static str,
    },
    /// A list or map with more entries than the CRD allows.
    #[error("spec.{field}: {count} entries, at most {max} allowed")]
    TooMany {
        /// The field.
        field: String,
        /// How many were given.
        count: usize,
        /// The most allowed.
        max: usize,
    },
    /// A broken `x-kubernetes-validations` rule, with the CRD's message (or,
    /// for the kubelet, upstream's controller's).
    #[error("spec.{field}: {message}")]
    Rule {
        /// The field.
        field: String,
        /// What is wrong.
        message: String,
    },
}

impl Problem {
    /// The field at fault, under `spec`.
    pub fn field(&self) -> &str {
        match self {
            Problem::Required { field, .. }
            | Problem::NotSupported { field, .. }
            | Problem::OutOfRange { field, .. }
            | Problem::Pattern { field, .. }
            | Problem::TooMany { field, .. }
            | Problem::Rule { field, .. } => field,
        }
    }
}

/// An EC2NodeClass that breaks its CRD's rules, with every problem found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("EC2NodeClass {name:?} is invalid: {}", Listed(.problems))]
pub struct InvalidNodeClass {
    /// The node class's name (empty when unnamed).
    pub name: String,
    /// What is wrong, in the spec's field order; never empty.
    pub problems: Vec<Problem>,
}

/// Problems joined by `; ` for one line of error.
struct Listed<'a>(&'a [Problem]);

impl fmt::Display for Listed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl EC2NodeClass {
    /// Checks the spec against the CRD's rules and the kubelet rules of
    /// upstream's validation controller; every problem is listed.
    pub fn validate(&self) -> Result<(), InvalidNodeClass> {
        let mut problems = Problems::default();
        let spec = &self.spec;
        terms::subnet_terms(&mut problems, &spec.subnet_selector_terms);
        terms::security_group_terms(&mut problems, &spec.security_group_selector_terms);
        if let Some(reservations) = &spec.capacity_reservation_selector_terms {
            terms::capacity_reservation_terms(&mut problems, reservations);
        }
        terms::ami_terms(&mut problems, &spec.ami_selector_terms);
        objects::ami_family(&mut problems, spec);
        objects::role_and_profile(&mut problems, spec);
        objects::tags(&mut problems, spec.tags.as_ref());
        objects::block_devices(&mut problems, spec.block_device_mappings.as_deref());
        objects::scalars(&mut problems, spec);
        objects::network(&mut problems, spec);
        if let Some(kubelet) = &spec.kubelet {
            kubelet::kubelet(&mut problems, kubelet);
        }
        if problems.0.is_empty() {
            return Ok(());
        }
        Err(InvalidNodeClass {
            name: self.name().unwrap_or_default().to_owned(),
            problems: problems.0,
        })
    }
}

/// The problems found so far.
#[derive(Default)]
pub(crate) struct Problems(Vec<Problem>);

impl Problems {
    fn rule(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(Problem::Rule {
            field: field.into(),
            message: message.into(),
        });
    }

    fn required(&mut self, field: impl Into<String>, message: &'static str) {
        self.0.push(Problem::Required {
            field: field.into(),
            message,
        });
    }

    /// Reports `value` unless it is one of `allowed`.
    fn one_of(&mut self, field: impl Into<String>, value: &str, allowed: &'static [&'static str]) {
        if !allowed.contains(&value) {
            self.0.push(Problem::NotSupported {
                field: field.into(),
                value: value.to_owned(),
                allowed,
            });
        }
    }

    /// Reports `value` unless it is within `min..=max`.
    fn within(&mut self, field: impl Into<String>, value: i64, min: i64, max: i64) {
        if !(min..=max).contains(&value) {
            self.0.push(Problem::OutOfRange {
                field: field.into(),
                value,
                min,
                max,
            });
        }
    }

    /// Reports `value` unless `matches` accepts it.
    fn pattern(
        &mut self,
        field: impl Into<String>,
        value: &str,
        pattern: &'static str,
        matches: bool,
    ) {
        if !matches {
            self.0.push(Problem::Pattern {
                field: field.into(),
                value: value.to_owned(),
                pattern,
            });
        }
    }

    /// Reports a list or map over `max` entries.
    fn at_most(&mut self, field: impl Into<String>, count: usize, max: usize) {
        if count > max {
            self.0.push(Problem::TooMany {
                field: field.into(),
                count,
                max,
            });
        }
    }
}

/// Whether `value` holds `prefix` followed by at least one lowercase letter
/// or digit somewhere: an unanchored OpenAPI pattern such as
/// `subnet-[0-9a-z]+`.
fn contains_id(value: &str, prefix: &str) -> bool {
    value.match_indices(prefix).any(|(at, _)| {
        value[at + prefix.len()..]
            .chars()
            .next()
            .is_some_and(is_id_char)
    })
}

/// Whether `value` is exactly `prefix` and one or more lowercase letters or
/// digits: an anchored pattern such as `^cr-[0-9a-z]+$`.
fn is_id(value: &str, prefix: &str) -> bool {
    value
        .strip_prefix(prefix)
        .is_some_and(|rest| !rest.is_empty() && rest.chars().all(is_id_char))
}

fn is_id_char(c: char) -> bool {
    c.is_ascii_digit() || c.is_ascii_lowercase()
}
