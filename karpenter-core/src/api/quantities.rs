//! A map of resource names to quantities (`v1.Quantities` upstream) that
//! writes every quantity back in the JSON type it was read in.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::Deref;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Resource name to [`Quantity`], as in `limits`, `resources.requests`,
/// `capacity` and `allocatable`.
///
/// Quantities are `int-or-string` in the CRDs, and real manifests use both
/// (`cpu: 10000`, `memory: 8000Gi`). A [`Quantity`] is only text, so this
/// type also remembers which entries were JSON numbers and writes those back
/// as numbers: a manifest round-trips unchanged. It dereferences to the
/// underlying map for reading.
///
/// ```
/// use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
/// use karpenter_core::api::Quantities;
/// use serde_json::json;
///
/// let limits: Quantities = serde_json::from_value(json!({"cpu": 1000, "memory": "1000Gi"}))?;
/// assert_eq!(limits.get("cpu"), Some(&Quantity("1000".into())));
/// assert_eq!(serde_json::to_value(&limits)?, json!({"cpu": 1000, "memory": "1000Gi"}));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Quantities {
    quantities: BTreeMap<String, Quantity>,
    /// Names whose quantity was a JSON number on input.
    numeric: BTreeSet<String>,
}

impl Quantities {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets a quantity, to be written as a string; returns the previous one.
    pub fn insert(&mut self, name: impl Into<String>, quantity: Quantity) -> Option<Quantity> {
        let name = name.into();
        self.numeric.remove(&name);
        self.quantities.insert(name, quantity)
    }

    /// Removes a quantity and returns it.
    pub fn remove(&mut self, name: &str) -> Option<Quantity> {
        self.numeric.remove(name);
        self.quantities.remove(name)
    }

    /// The quantities by resource name.
    pub fn as_map(&self) -> &BTreeMap<String, Quantity> {
        &self.quantities
    }

    /// The quantities by resource name, forgetting which were numbers.
    pub fn into_map(self) -> BTreeMap<String, Quantity> {
        self.quantities
    }

    /// The JSON number to write for `name`, if it was read as one and its
    /// text still reads back as exactly that number.
    fn number_for(&self, name: &str, quantity: &Quantity) -> Option<serde_json::Number> {
        if !self.numeric.contains(name) {
            return None;
        }
        let number: serde_json::Number = quantity.0.parse().ok()?;
        (number.to_string() == quantity.0).then_some(number)
    }
}

impl Deref for Quantities {
    type Target = BTreeMap<String, Quantity>;

    fn deref(&self) -> &Self::Target {
        &self.quantities
    }
}

impl From<BTreeMap<String, Quantity>> for Quantities {
    fn from(quantities: BTreeMap<String, Quantity>) -> Self {
        Self {
            quantities,
            numeric: BTreeSet::new(),
        }
    }
}

impl<K: Into<String>> FromIterator<(K, Quantity)> for Quantities {
    fn from_iter<I: IntoIterator<Item = (K, Quantity)>>(iter: I) -> Self {
        let mut list = Self::new();
        for (name, quantity) in iter {
            list.insert(name, quantity);
        }
        list
    }
}

impl<'a> IntoIterator for &'a Quantities {
    type Item = (&'a String, &'a Quantity);
    type IntoIter = std::collections::btree_map::Iter<'a, String, Quantity>;

    fn into_iter(self) -> Self::IntoIter {
        self.quantities.iter()
    }
}

impl Serialize for Quantities {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.quantities.len()))?;
        for (name, quantity) in &self.quantities {
            match self.number_for(name, quantity) {
                Some(number) => map.serialize_entry(name, &number)?,
                None => map.serialize_entry(name, quantity)?,
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Quantities {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ListVisitor)
    }
}

struct ListVisitor;

impl<'de> Visitor<'de> for ListVisitor {
    type Value = Quantities;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of resource names to quantities")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Quantities, A::Error> {
        let mut list = Quantities::new();
        while let Some(name) = map.next_key::<String>()? {
            let QuantityValue { text, numeric } = map.next_value()?;
            if numeric {
                list.numeric.insert(name.clone());
            }
            list.quantities.insert(name, Quantity(text));
        }
        Ok(list)
    }
}

/// One quantity as read: its text and whether it was a JSON number.
struct QuantityValue {
    text: String,
    numeric: bool,
}

impl<'de> Deserialize<'de> for QuantityValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(QuantityVisitor)
    }
}

struct QuantityVisitor;

impl QuantityVisitor {
    fn number(text: String) -> QuantityValue {
        QuantityValue {
            text,
            numeric: true,
        }
    }
}

impl Visitor<'_> for QuantityVisitor {
    type Value = QuantityValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a quantity (a string such as \"100Mi\" or a number)")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<QuantityValue, E> {
        Ok(QuantityValue {
            text: text.to_owned(),
            numeric: false,
        })
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<QuantityValue, E> {
        Ok(Self::number(v.to_string()))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<QuantityValue, E> {
        Ok(Self::number(v.to_string()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<QuantityValue, E> {
        // serde_json's own formatting, so the number reads back identically.
        serde_json::Number::from_f64(v)
            .map(|n| Self::number(n.to_string()))
            .ok_or_else(|| E::custom("a quantity must be a finite number"))
    }
}
