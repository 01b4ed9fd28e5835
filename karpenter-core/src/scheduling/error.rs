//! Errors of requirement construction and validation.

use thiserror::Error;

use super::operator::Operator;

/// Upstream's CEL bound on `minValues`: a requirement asking for more
/// distinct values is refused with [`RequirementError::MinValuesOutOfRange`].
pub const MAX_MIN_VALUES: u32 = 50;

/// A malformed node selector requirement, or one that uses a restricted or
/// invalid label. Each variant names the offending key.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RequirementError {
    /// The operator is not one of [`Operator::ALL`].
    #[error(
        "key {key} has an unsupported operator {operator}, expected one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte"
    )]
    UnsupportedOperator {
        /// The label key.
        key: String,
        /// The operator as written.
        operator: String,
    },
    /// `In` without values.
    #[error("key {key} with operator {operator} must have a value defined")]
    MissingValues {
        /// The label key.
        key: String,
        /// The operator.
        operator: Operator,
    },
    /// `Exists` or `DoesNotExist` with values.
    #[error("key {key} with operator {operator} must not have values, got {count}")]
    UnexpectedValues {
        /// The label key.
        key: String,
        /// The operator.
        operator: Operator,
        /// How many values were given.
        count: usize,
    },
    /// `Gt`, `Lt`, `Gte` or `Lte` without exactly one (non-negative) integer.
    #[error(
        "key {key} with operator {operator} must have a single positive integer value, got {values:?}"
    )]
    InvalidIntegerValue {
        /// The label key.
        key: String,
        /// The operator.
        operator: Operator,
        /// The values as written.
        values: Vec<String>,
    },
    /// `minValues` outside `1..=50`.
    #[error("key {key} has minValues {min_values}, expected 1 to {MAX_MIN_VALUES}")]
    MinValuesOutOfRange {
        /// The label key.
        key: String,
        /// The `minValues` given.
        min_values: u32,
    },
    /// `In` with fewer values than its `minValues`.
    #[error(
        "key {key} with operator In must have at least minimum number of values defined in 'values' field, minValues {min_values}, got {count}"
    )]
    NotEnoughValues {
        /// The label key.
        key: String,
        /// The `minValues` given.
        min_values: u32,
        /// How many values were given.
        count: usize,
    },
    /// A label reserved by Karpenter or set per node.
    #[error(
        "using label {key} is not allowed as it might interfere with the internal provisioning logic; specify a well known label, or a custom label that does not use a restricted domain (karpenter.sh)"
    )]
    RestrictedLabel {
        /// The label key.
        key: String,
    },
    /// A node selector term with `matchFields`, which Karpenter cannot honour.
    #[error("node selector term with matchFields is not supported")]
    MatchFieldsUnsupported,
    /// A key that is not a Kubernetes qualified name.
    #[error("key {key} is not a qualified name, {reason}")]
    InvalidLabelKey {
        /// The label key.
        key: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A value that is not a valid Kubernetes label value.
    #[error("invalid value {value} for key {key}, {reason}")]
    InvalidLabelValue {
        /// The label key.
        key: String,
        /// The value.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// `In` on a label with known values, naming none of them (or fewer than
    /// `minValues` of them).
    #[error(
        "not enough valid values found in {values:?} for {key}, expected at least {needed} of: {expected:?}"
    )]
    UnknownValues {
        /// The label key.
        key: String,
        /// The values as written.
        values: Vec<String>,
        /// How many known values are needed.
        needed: u32,
        /// The known values.
        expected: Vec<String>,
    },
}
