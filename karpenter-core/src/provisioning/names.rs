//! [`NameList`]: a list of names picked from a shared table.
//!
//! A plan of thousands of claims lists the same few hundred instance-type
//! names again and again, each claim up to 600 of them twice (in price order,
//! and sorted in its instance-type requirement). Kept as strings, that is
//! millions of copies; kept as shared strings, millions of reference counts to
//! bump and drop. A `NameList` keeps one table per NodePool and, per list, the
//! positions of its names: four bytes a name.

use std::fmt;
use std::ops::Index;
use std::sync::Arc;

use serde::{Serialize, Serializer};

/// An ordered list of names, read like a `Vec` of strings.
///
/// ```
/// use karpenter_core::provisioning::NameList;
///
/// let names: NameList = ["b", "a"].into_iter().collect();
/// assert_eq!(names.len(), 2);
/// assert_eq!(&names[0], "b");
/// assert!(names.contains("a"));
/// assert_eq!(names.iter().collect::<Vec<_>>(), ["b", "a"]);
/// ```
#[derive(Clone, Default)]
pub struct NameList {
    table: Arc<[Arc<str>]>,
    picks: Vec<u32>,
}

impl NameList {
    /// The names of `table` at `picks`, in that order (each pick below the
    /// table's length).
    pub(crate) fn picked(table: &Arc<[Arc<str>]>, picks: Vec<u32>) -> NameList {
        debug_assert!(picks.iter().all(|&p| (p as usize) < table.len()));
        NameList {
            table: Arc::clone(table),
            picks,
        }
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.picks.len()
    }

    /// Whether there is no name.
    pub fn is_empty(&self) -> bool {
        self.picks.is_empty()
    }

    /// The name at `index`.
    pub fn get(&self, index: usize) -> Option<&str> {
        let pick = *self.picks.get(index)?;
        self.table.get(pick as usize).map(|name| &**name)
    }

    /// The first name.
    pub fn first(&self) -> Option<&str> {
        self.get(0)
    }

    /// The names, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &str> + ExactSizeIterator + '_ {
        self.picks.iter().map(|&p| &*self.table[p as usize])
    }

    /// Whether `name` is listed.
    pub fn contains(&self, name: &str) -> bool {
        self.iter().any(|n| n == name)
    }

    /// Reverses the order.
    pub fn reverse(&mut self) {
        self.picks.reverse();
    }

    /// The names as owned strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }
}

impl<S: AsRef<str>> FromIterator<S> for NameList {
    fn from_iter<I: IntoIterator<Item = S>>(names: I) -> Self {
        let table: Arc<[Arc<str>]> = names.into_iter().map(|n| Arc::from(n.as_ref())).collect();
        let picks = (0..table.len() as u32).collect();
        NameList { table, picks }
    }
}

impl From<Vec<String>> for NameList {
    fn from(names: Vec<String>) -> Self {
        names.into_iter().collect()
    }
}

impl Index<usize> for NameList {
    type Output = str;

    fn index(&self, index: usize) -> &str {
        &self.table[self.picks[index] as usize]
    }
}

impl<'a> IntoIterator for &'a NameList {
    type Item = &'a str;
    type IntoIter = Box<dyn DoubleEndedIterator<Item = &'a str> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl PartialEq for NameList {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for NameList {}

impl PartialEq<Vec<String>> for NameList {
    fn eq(&self, other: &Vec<String>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().map(String::as_str))
    }
}

impl fmt::Debug for NameList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for NameList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picked_names_read_like_a_vec() {
        let table: Arc<[Arc<str>]> = ["a", "b", "c"].into_iter().map(Arc::from).collect();
        let mut names = NameList::picked(&table, vec![2, 0]);
        assert_eq!(names, vec!["c".to_string(), "a".to_string()]);
        assert_eq!(names.first(), Some("c"));
        assert_eq!(names.get(2), None);
        assert!(!names.contains("b"));
        names.reverse();
        assert_eq!(names.to_vec(), ["a", "c"]);
        assert_eq!(format!("{names:?}"), r#"["a", "c"]"#);
        assert_eq!(serde_json::to_string(&names).unwrap(), r#"["a","c"]"#);
        let same: NameList = ["a", "c"].into_iter().collect();
        assert_eq!(names, same);
        assert!(NameList::default().is_empty());
    }
}
