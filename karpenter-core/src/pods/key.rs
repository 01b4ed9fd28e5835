//! [`PodKey`]: how plans, events and the [`Cluster`](crate::cluster::Cluster)
//! trait name a pod.

use std::borrow::Borrow;
use std::fmt;
use std::str::FromStr;

use super::PodFields;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A pod's name as plans give it: the text `namespace/name`.
///
/// It holds exactly that text, so it orders, hashes, compares and serializes
/// as the string does (a plain JSON string, `serde(transparent)`). Ordering is
/// the text's byte order, not the `(namespace, name)` pair's: `"a-b/x"` sorts
/// before `"a/x"`, as it did when plans used strings, so sorted outputs keep
/// their order. It borrows as `str`, so a `BTreeSet<PodKey>` or
/// `HashMap<PodKey, _>` can be queried with a `&str`. Reading one from a
/// string ([`FromStr`]) checks for the `/`; deserializing takes the text as
/// it is, as the strings did.
///
/// ```
/// use std::collections::BTreeSet;
/// use karpenter_core::pods::PodKey;
///
/// let key = PodKey::new("team-a", "web-0");
/// assert_eq!(key.as_str(), "team-a/web-0");
/// assert_eq!((key.namespace(), key.name()), ("team-a", "web-0"));
/// assert_eq!(key.to_string(), "team-a/web-0");
/// assert_eq!("team-a/web-0".parse::<PodKey>(), Ok(key.clone()));
/// assert!("web-0".parse::<PodKey>().is_err());
/// assert_eq!(serde_json::to_string(&key).unwrap(), r#""team-a/web-0""#);
/// assert_eq!(format!("{key:?}"), r#""team-a/web-0""#);
///
/// // Byte order of the text, as plain strings sort.
/// assert!(PodKey::new("a-b", "x") < PodKey::new("a", "x"));
///
/// let set = BTreeSet::from([key]);
/// assert!(set.contains("team-a/web-0"));
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PodKey(String);

/// Shown as its text is (`"team-a/web-0"`), so that a list of keys reads as
/// the list of names it is.
impl fmt::Debug for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl PodKey {
    /// The key of the pod `name` in `namespace`.
    pub fn new(namespace: &str, name: &str) -> Self {
        let mut text = String::with_capacity(namespace.len() + 1 + name.len());
        text.push_str(namespace);
        text.push('/');
        text.push_str(name);
        Self(text)
    }

    /// The key of a pod, from its metadata: the namespace is `default` when
    /// unset, the name empty when unset.
    pub fn of(pod: &(impl PodFields + ?Sized)) -> Self {
        let metadata = pod.metadata();
        let namespace = metadata.namespace.as_deref().unwrap_or("default");
        Self::new(namespace, metadata.name.as_deref().unwrap_or_default())
    }

    /// The pod's namespace: the text before the first `/` (a namespace
    /// cannot contain one).
    pub fn namespace(&self) -> &str {
        self.split().0
    }

    /// The pod's name: the text after the first `/`.
    pub fn name(&self) -> &str {
        self.split().1
    }

    /// The text, `namespace/name`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn split(&self) -> (&str, &str) {
        // Every constructor puts a '/' in the text.
        self.0.split_once('/').unwrap_or(("", &self.0))
    }
}

impl fmt::Display for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Borrow<str> for PodKey {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for PodKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<PodKey> for String {
    fn from(key: PodKey) -> Self {
        key.0
    }
}

impl PartialEq<str> for PodKey {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for PodKey {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// Why a text is not a [`PodKey`]: it has no `/` between namespace and name.
/// A key is never read with a default namespace, so a bare name is refused
/// rather than guessed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("pod key {text:?} is not of the form namespace/name")]
pub struct PodKeyError {
    /// The text that was read.
    pub text: String,
}

impl FromStr for PodKey {
    type Err = PodKeyError;

    /// Reads `namespace/name`; a text without `/` is a [`PodKeyError`].
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.contains('/') {
            Ok(Self(text.to_owned()))
        } else {
            Err(PodKeyError {
                text: text.to_owned(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use std::collections::HashMap;

    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_their_text() {
        let key = PodKey::new("ns", "a/b");
        assert_eq!((key.namespace(), key.name()), ("ns", "a/b"));
        assert_eq!(String::from(key.clone()), "ns/a/b");
        let map = HashMap::from([(key.clone(), 1)]);
        assert_eq!(map.get("ns/a/b"), Some(&1));

        let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "web"}})).unwrap();
        assert_eq!(PodKey::of(&pod), "default/web");

        let read: PodKey = serde_json::from_value(json!("x/y")).unwrap();
        assert_eq!(read, PodKey::new("x", "y"));
        assert_eq!(
            "x".parse::<PodKey>().unwrap_err().to_string(),
            r#"pod key "x" is not of the form namespace/name"#
        );
    }

    /// The order of the text, not of the (namespace, name) pair.
    #[test]
    fn keys_sort_as_strings() {
        let mut keys = vec![PodKey::new("a", "x"), PodKey::new("a-b", "x")];
        keys.sort();
        assert_eq!(keys, [PodKey::new("a-b", "x"), PodKey::new("a", "x")]);
    }
}
