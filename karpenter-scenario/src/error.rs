//! What can go wrong reading a scenario.

use std::fmt;

use thiserror::Error;

/// An input the loader refused. Every variant names the file; the others say where
/// in it and what is wrong, so that a person can fix the input without guessing.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`super::LoadOptions::max_file_bytes`].
    #[error("{file}: {size} bytes or more is over the limit of {limit} bytes")]
    TooLarge {
        /// The file.
        file: String,
        /// Its size, or the bytes read before the limit was passed.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The text is not valid YAML or JSON, breaks a limit (nesting, aliases), or a
    /// field has the wrong type.
    #[error("{file}{}: {message}", Where { document: *document, line: *line, column: *column, field: field.as_deref() })]
    Parse {
        /// The file.
        file: String,
        /// The document's number (from 1), when known.
        document: Option<usize>,
        /// The line (from 1), when known.
        line: Option<u64>,
        /// The column (from 1), when known.
        column: Option<u64>,
        /// The field's path in the document (`spec.containers[0].resources`), when known.
        field: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A field is well-formed but its value is invalid (a quantity, a requirement, a
    /// duration, ...).
    #[error("{origin}: {object}: field {field}: {message}")]
    Invalid {
        /// Where the object was read from.
        origin: super::Source,
        /// The object, as `Kind namespace/name`.
        object: String,
        /// The field's path in the object.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A cloud provider cannot serve the run: a setting it does not take
    /// (an AWS region name that is not one), or its embedded catalog is
    /// broken.
    #[error("{provider} provider: {message}")]
    Provider {
        /// The provider (`aws`).
        provider: String,
        /// What is wrong.
        message: String,
        /// The provider's own error.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

/// The position part of a parse error's message.
struct Where<'a> {
    document: Option<usize>,
    line: Option<u64>,
    column: Option<u64>,
    field: Option<&'a str>,
}

impl fmt::Display for Where<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(document) = self.document {
            write!(f, ", document {document}")?;
        }
        match (self.line, self.column) {
            (Some(line), Some(column)) => write!(f, ", line {line} column {column}")?,
            (Some(line), None) => write!(f, ", line {line}")?,
            _ => {}
        }
        if let Some(field) = self.field {
            write!(f, ", field {field}")?;
        }
        Ok(())
    }
}

/// An error's text without the `field: ` it starts with: a `LoadError`
/// names the field apart, and saying it twice reads badly.
pub(crate) fn message_after_field(text: &str, field: &str) -> String {
    text.strip_prefix(field)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(text)
        .to_owned()
}
