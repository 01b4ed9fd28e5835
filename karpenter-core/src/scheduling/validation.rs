//! Validation of requirements as users write them, after upstream's
//! `ValidateRequirement` (`pkg/apis/v1/nodeclaim_validation.go`) and the
//! provisioner's pod checks (`validateNodeSelector`, `validateAffinity`).
//!
//! [`Requirement::new`] checks only the shape of a requirement; these checks
//! add what NodePools and pods must also respect: restricted labels, label
//! syntax and the known values of well-known labels.

use k8s_openapi::api::core::v1::PodSpec;

use super::error::RequirementError;
use super::labels::{WellKnownLabels, check_restricted_label, normalize_label_key};
use super::operator::Operator;
use super::requirement::{Integers, Requirement};
use super::requirements::required_node_affinity_terms;
use super::selector::SelectorRequirement;

const NAME_MAX: usize = 63;
const PREFIX_MAX: usize = 253;

/// Checks a key as Kubernetes' `IsQualifiedName`: an optional DNS-subdomain
/// prefix and `/`, then a name of at most 63 alphanumerics, `-`, `_` or `.`,
/// starting and ending with an alphanumeric.
///
/// ```
/// use karpenter_core::scheduling::validate_label_key;
/// assert!(validate_label_key("example.com/team").is_ok());
/// assert!(validate_label_key("Example.com/team").is_err());
/// assert!(validate_label_key("a/b/c").is_err());
/// ```
pub fn validate_label_key(key: &str) -> Result<(), RequirementError> {
    let invalid = |reason| RequirementError::InvalidLabelKey {
        key: key.to_owned(),
        reason,
    };
    let name = match key.split_once('/') {
        Some((prefix, name)) => {
            if prefix.is_empty() {
                return Err(invalid("prefix part must be non-empty"));
            }
            if let Some(reason) = dns_subdomain_problem(prefix) {
                return Err(invalid(reason));
            }
            if name.contains('/') {
                return Err(invalid("a qualified name may contain at most one '/'"));
            }
            name
        }
        None => key,
    };
    if name.is_empty() {
        return Err(invalid("name part must be non-empty"));
    }
    if let Some(reason) = name_problem(name) {
        return Err(invalid(reason));
    }
    Ok(())
}

/// Checks a value as Kubernetes' `IsValidLabelValue`: empty, or a name as in
/// [`validate_label_key`].
pub fn validate_label_value(key: &str, value: &str) -> Result<(), RequirementError> {
    match name_problem(value).filter(|_| !value.is_empty()) {
        Some(reason) => Err(RequirementError::InvalidLabelValue {
            key: key.to_owned(),
            value: value.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

fn name_problem(name: &str) -> Option<&'static str> {
    let bytes = name.as_bytes();
    if bytes.len() > NAME_MAX {
        return Some("must be no more than 63 characters");
    }
    let inner_ok = bytes
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    let ends_ok = bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric);
    (!(inner_ok && ends_ok)).then_some(
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    )
}

fn dns_subdomain_problem(prefix: &str) -> Option<&'static str> {
    if prefix.len() > PREFIX_MAX {
        return Some("prefix part must be no more than 253 characters");
    }
    let label_ok = |label: &str| {
        let bytes = label.as_bytes();
        let lower_alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        bytes.first().is_some_and(lower_alnum)
            && bytes.last().is_some_and(lower_alnum)
            && bytes.iter().all(|b| lower_alnum(b) || *b == b'-')
    };
    (!prefix.split('.').all(label_ok)).then_some(
        "prefix part must be a lowercase RFC 1123 subdomain of alphanumerics, '-' and '.', starting and ending with an alphanumeric",
    )
}

/// Validates a NodePool or NodeClaim requirement as upstream's
/// `ValidateRequirement` does, returning the first problem: a restricted
/// label, an `In` naming none of a well-known label's known values (or fewer
/// than `minValues` of them), an invalid key or value, or a malformed shape
/// (see [`Requirement::new`]). Key aliases are normalised first.
pub fn validate_requirement(
    requirement: &SelectorRequirement,
    well_known: &WellKnownLabels,
) -> Result<(), RequirementError> {
    let key = normalize_label_key(&requirement.key);
    check_restricted_label(key, well_known)?;
    check_known_values(key, requirement, well_known)?;
    validate_label_key(key)?;
    for value in &requirement.values {
        validate_label_value(key, value)?;
    }
    Requirement::build(
        key,
        requirement.operator,
        &requirement.values,
        requirement.min_values,
        Integers::NonNegative,
    )
    .map(drop)
}

fn check_known_values(
    key: &str,
    requirement: &SelectorRequirement,
    well_known: &WellKnownLabels,
) -> Result<(), RequirementError> {
    if requirement.operator != Operator::In || !well_known.contains(key) {
        return Ok(());
    }
    let Some(known) = well_known.known_values(key) else {
        return Ok(());
    };
    let valid = requirement
        .values
        .iter()
        .filter(|v| known.binary_search(v).is_ok())
        .count();
    let needed = requirement.min_values.unwrap_or(1);
    if valid == 0 || valid < needed as usize {
        return Err(RequirementError::UnknownValues {
            key: key.to_owned(),
            values: requirement.values.clone(),
            needed,
            expected: known.to_vec(),
        });
    }
    Ok(())
}

/// Validates what the provisioner checks before scheduling a pod: each
/// `nodeSelector` entry as `In [value]`, and every required node-affinity
/// term (no `matchFields`, each expression as in [`validate_requirement`]).
/// Upstream ignores pods that fail.
pub fn validate_pod_spec(
    spec: &PodSpec,
    well_known: &WellKnownLabels,
) -> Result<(), RequirementError> {
    for (key, value) in spec.node_selector.iter().flatten() {
        let requirement = SelectorRequirement {
            key: key.clone(),
            operator: Operator::In,
            values: vec![value.clone()],
            min_values: None,
        };
        validate_requirement(&requirement, well_known)?;
    }
    let terms = required_node_affinity_terms(spec);
    for term in terms {
        if term
            .match_fields
            .as_ref()
            .is_some_and(|fields| !fields.is_empty())
        {
            return Err(RequirementError::MatchFieldsUnsupported);
        }
        for expression in term.match_expressions.iter().flatten() {
            let requirement = SelectorRequirement::from_node_selector_requirement(expression)?;
            validate_requirement(&requirement, well_known)?;
        }
    }
    Ok(())
}
