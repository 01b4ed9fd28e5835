//! Finding the items of a file's one big list in its text, so that they can be read
//! apart (`parallel`).
//!
//! Each scan looks only for the shape `kubectl get -o json|yaml` prints: one
//! document, a map whose `items` hold the objects. Anything else, or anything the
//! scan is unsure of, is no layout, and the file is read whole. A layout may be
//! wrong on malformed text; reading its parts then fails, and the file is read
//! whole, which reports the error.

use std::ops::Range;

/// Whether the text reads as JSON: its first non-blank character opens an
/// object or a list. (JSON is YAML too; a caller tries YAML when this fails.)
pub(crate) fn looks_like_json(text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
}

/// Where a list document's items are (each scan also hands each item's text, in
/// order, to a callback as it finds it, so that reading can start at once).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ListLayout {
    /// The part of the text that `placeholder` stands in for: the document with
    /// that part replaced is the document with no items.
    pub list: Range<usize>,
    /// What replaces `list` to leave the document with no items.
    pub placeholder: &'static str,
}

impl ListLayout {
    /// The document without its items.
    pub(super) fn skeleton(&self, text: &str) -> String {
        [
            &text[..self.list.start],
            self.placeholder,
            &text[self.list.end..],
        ]
        .concat()
    }
}

/// What the scan of the items of a JSON list expects next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Not in the items.
    Outside,
    /// An item or the end of the list (after `[`).
    ItemOrEnd,
    /// An item (after `,`).
    Item,
    /// The end of the current item.
    InItem,
    /// `,` or the end of the list (after an item).
    CommaOrEnd,
}

/// The layout of JSON text that is one object whose `items` key holds an array of
/// objects, nested no deeper than `max_depth`. The scan reads strings as JSON does
/// (so a bracket in a string is no bracket) and checks the array's commas, since
/// no part read apart contains them.
pub(crate) fn json_list(
    text: &str,
    max_depth: usize,
    mut item: impl FnMut(Range<usize>),
) -> Option<ListLayout> {
    let bytes = text.as_bytes();
    let (mut depth, mut documents) = (0usize, 0usize);
    // At depth 1: whether the next string is a key, and whether the last key was `items`.
    let (mut expect_key, mut key_is_items) = (false, false);
    let mut expect = Expect::Outside;
    let (mut list_start, mut list, mut item_start) = (None, None, 0);
    let mut items = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        match byte {
            b' ' => {
                // Pretty-printed JSON is mostly indentation.
                i = skip_spaces(bytes, i + 1);
                continue;
            }
            b'\n' | b'\r' | b'\t' => {}
            b'"' => {
                let end = string_end(bytes, i + 1)?;
                if depth == 1 && expect_key {
                    key_is_items = &bytes[i + 1..end] == b"items";
                    expect_key = false;
                } else if depth == 2 && expect != Expect::Outside {
                    return None; // an item that is no object
                }
                i = end;
            }
            b'{' | b'[' => {
                match depth {
                    0 if byte == b'{' && documents == 0 => documents = 1,
                    0 => return None, // an array, or a second document
                    1 if byte == b'[' && key_is_items => {
                        if list_start.is_some() {
                            return None; // `items` twice
                        }
                        list_start = Some(i);
                        expect = Expect::ItemOrEnd;
                    }
                    2 if expect != Expect::Outside => {
                        if byte != b'{' || !matches!(expect, Expect::ItemOrEnd | Expect::Item) {
                            return None;
                        }
                        item_start = i;
                        expect = Expect::InItem;
                    }
                    _ => {}
                }
                depth += 1;
                expect_key = depth == 1;
                if depth > max_depth {
                    return None;
                }
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                match depth {
                    2 if expect == Expect::InItem => {
                        item(item_start..i + 1);
                        items += 1;
                        expect = Expect::CommaOrEnd;
                    }
                    1 if expect != Expect::Outside => {
                        if byte != b']' || !matches!(expect, Expect::ItemOrEnd | Expect::CommaOrEnd)
                        {
                            return None;
                        }
                        list = Some(list_start?..i + 1);
                        expect = Expect::Outside;
                    }
                    _ => {}
                }
            }
            b',' => match depth {
                1 => expect_key = true,
                2 if expect == Expect::CommaOrEnd => expect = Expect::Item,
                2 if expect != Expect::Outside => return None,
                _ => {}
            },
            _ if depth == 0 => return None, // text outside the document
            _ if depth == 2 && expect != Expect::Outside => return None, // a scalar item
            _ => {}
        }
        i += 1;
    }
    if items == 0 {
        return None; // nothing to read apart
    }
    Some(ListLayout {
        list: list?,
        placeholder: "[]",
    })
}

/// The index of the `"` that ends the JSON string whose text starts at `from`.
fn string_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    loop {
        // Eight bytes at a time up to a quote or a backslash.
        while let Some(word) = word_at(bytes, i) {
            let found = zero_bytes(word ^ splat(b'"')) | zero_bytes(word ^ splat(b'\\'));
            if found != 0 {
                // The lowest flag is exact (a false one only ever follows a true one).
                i += found.trailing_zeros() as usize / 8;
                break;
            }
            i += 8;
        }
        match *bytes.get(i)? {
            b'"' => return Some(i),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// The index of the first byte from `from` on that is not a space.
fn skip_spaces(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while word_at(bytes, i) == Some(splat(b' ')) {
        i += 8;
    }
    while bytes.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

/// The eight bytes from `i` on, as a little-endian word (the first byte lowest),
/// if there are eight.
fn word_at(bytes: &[u8], i: usize) -> Option<u64> {
    let chunk = bytes.get(i..)?.first_chunk::<8>()?;
    Some(u64::from_le_bytes(*chunk))
}

/// A word of eight `byte`s.
const fn splat(byte: u8) -> u64 {
    u64::from_ne_bytes([byte; 8])
}

/// The high bit of each zero byte of `word` set (the classic test: exact up to the
/// first zero byte, which is all that is read of it).
fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(splat(0x01)) & !word & splat(0x80)
}

/// The layout of YAML text shaped as `kubectl get -o yaml` prints a list: a map
/// with an `items:` line at the margin, followed by its items each starting with a
/// `- ` line at the margin, and more keys at the margin after them.
///
/// Only a line at the margin ends an item, and in YAML such a line can continue
/// nothing an item started but a quoted scalar or a flow collection, which an item
/// read apart then leaves open: an error, so the file is read whole. A file with
/// directives (`%`) is left whole, since they would not apply to the items read
/// apart.
pub(crate) fn yaml_list(text: &str, mut item: impl FnMut(Range<usize>)) -> Option<ListLayout> {
    let mut lines = text.split_inclusive('\n').scan(0, |offset, line| {
        let start = *offset;
        *offset += line.len();
        Some((start, line))
    });
    let list_start = loop {
        let (start, line) = lines.next()?;
        if line.starts_with('%') {
            return None;
        }
        if line.trim_end() == "items:" {
            break start;
        }
    };
    // Where the current item starts.
    let mut current: Option<usize> = None;
    let mut end = text.len();
    for (start, line) in lines {
        let bytes = line.as_bytes();
        match bytes[0] {
            b'-' if matches!(bytes.get(1), Some(b' ' | b'\n' | b'\r') | None) => {
                if let Some(current) = current {
                    item(current..start);
                }
                current = Some(start);
            }
            // A continuation of the current item; before the first, only comments.
            b' ' if current.is_some() => {}
            b'#' | b'\n' | b'\r' => {}
            b' ' if line.trim().is_empty() => {}
            _ => {
                end = start;
                break;
            }
        }
    }
    // Nothing to read apart, or items indented under `items:`, which are left whole.
    item(current?..end);
    Some(ListLayout {
        list: list_start..end,
        placeholder: "items: []\n",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout and the items' text.
    fn json(text: &str, max_depth: usize) -> Option<(ListLayout, Vec<&str>)> {
        let mut items = Vec::new();
        let layout = json_list(text, max_depth, |item| items.push(&text[item]))?;
        Some((layout, items))
    }

    fn yaml(text: &str) -> Option<(ListLayout, Vec<&str>)> {
        let mut items = Vec::new();
        let layout = yaml_list(text, |item| items.push(&text[item]))?;
        Some((layout, items))
    }

    #[test]
    fn a_json_list_is_split_into_its_objects() {
        let text =
            r#"{"apiVersion": "v1", "items": [ {"a": "[{"}, {"b": {"c": []}} ], "kind": "List"}"#;
        let (layout, items) = json(text, 10).expect("a list");
        assert_eq!(items, [r#"{"a": "[{"}"#, r#"{"b": {"c": []}}"#]);
        assert_eq!(
            layout.skeleton(text),
            r#"{"apiVersion": "v1", "items": [], "kind": "List"}"#
        );
    }

    #[test]
    fn json_that_is_not_one_list_of_objects_has_no_layout() {
        for text in [
            r#"{"items": [1, {"a": 1}]}"#,
            r#"{"items": [{"a": 1} {"b": 1}]}"#,
            r#"{"items": [{"a": 1},]}"#,
            r#"{"items": [,{"a": 1}]}"#,
            r#"{"items": [{"a": 1}]} {"items": []}"#,
            r#"{"items": [{"a": 1}], "items": []}"#,
            r#"[{"items": [{"a": 1}]}]"#,
            r#"{"kind": "List"}"#,
            r#"{"items": []}"#,
            r#"{"items": [{"a": "unterminated}]}"#,
            r#"{"items": [{"a": [[[1]]]}]}"#,
        ] {
            assert_eq!(json(text, 4), None, "{text}");
        }
        let escaped_key = r#"{"\u0069tems": [{"a": 1}]}"#;
        assert_eq!(json(escaped_key, 4), None);
    }

    #[test]
    fn a_kubectl_yaml_list_is_split_at_its_items() {
        let text = "apiVersion: v1\nitems:\n# first\n- kind: Pod\n  a: |\n    - x\n\n- kind: Node\n# note\nkind: List\n";
        let (layout, items) = yaml(text).expect("a list");
        assert_eq!(
            items,
            ["- kind: Pod\n  a: |\n    - x\n\n", "- kind: Node\n# note\n"]
        );
        assert_eq!(
            layout.skeleton(text),
            "apiVersion: v1\nitems: []\nkind: List\n"
        );
    }

    #[test]
    fn yaml_not_shaped_as_kubectl_prints_has_no_layout() {
        assert_eq!(yaml("kind: Pod\n"), None);
        assert_eq!(yaml("%YAML 1.2\n---\nitems:\n- a: 1\n"), None);
        assert_eq!(yaml("items:\n  - a: 1\n"), None);
        assert_eq!(yaml("items: []\n"), None);
    }
}
