//! What every describe call shares: filters and tags, in the AWS SDK's
//! names.

/// An EC2 filter: a resource matches when its field `name` has any of
/// `values` (`*` matches any run of characters). `tag:<key>` filters on a
/// tag's value, `tag-key` on tag keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// The field, e.g. `availability-zone`, `tag:karpenter.sh/discovery`.
    pub name: String,
    /// The accepted values.
    pub values: Vec<String>,
}

impl Filter {
    /// A filter on `name` accepting `values`.
    pub fn new<V: Into<String>>(name: &str, values: impl IntoIterator<Item = V>) -> Self {
        Filter {
            name: name.to_owned(),
            values: values.into_iter().map(Into::into).collect(),
        }
    }
}

/// A resource tag.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Tag {
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
}

impl Tag {
    /// The tag `key=value`.
    pub fn new(key: &str, value: &str) -> Self {
        Tag {
            key: key.to_owned(),
            value: value.to_owned(),
        }
    }
}
