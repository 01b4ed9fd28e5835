//! Reading the items of a file's one big list on several threads.
//!
//! `kubectl get -o json|yaml` prints a cluster as one list document. Its items are
//! found in the text ([`super::split`]) and read in runs, as the scan finds them, on
//! a pool of [`rayon::current_num_threads`] threads (what `karpenter-sim --threads`
//! sets), each run with the parse state the whole file's parse would have on
//! reaching it; they are put back in order, and the document without its items is
//! read on its own.
//!
//! This only ever answers for a file that reads without error: when anything fails
//! (the text is not what the scan took it for, an item is invalid, an item names
//! its kind after other fields, an anchor is used in another run), the file is read
//! whole as before, which gives the error, its document, line, column and field,
//! exactly as it always has. Each part is read with limits no looser than the whole
//! file's, so a part never reads where the whole file would fail.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError, mpsc};

use karpenter_core::pods::PodInterner;

use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde_saphyr::granit_parser::{Event, Parser};

use super::document::{self, Items, TrackedDocument};
use super::split::{self, ListLayout};
use super::{LoadOptions, aliases, state};

/// Files smaller than this are read whole: a few milliseconds' work.
const MIN_BYTES: usize = 4 << 20;
/// About how much text one run of items holds: enough to make a run's set-up
/// negligible, few enough bytes that the threads finish together.
const RUN_BYTES: usize = 1 << 20;
/// JSON nested deeper than this is read whole: serde_json's own limit (128) counts
/// from the document, a part read apart from its item, two levels down.
const JSON_MAX_DEPTH: usize = 100;
/// The levels above an item in the whole document (the document's map, `items`)
/// against one in a run (the run's sequence): a run's depth limit is this much
/// tighter, so that no item a run reads is too deep for the whole file.
const LEVELS_ABOVE_ITEMS: usize = 2;

/// Whether a file's list may be read in parallel.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Split {
    /// When the file is big enough to gain from it.
    Auto,
    /// Never: the file is read whole.
    #[cfg(test)]
    Never,
    /// Whenever the file is shaped for it, in runs of about `run_bytes`.
    #[cfg(test)]
    Always { run_bytes: usize },
}

/// The file's one document, its list's items read in parallel, or `None` when the
/// file is not one big list or reading it so failed: read it whole then.
///
/// `stack` is the stack each thread needs for [`LoadOptions::max_depth`].
pub(crate) fn read(
    text: &str,
    options: &LoadOptions,
    stack: usize,
    split: Split,
) -> Option<Vec<TrackedDocument>> {
    let run_bytes = match split {
        Split::Auto if text.len() < MIN_BYTES => return None,
        Split::Auto => RUN_BYTES,
        #[cfg(test)]
        Split::Never => return None,
        #[cfg(test)]
        Split::Always { run_bytes } => run_bytes,
    };
    if split::looks_like_json(text) {
        read_json(text, options, stack, run_bytes)
    } else {
        read_yaml(text, options, stack, run_bytes)
    }
}

fn read_json(
    text: &str,
    options: &LoadOptions,
    stack: usize,
    run_bytes: usize,
) -> Option<Vec<TrackedDocument>> {
    let depth = options.max_depth.min(JSON_MAX_DEPTH);
    let (layout, items) = read_runs(
        stack,
        run_bytes,
        |item| split::json_list(text, depth, item),
        |first, items| {
            let mut out = Vec::with_capacity(items.len());
            for (index, range) in (first..).zip(items) {
                let mut item = serde_json::Deserializer::from_str(&text[range.clone()]);
                document::read_item(&mut out, index, true, |seed| {
                    seed.deserialize(&mut item).map(Some)
                })
                .ok()?;
                item.end().ok()?;
            }
            Some(out)
        },
    )?;
    state::start_file(None);
    let skeleton = layout.skeleton(text);
    let documents = serde_json::Deserializer::from_str(&skeleton)
        .into_iter::<TrackedDocument>()
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    with_items(documents, items)
}

fn read_yaml(
    text: &str,
    options: &LoadOptions,
    stack: usize,
    run_bytes: usize,
) -> Option<Vec<TrackedDocument>> {
    let aliases = aliases::check(text).ok()?;
    let run_limits = options
        .clone()
        .with_max_depth(options.max_depth.saturating_sub(LEVELS_ABOVE_ITEMS));
    let (layout, items) = read_runs(
        stack,
        run_bytes,
        |item| split::yaml_list(text, item),
        |first, items| {
            let run = items.first()?.start..items.last()?.end;
            // serde-saphyr's options are not `Sync`: each run makes its own.
            let (read, count) = serde_saphyr::with_deserializer_from_str_with_options(
                &text[run],
                run_limits.yaml_options(aliases),
                |deserializer| RunSeed { first }.deserialize(deserializer),
            )
            .ok()?;
            (count == items.len()).then_some(read)
        },
    )?;
    let skeleton = layout.skeleton(text);
    let placeholder_line = 1 + text[..layout.list.start].matches('\n').count();
    if !items_key_on_line(&skeleton, placeholder_line) {
        return None;
    }
    state::start_file(None);
    let documents = serde_saphyr::from_multiple_with_options::<TrackedDocument>(
        &skeleton,
        options.yaml_options(aliases),
    )
    .ok()?;
    with_items(documents, items)
}

/// Whether the YAML `skeleton` is one document whose map has the key `items` at
/// the start of line `line`: the placeholder is a key of the document, not text
/// inside a scalar that the scan took for one.
fn items_key_on_line(skeleton: &str, line: usize) -> bool {
    // The open collections: for a map, whether its next node is a key.
    let mut open: Vec<Option<bool>> = Vec::new();
    let (mut documents, mut found) = (0, false);
    let done = |open: &mut Vec<Option<bool>>| {
        if let Some(Some(key_next)) = open.last_mut() {
            *key_next = !*key_next;
        }
    };
    for event in Parser::new_from_str(skeleton) {
        let Ok((event, span)) = event else {
            return false;
        };
        match event {
            Event::DocumentStart(..) => documents += 1,
            Event::MappingStart(..) => open.push(Some(true)),
            Event::SequenceStart(..) => open.push(None),
            Event::MappingEnd | Event::SequenceEnd => {
                open.pop();
                done(&mut open);
            }
            Event::Scalar(value, ..) => {
                let at = (span.start.line(), span.start.col());
                found |= open == [Some(true)] && value == "items" && at == (line, 0);
                done(&mut open);
            }
            Event::Alias(_) => done(&mut open),
            _ => {}
        }
    }
    documents == 1 && found
}

/// The one document of `documents`, which was read without its items, with them.
fn with_items(documents: Vec<TrackedDocument>, items: Items) -> Option<Vec<TrackedDocument>> {
    let [TrackedDocument(none)] = documents.as_slice() else {
        return None;
    };
    none.is_empty().then(|| vec![TrackedDocument(items)])
}

/// Runs `scan`, which finds the list and hands over each item's text as it goes,
/// and reads the items in runs of about `run_bytes` with `read_run` (the index of
/// a run's first item, its items' text) on a pool of threads as they are found:
/// the list's layout and its items, in order.
fn read_runs(
    stack: usize,
    run_bytes: usize,
    scan: impl FnOnce(&mut dyn FnMut(Range<usize>)) -> Option<ListLayout> + Send,
    read_run: impl Fn(usize, &[Range<usize>]) -> Option<Items> + Sync,
) -> Option<(ListLayout, Items)> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(rayon::current_num_threads())
        .stack_size(stack)
        .thread_name(|i| format!("karpenter-load-{i}"))
        .build()
        .ok()?;
    let failed = AtomicBool::new(false);
    // One interner for the whole list, so that the replicas of a template
    // share a spec whichever runs they fall in.
    let interner = Mutex::new(PodInterner::new());
    let (done, read) = mpsc::channel();
    let layout = pool.scope(|scope| {
        let (read_run, failed, interner) = (&read_run, &failed, &interner);
        let spawn = |number: usize, first: usize, items: Vec<Range<usize>>| {
            let done = done.clone();
            scope.spawn(move |_| {
                let read = if failed.load(Ordering::Relaxed) {
                    None
                } else {
                    // Where the whole file's parse would be on reaching these items.
                    state::start_list_items(1);
                    let mut read = read_run(first, &items);
                    if let Some(read) = read.as_mut() {
                        let mut interner = interner.lock().unwrap_or_else(PoisonError::into_inner);
                        document::share_pod_specs(
                            read.iter_mut().map(|(_, parsed)| parsed),
                            &mut interner,
                        );
                    }
                    read
                };
                failed.fetch_or(read.is_none(), Ordering::Relaxed);
                // The receiver outlives the scope.
                let _ = done.send((number, read));
            });
        };
        let (mut run, mut first, mut number) = (Vec::new(), 0, 0);
        let layout = scan(&mut |item: Range<usize>| {
            run.push(item);
            let bytes = run.last().map_or(0, |last| last.end) - run[0].start;
            if bytes >= run_bytes {
                let items = std::mem::take(&mut run);
                let count = items.len();
                spawn(number, first, items);
                (first, number) = (first + count, number + 1);
            }
        });
        if !run.is_empty() {
            spawn(number, first, run);
        }
        layout
    })?;
    drop(done);
    let mut runs: Vec<(usize, Option<Items>)> = read.into_iter().collect();
    runs.sort_unstable_by_key(|(number, _)| *number);
    let mut items = Vec::new();
    for (_, run) in runs {
        items.extend(run?);
    }
    Some((layout, items))
}

/// A run of YAML items: a sequence whose first item is the list's item `first`.
/// Reads them and counts them.
struct RunSeed {
    first: usize,
}

impl<'de> DeserializeSeed<'de> for RunSeed {
    type Value = (Items, usize);
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RunSeed {
    type Value = (Items, usize);

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a run of a list's items")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let mut out = Vec::new();
        let mut count = 0;
        while document::read_item(&mut out, self.first + count, true, |seed| {
            seq.next_element_seed(seed)
        })? {
            count += 1;
        }
        Ok((out, count))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use karpenter_fake::generate::{manifest, scale::scale_cluster};

    use super::*;
    use crate::parse::parse_file_split;

    /// What the file reads to, whole and in runs of about `run_bytes`, as text to
    /// compare: the objects with their sources, or the error's message.
    fn whole_and_in_runs(text: &str, options: &LoadOptions, run_bytes: usize) -> [String; 2] {
        let file: Arc<str> = Arc::from("cluster");
        [Split::Never, Split::Always { run_bytes }].map(|split| {
            match parse_file_split(&file, text.as_bytes(), options, split) {
                Ok(read) => format!("{read:?}"),
                Err(error) => format!("error: {error}"),
            }
        })
    }

    fn assert_same(text: &str, options: &LoadOptions) -> String {
        let mut first = None;
        for run_bytes in [1, 2_000, 50_000] {
            let [whole, runs] = whole_and_in_runs(text, options, run_bytes);
            assert_eq!(whole, runs, "in runs of {run_bytes} bytes");
            first.get_or_insert(whole);
        }
        first.unwrap_or_default()
    }

    fn cluster() -> Vec<serde_json::Value> {
        manifest::snapshot_documents(&scale_cluster(12, 42)).expect("serializes")
    }

    #[test]
    fn a_kubectl_list_reads_the_same_in_runs_as_whole() {
        let options = LoadOptions::default();
        let json = manifest::to_kubectl_json(cluster());
        let yaml = manifest::to_kubectl_yaml(&cluster());
        for text in [&json, &yaml] {
            let run = Split::Always { run_bytes: 1 };
            let read = read(text, &options, 8 << 20, run).expect("read in runs");
            assert!(read[0].0.len() > 100, "{} objects", read[0].0.len());
            let whole = assert_same(text, &options);
            assert!(!whole.starts_with("error"), "{whole}");
        }
    }

    /// Item `n` of the cluster's list as JSON, with `edit` applied.
    fn edited(n: usize, edit: impl FnOnce(&mut serde_json::Value)) -> Vec<serde_json::Value> {
        let mut items = cluster();
        edit(&mut items[n]);
        items
    }

    #[test]
    fn an_invalid_item_fails_as_it_does_whole() {
        let options = LoadOptions::default();
        let items = edited(60, |pod| pod["spec"]["containers"] = "app".into());
        for text in [
            manifest::to_kubectl_json(items.clone()),
            manifest::to_kubectl_yaml(&items),
        ] {
            let error = assert_same(&text, &options);
            assert!(
                error.starts_with("error: cluster, document 1, line ")
                    && error.contains("field items[60].spec.containers"),
                "{error}"
            );
        }
    }

    #[test]
    fn an_item_naming_its_kind_last_reads_as_it_does_whole() {
        let options = LoadOptions::default();
        // Keys are written sorted: this one comes before `apiVersion` and `kind`.
        let items = edited(40, |pod| pod["aaa"] = 1.into());
        for text in [
            manifest::to_kubectl_json(items.clone()),
            manifest::to_kubectl_yaml(&items),
        ] {
            let whole = assert_same(&text, &options);
            assert!(!whole.starts_with("error"), "{whole}");
        }
    }

    #[test]
    fn yaml_items_that_share_anchors_or_span_lines_read_as_they_do_whole() {
        let options = LoadOptions::default();
        let pod = |name: &str, extra: &str| {
            format!(
                "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: {name}\n{extra}  spec:\n    containers: [{{name: a}}]\n"
            )
        };
        let cases = [
            // An anchor in one item, its alias in another.
            [pod("a", "    labels: &l {app: x}\n"), pod("b", "  x: *l\n")].concat(),
            // A quoted scalar whose text continues on a line like an item's.
            [
                pod("a", "    annotations: {n: \"one\n- two\"}\n"),
                pod("b", ""),
            ]
            .concat(),
            [pod("a", "    annotations: {n: [1,\n- 2]}\n"), pod("b", "")].concat(),
        ];
        for items in cases {
            let text = format!("apiVersion: v1\nitems:\n{items}kind: List\n");
            assert_same(&text, &options);
        }
        // `items:` inside a scalar of the document is no key of it.
        let text = "apiVersion: v1\nkind: List\nx: \"a\nitems:\n- b\"\n";
        assert_same(text, &options);
        let read = read(text, &options, 8 << 20, Split::Always { run_bytes: 1 });
        assert!(read.is_none());
    }

    #[test]
    fn depth_limits_hold_as_they_do_whole() {
        let nested = |depth: usize, json: bool| {
            let open = if json { "{\"a\": " } else { "{a: " };
            let value = format!("{}1{}", open.repeat(depth), "}".repeat(depth));
            let pod = |name: &str| {
                if json {
                    format!(
                        r#"{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "{name}", "labels": {{"x": "y"}}}}, "x": {value}}}"#
                    )
                } else {
                    format!(
                        "- apiVersion: v1\n  kind: Pod\n  metadata: {{name: {name}}}\n  x: {value}\n"
                    )
                }
            };
            if json {
                format!(
                    r#"{{"apiVersion": "v1", "items": [{}, {}], "kind": "List"}}"#,
                    pod("a"),
                    pod("b")
                )
            } else {
                format!(
                    "apiVersion: v1\nitems:\n{}{}kind: List\n",
                    pod("a"),
                    pod("b")
                )
            }
        };
        for json in [true, false] {
            for depth in 1..=8 {
                let options = LoadOptions::default().with_max_depth(7);
                assert_same(&nested(depth, json), &options);
            }
        }
    }
}
