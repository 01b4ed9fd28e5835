//! The selector terms' rules: subnets, security groups, capacity
//! reservations, images.
//!
//! The CRD's exclusivity rules for subnet, security-group and
//! capacity-reservation terms are written `!self.all(x, ...)`: they reject a
//! list only when *every* term mixes `id` with other fields. That is what the
//! API server admits, so it is what is checked here; the image terms' rules
//! (`!self.exists(...)`) reject any single mixed term.

use super::super::spec::{
    AmiSelectorTerm, CapacityReservationSelectorTerm, SecurityGroupSelectorTerm,
    SubnetSelectorTerm, Tags,
};
use super::{Problems, contains_id, is_id};

/// The most terms a selector list may hold.
const MAX_TERMS: usize = 30;
/// The most tags a term may select on.
const MAX_TERM_TAGS: usize = 20;

/// The alias families the CRD knows.
const ALIAS_FAMILIES: [&str; 6] = [
    "al2",
    "al2023",
    "bottlerocket",
    "windows2019",
    "windows2022",
    "windows2025",
];

/// A term's `tags`: at most 20, no empty key or value.
fn term_tags(problems: &mut Problems, field: String, tags: Option<&Tags>) {
    let Some(tags) = tags else { return };
    problems.at_most(field.clone(), tags.len(), MAX_TERM_TAGS);
    if tags.iter().any(|(k, v)| k.is_empty() || v.is_empty()) {
        problems.rule(field, "empty tag keys or values aren't supported");
    }
}

pub(super) fn subnet_terms(problems: &mut Problems, terms: &[SubnetSelectorTerm]) {
    const FIELD: &str = "subnetSelectorTerms";
    if terms.is_empty() {
        problems.required(FIELD, "subnetSelectorTerms cannot be empty");
    }
    problems.at_most(FIELD, terms.len(), MAX_TERMS);
    if terms.iter().any(|t| t.tags.is_none() && t.id.is_none()) {
        problems.rule(FIELD, "expected at least one, got none, ['tags', 'id']");
    }
    if !terms.is_empty() && terms.iter().all(|t| t.id.is_some() && t.tags.is_some()) {
        problems.rule(
            FIELD,
            "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term",
        );
    }
    for (i, term) in terms.iter().enumerate() {
        if let Some(id) = &term.id {
            let matches = contains_id(id, "subnet-");
            problems.pattern(format!("{FIELD}[{i}].id"), id, "subnet-[0-9a-z]+", matches);
        }
        term_tags(problems, format!("{FIELD}[{i}].tags"), term.tags.as_ref());
    }
}

pub(super) fn security_group_terms(problems: &mut Problems, terms: &[SecurityGroupSelectorTerm]) {
    const FIELD: &str = "securityGroupSelectorTerms";
    if terms.is_empty() {
        problems.required(FIELD, "securityGroupSelectorTerms cannot be empty");
    }
    problems.at_most(FIELD, terms.len(), MAX_TERMS);
    if terms
        .iter()
        .any(|t| t.tags.is_none() && t.id.is_none() && t.name.is_none())
    {
        problems.rule(
            FIELD,
            "expected at least one, got none, ['tags', 'id', 'name']",
        );
    }
    let all = |mixed: fn(&SecurityGroupSelectorTerm) -> bool| {
        !terms.is_empty() && terms.iter().all(mixed)
    };
    if all(|t| t.id.is_some() && (t.tags.is_some() || t.name.is_some())) {
        problems.rule(
            FIELD,
            "'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",
        );
    }
    if all(|t| t.name.is_some() && (t.tags.is_some() || t.id.is_some())) {
        problems.rule(
            FIELD,
            "'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",
        );
    }
    for (i, term) in terms.iter().enumerate() {
        if let Some(id) = &term.id {
            let matches = contains_id(id, "sg-");
            problems.pattern(format!("{FIELD}[{i}].id"), id, "sg-[0-9a-z]+", matches);
        }
        term_tags(problems, format!("{FIELD}[{i}].tags"), term.tags.as_ref());
    }
}

pub(super) fn capacity_reservation_terms(
    problems: &mut Problems,
    terms: &[CapacityReservationSelectorTerm],
) {
    const FIELD: &str = "capacityReservationSelectorTerms";
    problems.at_most(FIELD, terms.len(), MAX_TERMS);
    if terms
        .iter()
        .any(|t| t.tags.is_none() && t.id.is_none() && t.instance_match_criteria.is_none())
    {
        problems.rule(
            FIELD,
            "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']",
        );
    }
    let mixed = |t: &CapacityReservationSelectorTerm| {
        t.id.is_some()
            && (t.tags.is_some() || t.owner_id.is_some() || t.instance_match_criteria.is_some())
    };
    if !terms.is_empty() && terms.iter().all(mixed) {
        problems.rule(
            FIELD,
            "'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term",
        );
    }
    for (i, term) in terms.iter().enumerate() {
        if let Some(id) = &term.id {
            problems.pattern(
                format!("{FIELD}[{i}].id"),
                id,
                "^cr-[0-9a-z]+$",
                is_id(id, "cr-"),
            );
        }
        if let Some(owner) = &term.owner_id {
            let matches = owner.len() == 12 && owner.chars().all(|c| c.is_ascii_digit());
            problems.pattern(
                format!("{FIELD}[{i}].ownerID"),
                owner,
                "^[0-9]{12}$",
                matches,
            );
        }
        if let Some(criteria) = &term.instance_match_criteria {
            let field = format!("{FIELD}[{i}].instanceMatchCriteria");
            problems.one_of(field, criteria, &["open", "targeted"]);
        }
        term_tags(problems, format!("{FIELD}[{i}].tags"), term.tags.as_ref());
    }
}

pub(super) fn ami_terms(problems: &mut Problems, terms: &[AmiSelectorTerm]) {
    const FIELD: &str = "amiSelectorTerms";
    if terms.is_empty() {
        problems.required(FIELD, "amiSelectorTerms needs at least one term");
    }
    problems.at_most(FIELD, terms.len(), MAX_TERMS);
    let selects = |t: &AmiSelectorTerm| {
        t.tags.is_some()
            || t.id.is_some()
            || t.name.is_some()
            || t.alias.is_some()
            || t.ssm_parameter.is_some()
    };
    if !terms.iter().all(selects) {
        problems.rule(
            FIELD,
            "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']",
        );
    }
    if terms.iter().any(|t| t.alias.is_some()) && terms.len() != 1 {
        problems.rule(
            FIELD,
            "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
        );
    }
    for (i, term) in terms.iter().enumerate() {
        ami_term(problems, &format!("{FIELD}[{i}]"), term);
    }
}

fn ami_term(problems: &mut Problems, field: &str, term: &AmiSelectorTerm) {
    let others = term.tags.is_some() || term.name.is_some() || term.owner.is_some();
    if term.id.is_some() && (term.alias.is_some() || others) {
        problems.rule(
            field,
            "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
        );
    }
    if term.alias.is_some() && (term.id.is_some() || others) {
        problems.rule(
            field,
            "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
        );
    }
    if let Some(id) = &term.id {
        let matches = contains_id(id, "ami-");
        problems.pattern(format!("{field}.id"), id, "ami-[0-9a-z]+", matches);
    }
    if let Some(alias) = &term.alias {
        alias_rules(problems, &format!("{field}.alias"), alias);
    }
    term_tags(problems, format!("{field}.tags"), term.tags.as_ref());
}

/// An alias: at most 30 characters, `family@version`, a known family, and
/// only `latest` for Windows.
fn alias_rules(problems: &mut Problems, field: &str, alias: &str) {
    let length = alias.chars().count();
    if length > 30 {
        problems.rule(
            field,
            format!("may not be longer than 30 characters ({length})"),
        );
    }
    let family = alias.split('@').next().unwrap_or_default();
    let formatted = !family.is_empty()
        && family.chars().all(|c| c.is_ascii_alphanumeric())
        && alias.len() > family.len() + 1;
    if !formatted {
        problems.rule(
            field,
            "'alias' is improperly formatted, must match the format 'family@version'",
        );
    }
    if !ALIAS_FAMILIES.contains(&family) {
        problems.rule(
            field,
            "family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'",
        );
    }
    // CEL's split keeps every part, so `windows2022@latest@x` has `latest`
    // as its second part and passes, as it does upstream.
    let version = alias.split('@').nth(1);
    if family.starts_with("windows")
        && ALIAS_FAMILIES.contains(&family)
        && version != Some("latest")
    {
        problems.rule(field, "windows families may only specify version 'latest'");
    }
}
