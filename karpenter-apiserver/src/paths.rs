//! Request paths and queries: which resource, object and subresource a URL
//! names, and the RBAC verb a request amounts to.

use std::fmt;

/// Where a resource path points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Address {
    /// The API group, empty for the core group (`/api/v1`).
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) plural: String,
    /// Set for `/namespaces/{ns}/...` paths.
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) subresource: Option<String>,
}

impl Address {
    /// Reads `/api/v1/...` and `/apis/{group}/{version}/...`; `None` for any
    /// other path.
    pub(crate) fn parse(path: &str) -> Option<Self> {
        let segments: Vec<&str> = path.strip_prefix('/')?.split('/').collect();
        if segments.iter().any(|segment| segment.is_empty()) {
            return None;
        }
        let (group, version, rest) = match segments.as_slice() {
            ["api", version, rest @ ..] => ("", *version, rest),
            ["apis", group, version, rest @ ..] => (*group, *version, rest),
            _ => return None,
        };
        let (namespace, rest) = match rest {
            ["namespaces", namespace, rest @ ..] if !rest.is_empty() => {
                (Some((*namespace).to_owned()), rest)
            }
            _ => (None, rest),
        };
        let (plural, name, subresource) = match rest {
            [plural] => (*plural, None, None),
            [plural, name] => (*plural, Some(*name), None),
            [plural, name, subresource] => (*plural, Some(*name), Some(*subresource)),
            _ => return None,
        };
        Some(Self {
            group: group.to_owned(),
            version: version.to_owned(),
            plural: plural.to_owned(),
            namespace,
            name: name.map(str::to_owned),
            subresource: subresource.map(str::to_owned),
        })
    }

    /// The resource as RBAC names it: `pods`, `pods/eviction`, `nodeclaims/status`.
    pub(crate) fn rbac_resource(&self) -> String {
        match &self.subresource {
            Some(subresource) => format!("{}/{subresource}", self.plural),
            None => self.plural.clone(),
        }
    }
}

/// A Kubernetes RBAC verb.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// GET of one object.
    Get,
    /// GET of a collection.
    List,
    /// GET with `watch=true`.
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH (server-side apply included).
    Patch,
    /// DELETE of one object.
    Delete,
    /// DELETE of a collection.
    DeleteCollection,
}

impl Verb {
    /// The verb of a request with this method on this address.
    pub(crate) fn of(method: &str, address: &Address, watch: bool) -> Option<Self> {
        let one = address.name.is_some();
        Some(match method {
            "GET" if watch => Self::Watch,
            "GET" if one => Self::Get,
            "GET" => Self::List,
            "POST" => Self::Create,
            "PUT" => Self::Update,
            "PATCH" => Self::Patch,
            "DELETE" if one => Self::Delete,
            "DELETE" => Self::DeleteCollection,
            _ => return None,
        })
    }

    /// The name RBAC rules use: `get`, `list`, `watch`, `create`, `update`,
    /// `patch`, `delete`, `deletecollection`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "get",
            Self::List => "list",
            Self::Watch => "watch",
            Self::Create => "create",
            Self::Update => "update",
            Self::Patch => "patch",
            Self::Delete => "delete",
            Self::DeleteCollection => "deletecollection",
        }
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The decoded `key=value` pairs of a query string.
#[derive(Clone, Debug, Default)]
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    pub(crate) fn parse(query: &str) -> Self {
        Self(
            query
                .split('&')
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    (percent_decode(key), percent_decode(value))
                })
                .collect(),
        )
    }

    /// The last value given for `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, value)| value.as_str())
    }

    /// Whether `key` is `true` or `1`.
    pub(crate) fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

/// Decodes `%XX` escapes and `+` (a space in form encoding); invalid escapes
/// are kept as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok());
                match hex {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_and_group_paths() {
        let pod = Address::parse("/api/v1/namespaces/ns/pods/p/eviction").unwrap();
        assert_eq!(pod.group, "");
        assert_eq!(pod.namespace.as_deref(), Some("ns"));
        assert_eq!(pod.name.as_deref(), Some("p"));
        assert_eq!(pod.rbac_resource(), "pods/eviction");
        let claims = Address::parse("/apis/karpenter.sh/v1/nodeclaims").unwrap();
        assert_eq!(claims.group, "karpenter.sh");
        assert_eq!(claims.namespace, None);
        assert_eq!(claims.name, None);
        let namespace = Address::parse("/api/v1/namespaces/ns").unwrap();
        assert_eq!(namespace.plural, "namespaces");
        assert_eq!(namespace.name.as_deref(), Some("ns"));
        assert_eq!(Address::parse("/version"), None);
        assert_eq!(Address::parse("/api/v1/pods/"), None);
        assert_eq!(Address::parse("/api/v1/a/b/c/d"), None);
    }

    #[test]
    fn queries_are_decoded() {
        let query = Query::parse("&watch=1&labelSelector=app%3Dweb%2Ctier&x=%zz+y");
        assert!(query.flag("watch"));
        assert_eq!(query.get("labelSelector"), Some("app=web,tier"));
        assert_eq!(query.get("x"), Some("%zz y"));
        assert_eq!(Query::parse("a=%4").get("a"), Some("%4"));
    }
}
