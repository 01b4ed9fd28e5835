//! Serde for [`ResourceList`]: a map from resource name to quantity string,
//! the shape of a Kubernetes `ResourceList`.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::format::format_quantity;
use super::list::ResourceList;
use super::quantity::{QuantityError, QuantityErrorKind, parse_milli};

/// Writes each non-zero amount as a canonical quantity string
/// (`{"cpu": "1500m", "memory": "2147483648"}`), in iteration order.
impl Serialize for ResourceList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (name, milli) in self.iter() {
            map.serialize_entry(name, &format_quantity(milli))?;
        }
        map.end()
    }
}

/// Reads a map of resource name to quantity. Values are quantity strings;
/// bare integers (`pods: 110` in YAML) are accepted as whole units, while
/// floating-point numbers are refused because they are not exact.
impl<'de> Deserialize<'de> for ResourceList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ListVisitor)
    }
}

struct ListVisitor;

impl<'de> Visitor<'de> for ListVisitor {
    type Value = ResourceList;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of resource names to quantities")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<ResourceList, A::Error> {
        let mut list = ResourceList::new();
        while let Some(name) = access.next_key::<String>()? {
            let QuantityValue(milli) = access.next_value()?;
            let milli = milli.map_err(|e| de::Error::custom(e.within(&name)))?;
            list.set(&name, milli);
        }
        Ok(list)
    }
}

/// One map value: the parse result is kept, not raised, so the error can
/// name the resource it belongs to.
struct QuantityValue(Result<i64, QuantityError>);

impl<'de> Deserialize<'de> for QuantityValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(QuantityValueVisitor)
            .map(QuantityValue)
    }
}

struct QuantityValueVisitor;

impl Visitor<'_> for QuantityValueVisitor {
    type Value = Result<i64, QuantityError>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a quantity string such as \"500m\" or \"2Gi\", or an integer")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(parse_milli(text))
    }

    fn visit_i64<E: de::Error>(self, units: i64) -> Result<Self::Value, E> {
        Ok(units
            .checked_mul(1000)
            .ok_or_else(|| QuantityError::new(units.to_string(), QuantityErrorKind::OutOfRange)))
    }

    fn visit_u64<E: de::Error>(self, units: u64) -> Result<Self::Value, E> {
        Ok(i64::try_from(units)
            .ok()
            .and_then(|units| units.checked_mul(1000))
            .ok_or_else(|| QuantityError::new(units.to_string(), QuantityErrorKind::OutOfRange)))
    }
}
