//! A reader for the embedded CSV tables: cells found by their header's
//! name, so a column added to the data breaks nothing, and every failure
//! located by file, line and column.

use std::str::FromStr;

use super::{CatalogError, CatalogProblem};

/// One embedded table: its file name, header and data lines.
pub(crate) struct Table {
    file: &'static str,
    header: Vec<&'static str>,
    body: &'static str,
}

impl Table {
    /// Reads the header of `text`, the content of `data/<file>`.
    pub(crate) fn new(file: &'static str, text: &'static str) -> Result<Table, CatalogError> {
        let (first, body) = text.split_once('\n').unwrap_or((text, ""));
        let header: Vec<&str> = first.split(',').collect();
        if header.iter().all(|h| h.is_empty()) {
            return Err(CatalogError::at(file, 1, 0, CatalogProblem::Empty));
        }
        Ok(Table { file, header, body })
    }

    /// The 1-based index of the column `name`, or an error at the header.
    pub(crate) fn column(&self, name: &'static str) -> Result<usize, CatalogError> {
        self.header
            .iter()
            .position(|h| *h == name)
            .map(|i| i + 1)
            .ok_or_else(|| CatalogError::at(self.file, 1, 0, CatalogProblem::MissingColumn(name)))
    }

    /// The data lines (blank ones skipped), each checked to have as many
    /// cells as the header.
    pub(crate) fn rows(&self) -> impl Iterator<Item = Result<Row, CatalogError>> + '_ {
        self.body
            .split('\n')
            .enumerate()
            .filter(|(_, line)| !line.is_empty())
            .map(|(i, line)| {
                // The header is line 1, the body starts at line 2.
                let line_number = i + 2;
                let cells: Vec<&'static str> = line.split(',').collect();
                if cells.len() == self.header.len() {
                    Ok(Row {
                        file: self.file,
                        line: line_number,
                        cells,
                    })
                } else {
                    Err(CatalogError::at(
                        self.file,
                        line_number,
                        0,
                        CatalogProblem::Cells {
                            found: cells.len(),
                            expected: self.header.len(),
                        },
                    ))
                }
            })
    }
}

/// One data line of a [`Table`].
pub(crate) struct Row {
    file: &'static str,
    line: usize,
    cells: Vec<&'static str>,
}

impl Row {
    /// The cell in (1-based) `column`, as written; empty when absent.
    pub(crate) fn text(&self, column: usize) -> &'static str {
        column
            .checked_sub(1)
            .and_then(|i| self.cells.get(i))
            .copied()
            .unwrap_or("")
    }

    /// The error `problem` located at `column` of this line.
    pub(crate) fn error(&self, column: usize, problem: CatalogProblem) -> CatalogError {
        CatalogError::at(self.file, self.line, column, problem)
    }

    /// The cell in `column` parsed as a number; `None` when empty.
    pub(crate) fn number<T>(&self, column: usize) -> Result<Option<T>, CatalogError>
    where
        T: FromStr,
    {
        let text = self.text(column);
        if text.is_empty() {
            return Ok(None);
        }
        text.parse()
            .map(Some)
            .map_err(|_| self.error(column, CatalogProblem::NotANumber(text.to_owned())))
    }

    /// The cell in `column` as a number that must be there.
    pub(crate) fn required_number<T>(&self, column: usize) -> Result<T, CatalogError>
    where
        T: FromStr,
    {
        self.number(column)?
            .ok_or_else(|| self.error(column, CatalogProblem::EmptyCell))
    }

    /// The cell in `column` as `true` or `false`.
    pub(crate) fn boolean(&self, column: usize) -> Result<bool, CatalogError> {
        match self.text(column) {
            "true" => Ok(true),
            "false" => Ok(false),
            other => Err(self.error(column, CatalogProblem::NotABoolean(other.to_owned()))),
        }
    }

    /// The cell in `column`, which must not be empty.
    pub(crate) fn required(&self, column: usize) -> Result<&'static str, CatalogError> {
        match self.text(column) {
            "" => Err(self.error(column, CatalogProblem::EmptyCell)),
            text => Ok(text),
        }
    }
}
