//! Turning a file's bytes into documents: JSON or YAML, with errors that say where.

use std::sync::Arc;

use super::aliases;
use karpenter_core::pods::PodInterner;

use super::document::{Parsed, TrackedDocument, share_pod_specs};
use super::parallel::{self, Split};
use super::split;
use super::state::{self, KindScan};
use super::{LoadError, LoadOptions, Source};

/// The stack each nesting level may need in the worst case (a debug build, the
/// path tracker's and the typed visitors' frames together), with room to spare.
const STACK_PER_LEVEL: usize = 64 << 10;
/// The stack a parse needs besides its nesting.
const BASE_STACK: usize = 4 << 20;

/// Parses one file into its objects, each with where it came from.
///
/// The parse runs on a thread of its own whose stack fits
/// [`LoadOptions::max_depth`] levels of nesting, so that no caller (a test thread,
/// an async runtime's worker with a small stack) can be overflowed by a document
/// that stays within the limit.
///
/// A file that is one big list (what `kubectl get -o json|yaml` prints) has its
/// items read on several threads ([`parallel`]), to the same objects.
pub(crate) fn parse_file(
    file: &Arc<str>,
    bytes: &[u8],
    options: &LoadOptions,
) -> Result<Vec<(Source, Parsed)>, LoadError> {
    parse_file_split(file, bytes, options, Split::Auto)
}

/// [`parse_file`], with the choice of reading a list's items in parallel.
pub(crate) fn parse_file_split(
    file: &Arc<str>,
    bytes: &[u8],
    options: &LoadOptions,
    split: Split,
) -> Result<Vec<(Source, Parsed)>, LoadError> {
    let stack = BASE_STACK.saturating_add(options.max_depth.saturating_mul(STACK_PER_LEVEL));
    std::thread::scope(|scope| {
        let parser = std::thread::Builder::new()
            .name("karpenter-load".to_string())
            .stack_size(stack)
            .spawn_scoped(scope, || {
                parse_on_this_thread(file, bytes, options, stack, split)
            })
            .map_err(|e| LoadError::Io {
                file: file.to_string(),
                source: e,
            })?;
        parser
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

fn parse_on_this_thread(
    file: &Arc<str>,
    bytes: &[u8],
    options: &LoadOptions,
    stack: usize,
    split: Split,
) -> Result<Vec<(Source, Parsed)>, LoadError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| LoadError::Parse {
        file: file.to_string(),
        document: None,
        line: Some(line_of(bytes, e.valid_up_to())),
        column: None,
        field: None,
        message: format!("not UTF-8 text (byte {})", e.valid_up_to()),
    })?;
    // A list read in parallel comes with its pods' specs shared already.
    let mut interner = PodInterner::new();
    let (documents, shared) = if let Some(documents) = parallel::read(text, options, stack, split) {
        (documents, true)
    } else if split::looks_like_json(text) {
        let documents = match parse_json(file, text, options) {
            Ok(documents) => documents,
            // JSON is YAML too, and flow-style YAML (`{kind: Pod}`) looks like JSON:
            // give YAML a try before blaming the JSON syntax.
            Err(failed) => match *failed {
                (json_error, true) => parse_yaml(file, text, options).map_err(|_| json_error)?,
                (json_error, false) => return Err(json_error),
            },
        };
        (documents, false)
    } else {
        (parse_yaml(file, text, options)?, false)
    };
    let mut out = Vec::new();
    for (index, TrackedDocument(mut items)) in documents.into_iter().enumerate() {
        if !shared {
            share_pod_specs(items.iter_mut().map(|(_, parsed)| parsed), &mut interner);
        }
        for (item, parsed) in items {
            let source = Source {
                file: file.clone(),
                document: index + 1,
                item,
            };
            out.push((source, parsed));
        }
    }
    Ok(out)
}

fn line_of(bytes: &[u8], offset: usize) -> u64 {
    1 + bytes[..offset.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64
}

/// Runs a pass over the file; when a document named its kind after other fields, a
/// first pass finds every document's kind and the pass runs again with them.
fn with_kinds<T, E>(
    pass: impl Fn() -> Result<T, E>,
    scan: impl FnOnce() -> Result<Vec<KindScan>, E>,
) -> Result<T, E> {
    state::start_file(None);
    match pass() {
        Err(_) if state::needs_kinds() => {
            let kinds = scan()?.into_iter().map(|KindScan(kinds)| kinds).collect();
            state::start_file(Some(kinds));
            pass()
        }
        done => done,
    }
}

/// Parses JSON; an error says whether it was one of syntax.
fn parse_json(
    file: &str,
    text: &str,
    options: &LoadOptions,
) -> Result<Vec<TrackedDocument>, Box<(LoadError, bool)>> {
    if let Some(TooDeep {
        document,
        line,
        column,
    }) = too_deep_json(text, options.max_depth)
    {
        let message = format!(
            "nesting deeper than {} levels (LoadOptions::max_depth)",
            options.max_depth
        );
        let error = LoadError::Parse {
            file: file.to_string(),
            document: Some(document),
            line: Some(line),
            column: Some(column),
            field: None,
            message,
        };
        return Err(Box::new((error, false)));
    }
    let json_error = |e: serde_json::Error| {
        let message = e.to_string();
        // serde_json appends " at line L column C"; the error says it apart.
        let message = match message.rfind(" at line ") {
            Some(at) => message[..at].to_string(),
            None => message,
        };
        let started = state::documents_started();
        let error = LoadError::Parse {
            file: file.to_string(),
            document: (started > 0).then_some(started),
            line: Some(e.line() as u64),
            column: Some(e.column() as u64),
            field: state::take_failed_path(),
            message,
        };
        Box::new((error, e.is_syntax()))
    };
    with_kinds(
        || {
            serde_json::Deserializer::from_str(text)
                .into_iter::<TrackedDocument>()
                .collect()
        },
        || {
            serde_json::Deserializer::from_str(text)
                .into_iter::<KindScan>()
                .collect()
        },
    )
    .map_err(json_error)
}

/// Where JSON nests too deep: the document (each top-level value is one) and the
/// line and column, counting from 1.
#[derive(Debug, PartialEq, Eq)]
struct TooDeep {
    document: usize,
    line: u64,
    column: u64,
}

/// Where JSON text first nests deeper than `max`, if it does. serde_json's own limit
/// is fixed at 128 and does not apply to skipped values, so the loader's limit is
/// checked on the text, before parsing.
fn too_deep_json(text: &str, max: usize) -> Option<TooDeep> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut document = 0;
    let (mut line, mut line_start) = (1u64, 0usize);
    for (i, byte) in text.bytes().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                if depth == 0 {
                    document += 1;
                }
                depth += 1;
                if depth > max {
                    let column = (i - line_start + 1) as u64;
                    return Some(TooDeep {
                        document,
                        line,
                        column,
                    });
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'\n' => {
                line += 1;
                line_start = i + 1;
            }
            _ => {}
        }
    }
    None
}

fn parse_yaml(
    file: &str,
    text: &str,
    options: &LoadOptions,
) -> Result<Vec<TrackedDocument>, LoadError> {
    let aliases = aliases::check(text).map_err(|refused| LoadError::Parse {
        file: file.to_string(),
        document: refused.at.map(|(document, _, _)| document),
        line: refused.at.map(|(_, line, _)| line),
        column: refused.at.map(|(_, _, column)| column),
        field: None,
        message: refused.message(),
    })?;
    let yaml_options = options.yaml_options(aliases);
    with_kinds(
        || serde_saphyr::from_multiple_with_options::<TrackedDocument>(text, yaml_options.clone()),
        || serde_saphyr::from_multiple_with_options::<KindScan>(text, yaml_options.clone()),
    )
    .map_err(|e| {
        let location = e.location();
        let started = state::documents_started();
        LoadError::Parse {
            file: file.to_string(),
            document: (started > 0).then_some(started),
            line: location.map(|l| l.line()),
            column: location.map(|l| l.column()),
            field: state::take_failed_path(),
            message: yaml_message(&e),
        }
    })
}

/// serde-saphyr's message in the loader's words: without the position (the error
/// says it apart) and without advice meant for a Rust programmer.
pub(crate) fn yaml_message(error: &serde_saphyr::Error) -> String {
    let text = error.to_string();
    let first = text.lines().next().unwrap_or_default().trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let first = match first.find(" at line ") {
        Some(at) => &first[..at],
        None => first,
    };
    if first.contains("budget breached") || first.contains("alias replay limit") {
        // What a nesting attack or a runaway document runs into.
        format!("the input passes a safety limit of the YAML reader ({first}); see LoadOptions")
    } else if first.contains("DuplicateKeyPolicy") || first.to_lowercase().contains("duplicate") {
        let key = first.split('`').nth(1).or_else(|| first.split('"').nth(1));
        match key {
            Some(key) => format!("duplicate key {key:?}"),
            None => "duplicate key".to_string(),
        }
    } else {
        // "cannot deserialize null into string; use Option<String>": keep the fact.
        first.split("; use ").next().unwrap_or(first).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_depth_is_measured_outside_strings() {
        assert_eq!(too_deep_json(r#"{"a": [1, {"b": "[[[[{{{{"}]}"#, 3), None);
        let deep = TooDeep {
            document: 1,
            line: 2,
            column: 3,
        };
        assert_eq!(too_deep_json("{\"a\":\n [[1]]}", 2), Some(deep));
        let second = TooDeep {
            document: 2,
            line: 1,
            column: 10,
        };
        assert_eq!(too_deep_json("{\"a\":1} [[1]]", 1), Some(second));
        assert_eq!(too_deep_json(r#"{"a": "\"[[["}"#, 1), None);
    }
}
