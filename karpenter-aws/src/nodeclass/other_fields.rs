//! [`OtherFields`]: what every part of an `EC2NodeClass` keeps of the fields
//! it does not know, so that a manifest written back is the one read. Its
//! own file, below every part that holds it.

use std::collections::BTreeMap;

/// Fields an object does not know, kept as written.
pub type OtherFields = BTreeMap<String, serde_json::Value>;
