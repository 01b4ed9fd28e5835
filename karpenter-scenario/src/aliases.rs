//! What a YAML file's aliases expand to, judged before anything is expanded.
//!
//! A YAML alias (`*name`) stands for a copy of the node its anchor (`&name`) marks,
//! so a few kilobytes of nested aliases (a "billion laughs") can stand for more
//! nodes than memory holds. A fixed cap on the number of aliases refuses legitimate
//! files too: PyYAML writes an anchor and an alias wherever one object is used twice,
//! so a generated file of 20,000 pods whose spread selectors reuse the pods' labels
//! holds 20,000 harmless aliases.
//!
//! The loader therefore judges aliases as go-yaml does (what kubectl reads YAML
//! with): by the share of a document's decoded nodes that come from expanding
//! aliases. That share may be up to 99 % in documents of up to 400,000 nodes, falls
//! evenly to 10 % at 4,000,000 nodes, and stays at 10 % beyond; documents with at
//! most 100 nodes from aliases, or at most 1,000 nodes in all, always pass.
//!
//! go-yaml judges one document at a time, so a stream of many small documents,
//! each 99 % aliases, would pass it while expanding a hundredfold. The loader reads
//! a file's documents together, so it also judges the file: its aliases may expand
//! to as many nodes as the file has of its own, or to more when the file as one
//! document would pass go-yaml's rule. Memory for expansions is so bounded by a
//! small multiple of the input's own size, and no file go-yaml's rule passes as a
//! whole is refused.
//!
//! The scan walks the parser's events once and adds each alias's expansion as a
//! number (the size of its anchored node, itself counted with the aliases inside
//! it), so a bomb is refused after reading its text, never after expanding it.

use std::collections::HashMap;

use serde_saphyr::granit_parser::{Event, Parser};

/// go-yaml's thresholds: documents this small in all, or with this few nodes from
/// aliases, are never refused.
const MIN_NODES: u64 = 1_000;
const MIN_ALIASED: u64 = 100;
/// Up to this many nodes a document may take 99 % of them from aliases ...
const RATIO_RANGE_LOW: u64 = 400_000;
/// ... from here on 10 %, and evenly less in between.
const RATIO_RANGE_HIGH: u64 = 4_000_000;

/// The share of a document's `nodes` that may come from aliases.
fn allowed_ratio(nodes: u64) -> f64 {
    if nodes <= RATIO_RANGE_LOW {
        0.99
    } else if nodes >= RATIO_RANGE_HIGH {
        0.10
    } else {
        let along = (nodes - RATIO_RANGE_LOW) as f64 / (RATIO_RANGE_HIGH - RATIO_RANGE_LOW) as f64;
        0.99 - 0.89 * along
    }
}

/// Whether a document that has decoded `nodes`, `aliased` of them from aliases,
/// expands too much.
fn excessive(nodes: u64, aliased: u64) -> bool {
    aliased > MIN_ALIASED
        && nodes > MIN_NODES
        && aliased as f64 / nodes as f64 > allowed_ratio(nodes)
}

/// What a file's aliases expand to, when every document passed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AliasUse {
    /// Nodes all aliases of the file expand to.
    pub expanded_nodes: u64,
    /// Nodes under anchors, as recorded for later replay (an anchor inside another
    /// counted in both).
    pub anchored_nodes: u64,
}

/// A document, or a whole file, whose aliases expand too much.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ExcessiveAliasing {
    /// Where: the document (from 1) and the line and column (from 1) of the alias
    /// that passed the limit; `None` when the file as a whole did.
    pub at: Option<(usize, u64, u64)>,
    /// The nodes decoded by then (the document's, or the file's).
    pub nodes: u64,
    /// How many of them came from aliases.
    pub aliased: u64,
}

impl ExcessiveAliasing {
    /// The refusal in the loader's words.
    pub(crate) fn message(&self) -> String {
        let percent = allowed_ratio(self.nodes) * 100.0;
        match self.at {
            Some(_) => format!(
                "excessive aliasing: the aliases expand to {} of the document's first {} nodes, \
                 more than the {percent:.0} % a document of that size may take from aliases",
                self.aliased, self.nodes
            ),
            None => format!(
                "excessive aliasing: the aliases expand to {} of the file's {} nodes, more than \
                 the file's own nodes and more than the {percent:.0} % a document of that size \
                 may take from aliases",
                self.aliased, self.nodes
            ),
        }
    }
}

/// One document's counts.
#[derive(Default)]
struct DocumentCount {
    /// Nodes decoded so far, expansions included (go-yaml's decode count).
    nodes: u64,
    /// How many of them came from aliases.
    aliased: u64,
    /// The expanded size of each anchor, by the parser's anchor id.
    anchors: HashMap<usize, u64>,
    /// The open collections: their anchor id (0: none) and `nodes` when they opened.
    open: Vec<(usize, u64)>,
}

impl DocumentCount {
    /// One node of the document's own text.
    fn own(&mut self) {
        self.nodes = self.nodes.saturating_add(1);
    }

    /// An alias: one node of its own and a copy of its anchor's.
    fn alias(&mut self, anchor: usize) -> u64 {
        self.own();
        // An alias of a node still open (a recursive alias) has no size yet; the
        // deserializer refuses it, so it adds nothing here.
        let size = self.anchors.get(&anchor).copied().unwrap_or(0);
        self.nodes = self.nodes.saturating_add(size);
        self.aliased = self.aliased.saturating_add(size);
        size
    }

    /// A node that an anchor marks, with its expanded size.
    fn anchored(&mut self, anchor: usize, size: u64) -> u64 {
        if anchor == 0 {
            return 0;
        }
        self.anchors.insert(anchor, size);
        size
    }
}

/// Counts what each document's aliases expand to and refuses the first document
/// that goes past go-yaml's share. Text the parser cannot read is left to the
/// deserializer, which reports it with a position; what came before it is judged.
pub(crate) fn check(text: &str) -> Result<AliasUse, ExcessiveAliasing> {
    let mut total = AliasUse::default();
    // An alias needs an anchor before it: without both marks there is nothing to
    // count, and most files (kubectl writes no anchors) skip the walk.
    if !(text.contains('&') && text.contains('*')) {
        return Ok(total);
    }
    let mut document = 0usize;
    let mut count = DocumentCount::default();
    let mut file_nodes = 0u64;
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else { break };
        match event {
            Event::DocumentStart(..) => {
                document += 1;
                file_nodes = file_nodes.saturating_add(count.nodes);
                count = DocumentCount::default();
                // go-yaml decodes the document node too.
                count.own();
            }
            Event::Scalar(_, _, anchor, _) => {
                count.own();
                total.anchored_nodes = total
                    .anchored_nodes
                    .saturating_add(count.anchored(anchor, 1));
            }
            Event::SequenceStart(_, anchor, _) | Event::MappingStart(_, anchor, _) => {
                count.own();
                count.open.push((anchor, count.nodes - 1));
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((anchor, start)) = count.open.pop() {
                    let size = count.nodes - start;
                    total.anchored_nodes = total
                        .anchored_nodes
                        .saturating_add(count.anchored(anchor, size));
                }
            }
            Event::Alias(anchor) => {
                let size = count.alias(anchor);
                total.expanded_nodes = total.expanded_nodes.saturating_add(size);
                if excessive(count.nodes, count.aliased) {
                    let (line, column) = (span.start.line() as u64, span.start.col() as u64 + 1);
                    return Err(ExcessiveAliasing {
                        at: Some((document.max(1), line, column)),
                        nodes: count.nodes,
                        aliased: count.aliased,
                    });
                }
            }
            _ => {}
        }
    }
    // Judged once every document is counted: the file's own nodes may come late.
    let file_nodes = file_nodes.saturating_add(count.nodes);
    let own = file_nodes.saturating_sub(total.expanded_nodes);
    if total.expanded_nodes > own && excessive(file_nodes, total.expanded_nodes) {
        return Err(ExcessiveAliasing {
            at: None,
            nodes: file_nodes,
            aliased: total.expanded_nodes,
        });
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowed_share_falls_from_99_to_10_percent() {
        assert_eq!(allowed_ratio(1_000), 0.99);
        assert_eq!(allowed_ratio(400_000), 0.99);
        assert!((allowed_ratio(2_200_000) - 0.545).abs() < 1e-9);
        assert_eq!(allowed_ratio(4_000_000), 0.10);
        assert_eq!(allowed_ratio(u64::MAX), 0.10);
    }

    #[test]
    fn small_documents_and_few_aliases_always_pass() {
        assert!(!excessive(1_000, 999));
        assert!(!excessive(1_000_000, 100));
        assert!(excessive(1_001, 995));
        assert!(excessive(10_000_000, 1_000_001));
        assert!(!excessive(10_000_000, 1_000_000));
    }

    #[test]
    fn an_alias_counts_its_anchors_nodes_with_the_aliases_inside() {
        let text = "a: &a {x: 1, y: 2}\nb: &b [*a, *a]\nc: *b\n";
        // a's mapping is 5 nodes; b is 1 + 2 aliases of 1 + 5 each = 13; c's alias
        // adds 13 more.
        let used = check(text).unwrap();
        assert_eq!(used.expanded_nodes, 5 + 5 + 13);
        assert_eq!(used.anchored_nodes, 5 + 13);
    }

    #[test]
    fn anchors_belong_to_their_document() {
        let text = "a: &x [1, 2, 3]\nb: *x\n---\nc: &x 1\nd: *x\n";
        assert_eq!(check(text).unwrap().expanded_nodes, 4 + 1);
    }

    #[test]
    fn a_bomb_is_refused_at_the_alias_that_passes_the_share() {
        let mut text = String::from("l0: &l0 lol\n");
        for level in 1..=9 {
            let aliases = vec![format!("*l{}", level - 1); 10].join(", ");
            text.push_str(&format!("l{level}: &l{level} [{aliases}]\n"));
        }
        let refused = check(&text).unwrap_err();
        // Level 3 ends with 2,430 of 2,470 nodes from aliases (98.4 %); level 4's
        // first alias brings it to 4,651 of 4,694 (99.1 %).
        assert_eq!(refused.at, Some((1, 5, 10)));
        assert_eq!((refused.nodes, refused.aliased), (4_694, 4_651));
        assert!(refused.aliased as f64 / refused.nodes as f64 > 0.99);
        assert!(refused.message().contains("excessive aliasing"));
    }

    /// A document of 114 own nodes whose 10 aliases copy a 99-node list: 990
    /// of its 1,104 nodes (90 %) come from aliases.
    fn heavy_document() -> String {
        let mut text = String::from("a: &a [");
        text.push_str(&vec!["x"; 98].join(","));
        text.push_str("]\nb: [");
        text.push_str(&["*a"; 10].join(","));
        text.push_str("]\n");
        text
    }

    #[test]
    fn a_file_may_take_from_aliases_what_it_could_as_one_document() {
        let one = heavy_document();
        assert_eq!(check(&one).unwrap().expanded_nodes, 990);
        // Together, 400 of them expand to far more nodes than the file's own, but
        // as one document of 441,600 nodes the file may take 98 % from aliases.
        let file = vec![one.as_str(); 400].join("---\n");
        assert_eq!(check(&file).unwrap().expanded_nodes, 400 * 990);
    }

    #[test]
    fn many_small_documents_each_nearly_all_aliases_are_refused_together() {
        // Each document: 100 own nodes, 9,900 from aliases (99 %); go-yaml would
        // pass each, but 500 of them would expand to 4,950,000 nodes from 50,000.
        let mut one = String::from("a: &a [");
        one.push_str(&vec!["x"; 89].join(","));
        one.push_str("]\nb: [");
        one.push_str(&vec!["*a"; 110].join(","));
        one.push_str("]\n");
        let single = check(&one).unwrap();
        assert_eq!(single.expanded_nodes, 110 * 90);
        let file = vec![one.as_str(); 500].join("---\n");
        let refused = check(&file).unwrap_err();
        assert_eq!(refused.at, None);
        assert_eq!(refused.aliased, 500 * 110 * 90);
        assert!(
            refused.message().contains("the file's"),
            "{}",
            refused.message()
        );
    }

    #[test]
    fn text_the_parser_cannot_read_is_judged_up_to_there() {
        assert_eq!(check("a: &a [1]\nb: *a\nc: [\n").unwrap().expanded_nodes, 2);
        assert_eq!(check("a: *nothing & *").unwrap(), AliasUse::default());
    }
}
