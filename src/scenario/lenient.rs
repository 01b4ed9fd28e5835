//! Reading a buffered document as its typed object.
//!
//! A document whose `kind` comes after its other fields has to be buffered before
//! its type is known. The buffer is a `serde_json::Value`; YAML has already typed its
//! plain scalars there (`cpu: 1` became the number 1), while read straight from YAML
//! the same scalar would have been the string `"1"` that a quantity expects. So this
//! deserializer gives a number or a boolean as text wherever a string is wanted,
//! and the buffered path reads exactly what the direct path reads.

use std::marker::PhantomData;

use serde::de::value::{MapDeserializer, SeqDeserializer, StringDeserializer};
use serde::de::{self, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::Value;

/// A buffered value, read with the error type `E` of the document it came from.
pub(crate) struct Lenient<E> {
    value: Value,
    error: PhantomData<E>,
}

impl<E> Lenient<E> {
    pub(crate) fn new(value: Value) -> Self {
        Lenient {
            value,
            error: PhantomData,
        }
    }

    pub(crate) fn map(fields: serde_json::Map<String, Value>) -> Self {
        Lenient::new(Value::Object(fields))
    }
}

impl<'de, E: de::Error> IntoDeserializer<'de, E> for Lenient<E> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

impl<'de, E: de::Error> de::Deserializer<'de> for Lenient<E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else {
                    visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => visitor.visit_string(s),
            Value::Array(items) => {
                let mut seq = SeqDeserializer::new(items.into_iter().map(Lenient::<E>::new));
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Value::Object(fields) => {
                let entries = fields.into_iter().map(|(k, v)| (k, Lenient::<E>::new(v)));
                let mut map = MapDeserializer::new(entries);
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        self.deserialize_string(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match scalar_text(&self.value) {
            Some(text) => visitor.visit_string(text),
            None => self.deserialize_any(visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, E> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, E> {
        match self.value {
            Value::String(s) => {
                let s: StringDeserializer<E> = s.into_deserializer();
                s.deserialize_enum(name, variants, visitor)
            }
            Value::Object(fields) => {
                let entries = fields.into_iter().map(|(k, v)| (k, Lenient::<E>::new(v)));
                let map = MapDeserializer::new(entries);
                de::value::MapAccessDeserializer::new(map).deserialize_enum(name, variants, visitor)
            }
            other => Lenient::<E>::new(other).deserialize_any(visitor),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Sample {
        cpu: String,
        flag: Option<String>,
        count: u32,
        nested: Vec<Option<String>>,
    }

    #[test]
    fn numbers_and_booleans_read_as_text_where_text_is_wanted() {
        let value = json!({"cpu": 1, "flag": true, "count": 3, "nested": [1.5, null, "x"]});
        let sample = Sample::deserialize(Lenient::<de::value::Error>::new(value)).unwrap();
        assert_eq!(
            sample,
            Sample {
                cpu: "1".into(),
                flag: Some("true".into()),
                count: 3,
                nested: vec![Some("1.5".into()), None, Some("x".into())],
            }
        );
    }

    #[test]
    fn a_string_where_a_number_is_wanted_is_still_an_error() {
        let value = json!({"cpu": "1", "count": "three", "nested": []});
        assert!(Sample::deserialize(Lenient::<de::value::Error>::new(value)).is_err());
    }
}
