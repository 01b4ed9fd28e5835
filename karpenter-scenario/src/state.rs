//! What the visitors of one file share while it is parsed, and the first pass that
//! finds every document's kind when some document names it after other fields.
//!
//! serde's entry points (`from_multiple`, `StreamDeserializer`) take a type, not a
//! seed, so per-file state cannot travel through them; it lives here, on the thread
//! that parses the file (each file is parsed on a thread of its own, see
//! `parse::parse_file`), or, for the items of a big list read in parallel, on each
//! thread that reads a run of them (`parallel`).

use std::cell::RefCell;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// `apiVersion` and `kind` as a first pass found them.
pub(crate) type TypeNames = (Option<String>, Option<String>);

/// The kinds of one document and, when it is a list, of its items.
#[derive(Debug, Default)]
pub(crate) struct DocumentKinds {
    own: TypeNames,
    items: Vec<TypeNames>,
}

#[derive(Default)]
struct ParseState {
    /// Documents of this file started so far: the current document's number.
    documents_started: usize,
    /// How many lists enclose the visitor now (0: a document itself).
    list_depth: usize,
    /// The index of the current item of the document's own list.
    current_item: Option<usize>,
    /// The path of the field where the last document failed.
    failed_path: Option<String>,
    /// From the first pass, when a document named its kind last.
    kinds: Option<Vec<DocumentKinds>>,
    /// Set when a document named its kind last and no first pass has run yet.
    needs_kinds: bool,
}

thread_local! {
    static STATE: RefCell<ParseState> = RefCell::new(ParseState::default());
}

fn with<T>(f: impl FnOnce(&mut ParseState) -> T) -> T {
    STATE.with(|state| f(&mut state.borrow_mut()))
}

/// Starts a file (or a second pass over it, with the kinds the first pass found).
pub(crate) fn start_file(kinds: Option<Vec<DocumentKinds>>) {
    with(|s| {
        *s = ParseState {
            kinds,
            ..ParseState::default()
        }
    });
}

/// Starts a run of items of document `document`'s own list on this thread, as the
/// whole file's parse would be placed on reaching them (see `parallel`): no kinds
/// from a first pass, so an item that names its kind last fails here.
pub(crate) fn start_list_items(document: usize) {
    with(|s| {
        *s = ParseState {
            documents_started: document,
            list_depth: 1,
            ..ParseState::default()
        }
    });
}

/// Starts the next document.
pub(crate) fn start_document() {
    with(|s| {
        s.documents_started += 1;
        s.list_depth = 0;
        s.current_item = None;
    });
}

/// The current document's number (from 1), 0 before the first.
pub(crate) fn documents_started() -> usize {
    with(|s| s.documents_started)
}

/// Enters a list's items; returns whether they are the document's own items.
pub(crate) fn enter_list() -> bool {
    with(|s| {
        s.list_depth += 1;
        s.list_depth == 1
    })
}

/// Leaves a list's items.
pub(crate) fn leave_list() {
    with(|s| {
        s.list_depth = s.list_depth.saturating_sub(1);
        if s.list_depth == 0 {
            s.current_item = None;
        }
    });
}

/// Moves to the item `index` of the document's own list.
pub(crate) fn set_item(index: usize) {
    with(|s| s.current_item = Some(index));
}

/// Records where the current document failed (the first record wins).
pub(crate) fn record_failed_path(path: String) {
    with(|s| {
        if s.failed_path.is_none() {
            s.failed_path = Some(path);
        }
    });
}

/// Takes the recorded failure path.
pub(crate) fn take_failed_path() -> Option<String> {
    with(|s| s.failed_path.take())
}

/// The kind the first pass found for the object being read now, or `None` (and a
/// note that a first pass is needed) when there was no first pass.
pub(crate) fn kind_hint() -> Option<TypeNames> {
    with(|s| {
        let Some(kinds) = &s.kinds else {
            s.needs_kinds = true;
            return None;
        };
        let document = kinds.get(s.documents_started.checked_sub(1)?)?;
        match (s.list_depth, s.current_item) {
            (0, _) => Some(document.own.clone()),
            (1, Some(item)) => document.items.get(item).cloned(),
            _ => None,
        }
    })
}

/// Whether a document named its kind last with no first pass to tell it.
pub(crate) fn needs_kinds() -> bool {
    with(|s| s.needs_kinds)
}

/// The first pass: a document's `apiVersion` and `kind`, and its items', with every
/// other value skipped.
pub(crate) struct KindScan(pub DocumentKinds);

impl<'de> Deserialize<'de> for KindScan {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(ScanVisitor { items: true })
            .map(KindScan)
    }
}

struct ScanVisitor {
    /// Whether to look into `items` (only a document's own list is hinted).
    items: bool,
}

impl<'de> Visitor<'de> for ScanVisitor {
    type Value = DocumentKinds;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object or a list")
    }

    fn visit_unit<E: de::Error>(self) -> Result<DocumentKinds, E> {
        Ok(DocumentKinds::default())
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<DocumentKinds, S::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<ItemScan>()? {
            items.push(item.0);
        }
        Ok(DocumentKinds {
            own: (None, None),
            items,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DocumentKinds, A::Error> {
        let mut kinds = DocumentKinds::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "apiVersion" => kinds.own.0 = map.next_value()?,
                "kind" => kinds.own.1 = map.next_value()?,
                "items" if self.items => {
                    kinds.items = map
                        .next_value::<Option<Vec<ItemScan>>>()?
                        .unwrap_or_default()
                        .into_iter()
                        .map(|item| item.0)
                        .collect();
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(kinds)
    }
}

struct ItemScan(TypeNames);

impl<'de> Deserialize<'de> for ItemScan {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let kinds = deserializer.deserialize_any(ScanVisitor { items: false })?;
        Ok(ItemScan(kinds.own))
    }
}
