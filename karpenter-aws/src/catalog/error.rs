//! What can be wrong with the embedded data, located by file, line and
//! column.

use thiserror::Error;

/// A cell or line of the embedded data that does not read: a data file was
/// copied wrong. Lines and columns count from 1; column 0 means the whole
/// line.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("data/{file} line {line}, column {column}: {problem}")]
pub struct CatalogError {
    /// The data file, as named in `data/`.
    pub file: &'static str,
    /// The line (the header is line 1).
    pub line: usize,
    /// The cell (0: the whole line).
    pub column: usize,
    /// What is wrong there.
    pub problem: CatalogProblem,
}

impl CatalogError {
    pub(crate) fn at(
        file: &'static str,
        line: usize,
        column: usize,
        problem: CatalogProblem,
    ) -> Self {
        CatalogError {
            file,
            line,
            column,
            problem,
        }
    }
}

/// What is wrong with a line or cell of the embedded data; the offending
/// text is kept as written.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CatalogProblem {
    /// The file has no header.
    #[error("no header")]
    Empty,
    /// The header lacks a column the catalog reads.
    #[error("no column {0:?} in the header")]
    MissingColumn(&'static str),
    /// The line has another number of cells than the header.
    #[error("{found} cells, expected {expected}")]
    Cells {
        /// The line's.
        found: usize,
        /// The header's.
        expected: usize,
    },
    /// A cell that must hold a value is empty.
    #[error("empty cell")]
    EmptyCell,
    /// A count, size or price is not a number (or not one that fits).
    #[error("not a number: {0:?}")]
    NotANumber(String),
    /// A flag is neither `true` nor `false`.
    #[error("not a boolean: {0:?}")]
    NotABoolean(String),
    /// An architecture other than `amd64` and `arm64`.
    #[error("unknown architecture {0:?}")]
    Architecture(String),
    /// A network-card list is not `index:maxInterfaces;…`, or lacks the
    /// default card.
    #[error("network cards {0:?}")]
    NetworkCards(String),
    /// A name (or region and name) given twice.
    #[error("{0:?} given twice")]
    Duplicate(String),
}
