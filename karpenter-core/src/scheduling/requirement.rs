//! One label requirement as a (possibly complemented, possibly bounded) set of
//! values, after upstream's `pkg/scheduling/requirement.go`.

use std::fmt;
use std::sync::Arc;

use super::error::{MAX_MIN_VALUES, RequirementError};
use super::labels::normalize_label_key;
use super::operator::Operator;
use super::selector::SelectorRequirement;
use super::values::{Bounds, ValueSet};

/// How many values `Display` lists before summarising the rest.
const DISPLAYED_VALUES: usize = 5;

/// How strictly integer operands are checked.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Integers {
    /// Karpenter's CEL rules for NodePools and NodeClaims: `>= 0`.
    NonNegative,
    /// Kubernetes' rules for pods and volumes: any `i64`.
    Any,
}

/// A requirement on one label key, stored as a set of values that is either
/// the listed values (`In`) or everything except them (a complement: `NotIn`,
/// `Exists`), optionally narrowed to the integers within inclusive bounds.
///
/// | operator | complement | values | bounds |
/// |---|---|---|---|
/// | `In v…` | no | `v…` | – |
/// | `NotIn v…` | yes | `v…` | – |
/// | `Exists` | yes | – | – |
/// | `DoesNotExist` | no | – | – |
/// | `Gt n` / `Gte n` | yes | – | `>= n+1` / `>= n` |
/// | `Lt n` / `Lte n` | yes | – | `<= n-1` / `<= n` |
///
/// ```
/// use karpenter_core::scheduling::{Operator, Requirement};
/// let zones = Requirement::new("topology.kubernetes.io/zone", Operator::In, ["b", "a"], None)?;
/// let not_a = Requirement::new("topology.kubernetes.io/zone", Operator::NotIn, ["a"], None)?;
/// let both = zones.intersection(&not_a);
/// assert_eq!(both.to_string(), "topology.kubernetes.io/zone In [b]");
///
/// let big = Requirement::new("cpu", Operator::Gt, ["4"], None)?;
/// assert!(big.has("5") && !big.has("4") && !big.has("many"));
/// assert_eq!(big.to_string(), "cpu Exists >=5");
/// # Ok::<(), karpenter_core::scheduling::RequirementError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Requirement {
    key: Arc<str>,
    complement: bool,
    values: ValueSet,
    /// Only ever set on complement sets; intersection drops them otherwise,
    /// since a concrete set is already filtered by them.
    bounds: Bounds,
    min_values: Option<u32>,
}

impl Requirement {
    /// Builds and validates a requirement as Karpenter's NodePool API does:
    /// `In` needs a value, `Exists` and `DoesNotExist` take none, `Gt`, `Lt`,
    /// `Gte` and `Lte` take one non-negative integer, and `min_values` must lie
    /// in `1..=50` and, for `In`, not exceed the number of values.
    ///
    /// Deprecated key aliases are normalised. `Gt i64::MAX` becomes
    /// `DoesNotExist`, as nothing is greater.
    pub fn new<I, S>(
        key: &str,
        operator: Operator,
        values: I,
        min_values: Option<u32>,
    ) -> Result<Requirement, RequirementError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Requirement::build(key, operator, values, min_values, Integers::NonNegative)
    }

    pub(crate) fn build<I, S>(
        key: &str,
        operator: Operator,
        values: I,
        min_values: Option<u32>,
        integers: Integers,
    ) -> Result<Requirement, RequirementError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let key = normalize_label_key(key);
        let values: Vec<S> = values.into_iter().collect();
        if let Some(min) = min_values
            && !(1..=MAX_MIN_VALUES).contains(&min)
        {
            return Err(RequirementError::MinValuesOutOfRange {
                key: key.to_owned(),
                min_values: min,
            });
        }
        let unexpected = |count| RequirementError::UnexpectedValues {
            key: key.to_owned(),
            operator,
            count,
        };
        let mut requirement = match operator {
            Operator::In if values.is_empty() => {
                return Err(RequirementError::MissingValues {
                    key: key.to_owned(),
                    operator,
                });
            }
            Operator::In => {
                if let Some(min) = min_values
                    && values.len() < min as usize
                {
                    return Err(RequirementError::NotEnoughValues {
                        key: key.to_owned(),
                        min_values: min,
                        count: values.len(),
                    });
                }
                Requirement::in_values(key, &values)
            }
            Operator::NotIn => Requirement::not_in(key, &values),
            Operator::Exists if values.is_empty() => Requirement::exists(key),
            Operator::DoesNotExist if values.is_empty() => Requirement::does_not_exist(key),
            Operator::Exists | Operator::DoesNotExist => return Err(unexpected(values.len())),
            Operator::Gt | Operator::Lt | Operator::Gte | Operator::Lte => {
                let number = single_integer(&values, integers).ok_or_else(|| {
                    RequirementError::InvalidIntegerValue {
                        key: key.to_owned(),
                        operator,
                        values: values.iter().map(|v| v.as_ref().to_owned()).collect(),
                    }
                })?;
                Requirement::bounded(key, operator, number)
            }
        };
        requirement.min_values = min_values;
        Ok(requirement)
    }

    /// `Gt`/`Lt` are canonicalised to the inclusive `Gte n+1`/`Lte n-1`;
    /// when that overflows nothing qualifies.
    fn bounded(key: &str, operator: Operator, number: i64) -> Requirement {
        let bounds = match operator {
            Operator::Gt => number.checked_add(1).map(|gte| Bounds {
                gte: Some(gte),
                lte: None,
            }),
            Operator::Lt => number.checked_sub(1).map(|lte| Bounds {
                gte: None,
                lte: Some(lte),
            }),
            Operator::Gte => Some(Bounds {
                gte: Some(number),
                lte: None,
            }),
            _ => Some(Bounds {
                gte: None,
                lte: Some(number),
            }),
        };
        match bounds {
            Some(bounds) => Requirement {
                bounds,
                ..Requirement::exists(key)
            },
            None => Requirement::does_not_exist(key),
        }
    }

    /// `key Exists`. Never fails.
    pub fn exists(key: &str) -> Requirement {
        Requirement {
            key: Arc::from(normalize_label_key(key)),
            complement: true,
            values: ValueSet::default(),
            bounds: Bounds::NONE,
            min_values: None,
        }
    }

    /// `key DoesNotExist`. Never fails.
    pub fn does_not_exist(key: &str) -> Requirement {
        Requirement {
            complement: false,
            ..Requirement::exists(key)
        }
    }

    /// `key In values`. Never fails: without values it is the empty set, the
    /// same as `DoesNotExist` (the engine builds such sets, e.g. when no
    /// instance type remains).
    pub fn in_values<I, S>(key: &str, values: I) -> Requirement
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Requirement {
            complement: false,
            values: ValueSet::from_values(values),
            ..Requirement::exists(key)
        }
    }

    /// `key NotIn values`. Never fails: without values it is `Exists`.
    pub fn not_in<I, S>(key: &str, values: I) -> Requirement
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Requirement {
            values: ValueSet::from_values(values),
            ..Requirement::exists(key)
        }
    }

    /// The requirement with `minValues` replaced.
    #[must_use]
    pub fn with_min_values(mut self, min_values: Option<u32>) -> Requirement {
        self.min_values = min_values;
        self
    }

    /// The (normalised) label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator this set reads as: `In` or `DoesNotExist` for a concrete
    /// set, `NotIn` or `Exists` for a complement (bounds read as `Exists`;
    /// see [`lower_bound`](Self::lower_bound)).
    pub fn operator(&self) -> Operator {
        match (self.complement, self.values.is_empty()) {
            (true, false) => Operator::NotIn,
            (true, true) => Operator::Exists,
            (false, false) => Operator::In,
            (false, true) => Operator::DoesNotExist,
        }
    }

    /// Whether the set is everything except [`values`](Self::values).
    pub fn is_complement(&self) -> bool {
        self.complement
    }

    /// The listed (for a complement, excluded) values, in ascending order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &str> + DoubleEndedIterator + Clone {
        self.values.iter()
    }

    /// The inclusive lower integer bound, if any.
    pub fn lower_bound(&self) -> Option<i64> {
        self.bounds.gte
    }

    /// The inclusive upper integer bound, if any.
    pub fn upper_bound(&self) -> Option<i64> {
        self.bounds.lte
    }

    /// The minimum number of distinct values a launch must keep, if set.
    pub fn min_values(&self) -> Option<u32> {
        self.min_values
    }

    /// Whether a node with label value `value` satisfies the requirement.
    /// (Absence of the label is not a value: `NotIn` and `Exists` hold for
    /// every present value they do not exclude.)
    pub fn has(&self, value: &str) -> bool {
        self.values.contains(value) != self.complement && self.bounds.admits(value)
    }

    /// The number of values in the set; a complement counts as
    /// `usize::MAX` minus its excluded values, as upstream counts it from
    /// `MaxInt64`.
    pub fn len(&self) -> usize {
        if self.complement {
            usize::MAX - self.values.len()
        } else {
            self.values.len()
        }
    }

    /// Whether no value is allowed at all. Complements are never empty, even
    /// when their bounds exclude every integer they do not list.
    pub fn is_empty(&self) -> bool {
        !self.complement && self.values.is_empty()
    }

    /// The set of values both requirements allow, keeping the larger
    /// `minValues`. The key is `self`'s.
    pub fn intersection(&self, other: &Requirement) -> Requirement {
        let min_values = self.min_values.max(other.min_values);
        let bounds = self.bounds.intersect(other.bounds);
        if bounds.is_contradictory() {
            return Requirement {
                key: Arc::clone(&self.key),
                complement: false,
                values: ValueSet::default(),
                bounds: Bounds::NONE,
                min_values,
            };
        }
        let complement = self.complement && other.complement;
        let values = match (self.complement, other.complement) {
            (true, true) => self.values.union_filtered(&other.values, bounds),
            (true, false) => other.values.filter_against(&self.values, false, bounds),
            (false, true) => self.values.filter_against(&other.values, false, bounds),
            (false, false) => {
                // Walk the smaller set and probe the larger one.
                let (small, large) = if self.values.len() <= other.values.len() {
                    (&self.values, &other.values)
                } else {
                    (&other.values, &self.values)
                };
                small.filter_against(large, true, bounds)
            }
        };
        Requirement {
            key: Arc::clone(&self.key),
            complement,
            values,
            bounds: if complement { bounds } else { Bounds::NONE },
            min_values,
        }
    }

    /// Whether [`intersection`](Self::intersection) would be non-empty,
    /// computed without allocating. Two complements always intersect unless
    /// their bounds contradict.
    pub fn has_intersection(&self, other: &Requirement) -> bool {
        let bounds = self.bounds.intersect(other.bounds);
        if bounds.is_contradictory() {
            return false;
        }
        match (self.complement, other.complement) {
            (true, true) => true,
            (true, false) => other.values.any_against(&self.values, false, bounds),
            (false, true) => self.values.any_against(&other.values, false, bounds),
            (false, false) => self.values.any_against(&other.values, true, bounds),
        }
    }

    /// A value the requirement allows, chosen deterministically: the smallest
    /// listed value of a concrete set; for a complement, the integer closest
    /// to its lower bound (or to 0) that it does not exclude. `None` when no
    /// such value exists (`DoesNotExist`, or bounds that exclude everything).
    ///
    /// Upstream picks at random; a fixed choice keeps output reproducible.
    pub fn any(&self) -> Option<String> {
        if !self.complement {
            return self.values.first().map(str::to_owned);
        }
        let Bounds { gte, lte } = self.bounds;
        let high = lte.unwrap_or(i64::MAX);
        // Start at the lower bound or 0, unless the upper bound is negative.
        let (start, upward) = match gte {
            Some(gte) => (gte, true),
            None if high < 0 => (high, false),
            None => (0, true),
        };
        // Each excluded value can reject one candidate, so this many
        // candidates suffice when the range is wide enough.
        let attempts = self.values.len().saturating_add(1);
        let mut candidate = start;
        for _ in 0..attempts {
            if candidate > high {
                return None;
            }
            let text = candidate.to_string();
            if !self.values.contains(&text) {
                return Some(text);
            }
            candidate = if upward {
                candidate.checked_add(1)?
            } else {
                candidate.checked_sub(1)?
            };
        }
        None
    }

    /// The requirement written as node selector requirements: one entry, or
    /// two (`Gte` and `Lte`) when both bounds are set. A bounded complement
    /// that also excludes values gets an extra `NotIn` entry, which upstream
    /// omits, so that reading the entries back gives the same set.
    pub fn to_selector_requirements(&self) -> Vec<SelectorRequirement> {
        let entry = |operator, values: Vec<String>| SelectorRequirement {
            key: self.key.to_string(),
            operator,
            values,
            min_values: self.min_values,
        };
        let listed = || self.values.iter().map(str::to_owned).collect::<Vec<_>>();
        let mut entries = Vec::with_capacity(1);
        if let Some(gte) = self.bounds.gte {
            entries.push(entry(Operator::Gte, vec![gte.to_string()]));
        }
        if let Some(lte) = self.bounds.lte {
            entries.push(entry(Operator::Lte, vec![lte.to_string()]));
        }
        if entries.is_empty() || !self.values.is_empty() {
            entries.push(entry(self.operator(), listed()));
        }
        entries
    }
}

/// Exactly one value that parses as an integer (Go `strconv.Atoi` syntax),
/// non-negative if so required.
fn single_integer<S: AsRef<str>>(values: &[S], integers: Integers) -> Option<i64> {
    let [value] = values else {
        return None;
    };
    let number: i64 = value.as_ref().parse().ok()?;
    (integers == Integers::Any || number >= 0).then_some(number)
}

impl fmt::Display for Requirement {
    /// `key Operator [v1, v2]`, listing at most five values, followed by any
    /// bounds and `minValues`: `cpu Exists >=2 <=8 minValues 3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let operator = self.operator();
        write!(f, "{} {operator}", self.key)?;
        if matches!(operator, Operator::In | Operator::NotIn) {
            f.write_str(" [")?;
            for (index, value) in self.values.iter().take(DISPLAYED_VALUES).enumerate() {
                if index > 0 {
                    f.write_str(", ")?;
                }
                f.write_str(value)?;
            }
            if let Some(more) = self
                .values
                .len()
                .checked_sub(DISPLAYED_VALUES)
                .filter(|more| *more > 0)
            {
                write!(f, ", and {more} others")?;
            }
            f.write_str("]")?;
        }
        if let Some(gte) = self.bounds.gte {
            write!(f, " >={gte}")?;
        }
        if let Some(lte) = self.bounds.lte {
            write!(f, " <={lte}")?;
        }
        if let Some(min) = self.min_values {
            write!(f, " minValues {min}")?;
        }
        Ok(())
    }
}

impl TryFrom<&SelectorRequirement> for Requirement {
    type Error = RequirementError;

    /// Validates as [`Requirement::new`].
    fn try_from(requirement: &SelectorRequirement) -> Result<Self, Self::Error> {
        Requirement::new(
            &requirement.key,
            requirement.operator,
            &requirement.values,
            requirement.min_values,
        )
    }
}
