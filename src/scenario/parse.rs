//! Turning a file's bytes into documents: JSON or YAML, with errors that say where.

use std::sync::Arc;

use super::document::{self, Parsed, TrackedDocument};
use super::{LoadError, LoadOptions, Source};

/// Parses one file into its objects, each with where it came from.
pub(crate) fn parse_file(
    file: &Arc<str>,
    bytes: &[u8],
    options: &LoadOptions,
) -> Result<Vec<(Source, Parsed)>, LoadError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| LoadError::Parse {
        file: file.to_string(),
        document: None,
        line: Some(
            1 + bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u64,
        ),
        column: None,
        field: None,
        message: format!("not UTF-8 text (byte {})", e.valid_up_to()),
    })?;
    let documents = if looks_like_json(text) {
        match parse_json(file, text) {
            Ok(documents) => documents,
            // JSON is YAML too, and flow-style YAML (`{kind: Pod}`) looks like JSON:
            // give YAML a try before blaming the JSON syntax.
            Err(failed) => match *failed {
                (json_error, true) => parse_yaml(file, text, options).map_err(|_| json_error)?,
                (json_error, false) => return Err(json_error),
            },
        }
    } else {
        parse_yaml(file, text, options)?
    };
    let mut out = Vec::new();
    for (index, TrackedDocument(items)) in documents.into_iter().enumerate() {
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

fn looks_like_json(text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
}

/// Parses JSON; an error says whether it was one of syntax.
fn parse_json(file: &str, text: &str) -> Result<Vec<TrackedDocument>, Box<(LoadError, bool)>> {
    document::reset_document_count();
    let mut documents = Vec::new();
    for document in serde_json::Deserializer::from_str(text).into_iter::<TrackedDocument>() {
        match document {
            Ok(document) => documents.push(document),
            Err(e) => {
                let message = e.to_string();
                // serde_json appends " at line L column C"; the error says it apart.
                let message = match message.rfind(" at line ") {
                    Some(at) => message[..at].to_string(),
                    None => message,
                };
                let error = LoadError::Parse {
                    file: file.to_string(),
                    document: Some(documents.len() + 1),
                    line: Some(e.line() as u64),
                    column: Some(e.column() as u64),
                    field: document::take_failed_path(),
                    message,
                };
                return Err(Box::new((error, e.is_syntax())));
            }
        }
    }
    Ok(documents)
}

fn parse_yaml(
    file: &str,
    text: &str,
    options: &LoadOptions,
) -> Result<Vec<TrackedDocument>, LoadError> {
    document::reset_document_count();
    serde_saphyr::from_multiple_with_options::<TrackedDocument>(text, options.yaml_options())
        .map_err(|e| {
            let location = e.location();
            let started = document::documents_started();
            LoadError::Parse {
                file: file.to_string(),
                document: (started > 0).then_some(started),
                line: location.map(|l| l.line()),
                column: location.map(|l| l.column()),
                field: document::take_failed_path(),
                message: yaml_message(&e),
            }
        })
}

/// serde-saphyr's message without the position it also prints (the error says it).
fn yaml_message(error: &serde_saphyr::Error) -> String {
    let text = error.to_string();
    let first = text.lines().next().unwrap_or_default().trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let first = match first.find(" at line ") {
        Some(at) => &first[..at],
        None => first,
    };
    if first.contains("budget breached") {
        // Say which limit in the loader's own words: this is what an alias bomb, a
        // nesting attack or a runaway document runs into.
        format!("the input passes a safety limit of the YAML reader ({first}); see LoadOptions")
    } else {
        first.to_string()
    }
}
