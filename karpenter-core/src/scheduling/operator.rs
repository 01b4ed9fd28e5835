//! The node selector operators.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// A node selector operator: Kubernetes' six plus Karpenter's inclusive
/// `Gte` and `Lte`.
///
/// ```
/// use karpenter_core::scheduling::Operator;
/// let operator: Operator = "Gte".parse().unwrap();
/// assert_eq!(operator, Operator::Gte);
/// assert_eq!(operator.to_string(), "Gte");
/// assert!("Like".parse::<Operator>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operator {
    /// The label has one of the values.
    In,
    /// The label is absent or has none of the values.
    NotIn,
    /// The label is present, with any value.
    Exists,
    /// The label is absent.
    DoesNotExist,
    /// The label is an integer greater than the value.
    Gt,
    /// The label is an integer less than the value.
    Lt,
    /// The label is an integer greater than or equal to the value.
    Gte,
    /// The label is an integer less than or equal to the value.
    Lte,
}

impl Operator {
    /// Every operator, in declaration order.
    pub const ALL: [Operator; 8] = [
        Operator::In,
        Operator::NotIn,
        Operator::Exists,
        Operator::DoesNotExist,
        Operator::Gt,
        Operator::Lt,
        Operator::Gte,
        Operator::Lte,
    ];

    /// The operator as spelled in Kubernetes objects.
    pub const fn as_str(self) -> &'static str {
        match self {
            Operator::In => "In",
            Operator::NotIn => "NotIn",
            Operator::Exists => "Exists",
            Operator::DoesNotExist => "DoesNotExist",
            Operator::Gt => "Gt",
            Operator::Lt => "Lt",
            Operator::Gte => "Gte",
            Operator::Lte => "Lte",
        }
    }

    /// Whether the operator compares one integer value.
    pub const fn is_numeric(self) -> bool {
        matches!(
            self,
            Operator::Gt | Operator::Lt | Operator::Gte | Operator::Lte
        )
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that names no [`Operator`].
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error(
    "unsupported operator {0:?}, expected one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte"
)]
pub struct UnknownOperatorError(pub String);

impl FromStr for Operator {
    type Err = UnknownOperatorError;

    /// Case-sensitive, as the Kubernetes API is.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Operator::ALL
            .into_iter()
            .find(|operator| operator.as_str() == s)
            .ok_or_else(|| UnknownOperatorError(s.to_owned()))
    }
}
