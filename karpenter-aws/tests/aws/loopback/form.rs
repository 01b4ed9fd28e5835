//! EC2's Query protocol requests read as a form: `Key=value` pairs, lists
//! flattened as `Name.1`, `Name.2`, structures as `Name.Member`.

use std::collections::BTreeMap;

/// A request the loopback server refuses: EC2 answers such a request with
/// a 400 naming the parameter.
#[derive(Debug)]
pub(crate) struct BadRequest {
    /// EC2's code (`MissingParameter`, `InvalidParameterValue`, ...).
    pub(crate) code: &'static str,
    /// What was wrong, naming the parameter.
    pub(crate) message: String,
}

impl BadRequest {
    pub(crate) fn missing(key: &str) -> Self {
        BadRequest {
            code: "MissingParameter",
            message: format!("The request must contain the parameter {key}"),
        }
    }

    pub(crate) fn invalid(key: &str, value: &str) -> Self {
        BadRequest {
            code: "InvalidParameterValue",
            message: format!("Value ({value}) for parameter {key} is invalid"),
        }
    }
}

/// A form's fields under one prefix (the whole request, or one list item).
#[derive(Clone, Debug, Default)]
pub(crate) struct Form {
    /// The prefix these fields sit under, for error messages.
    prefix: String,
    fields: BTreeMap<String, String>,
}

impl Form {
    /// The form of a request body; a pair that is not valid percent-encoded
    /// UTF-8 is refused, naming its key.
    pub(crate) fn parse(body: &[u8]) -> Result<Self, BadRequest> {
        let text =
            std::str::from_utf8(body).map_err(|_| BadRequest::invalid("body", "not UTF-8"))?;
        let mut fields = BTreeMap::new();
        for pair in text.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let key = decode(key).ok_or_else(|| BadRequest::invalid("name", key))?;
            let value = decode(value).ok_or_else(|| BadRequest::invalid(&key, value))?;
            fields.insert(key, value);
        }
        Ok(Form {
            prefix: String::new(),
            fields,
        })
    }

    /// The full name of `key` in the request, for error messages.
    pub(crate) fn name(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// Field `key`, if given.
    pub(crate) fn get(&self, key: &str) -> Option<String> {
        self.fields.get(key).cloned()
    }

    /// Field `key`, which the request must carry.
    pub(crate) fn required(&self, key: &str) -> Result<String, BadRequest> {
        self.get(key)
            .ok_or_else(|| BadRequest::missing(&self.name(key)))
    }

    /// Field `key` read as `T`; a value that does not read is refused.
    pub(crate) fn parsed<T: std::str::FromStr>(&self, key: &str) -> Result<Option<T>, BadRequest> {
        self.get(key)
            .map(|v| {
                v.parse()
                    .map_err(|_| BadRequest::invalid(&self.name(key), &v))
            })
            .transpose()
    }

    /// The sub-form under `key.` (a structure member).
    pub(crate) fn member(&self, key: &str) -> Option<Form> {
        let prefix = format!("{key}.");
        let fields: BTreeMap<_, _> = self
            .fields
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix(&prefix)?.to_owned(), v.clone())))
            .collect();
        (!fields.is_empty()).then(|| Form {
            prefix: format!("{}{prefix}", self.prefix),
            fields,
        })
    }

    /// The list `key.1`, `key.2`, ... of plain values, in index order.
    pub(crate) fn list(&self, key: &str) -> Result<Vec<String>, BadRequest> {
        let mut items = BTreeMap::new();
        let prefix = format!("{key}.");
        for (k, v) in &self.fields {
            let Some(index) = k.strip_prefix(&prefix) else {
                continue;
            };
            let index: u32 = index
                .parse()
                .map_err(|_| BadRequest::invalid(&self.name(k), v))?;
            items.insert(index, v.clone());
        }
        Ok(items.into_values().collect())
    }

    /// The list `key.1.*`, `key.2.*`, ... of structures, in index order.
    pub(crate) fn items(&self, key: &str) -> Result<Vec<Form>, BadRequest> {
        let mut items: BTreeMap<u32, Form> = BTreeMap::new();
        let prefix = format!("{key}.");
        for (k, v) in &self.fields {
            let Some(rest) = k.strip_prefix(&prefix) else {
                continue;
            };
            let Some((index, member)) = rest.split_once('.') else {
                return Err(BadRequest::invalid(&self.name(k), v));
            };
            let number: u32 = index
                .parse()
                .map_err(|_| BadRequest::invalid(&self.name(k), v))?;
            let item = items.entry(number).or_insert_with(|| Form {
                prefix: format!("{}{prefix}{index}.", self.prefix),
                fields: BTreeMap::new(),
            });
            item.fields.insert(member.to_owned(), v.clone());
        }
        Ok(items.into_values().collect())
    }
}

/// A percent-encoded form component; `None` when it is not valid.
fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}
