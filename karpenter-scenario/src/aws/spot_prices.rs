//! `--spot-prices FILE`: spot prices per instance type and zone, as CSV with
//! the header `instanceType,zone,price`, standing for upstream's first
//! successful spot-price read.

use std::collections::BTreeMap;
use std::path::Path;

use crate::LoadError;

/// The header a spot-price file starts with.
const HEADER: [&str; 3] = ["instanceType", "zone", "price"];

/// Reads the spot-price file at `path`: (instance type, zone) → price per
/// hour. Errors name the file, the line and the field.
pub fn read_spot_prices(path: &Path) -> Result<BTreeMap<(String, String), f64>, LoadError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Io {
        file: file.clone(),
        source,
    })?;
    parse_spot_prices(&file, &text)
}

/// Parses a spot-price file's `text`, named `file` in errors. Blank lines
/// are skipped; a pair listed twice, a price that is not a finite number of
/// zero or more, or a line without three fields is an error.
pub fn parse_spot_prices(
    file: &str,
    text: &str,
) -> Result<BTreeMap<(String, String), f64>, LoadError> {
    let error =
        |line: usize, column: usize, field: Option<&str>, message: String| LoadError::Parse {
            file: file.to_owned(),
            document: None,
            line: Some(line as u64),
            column: Some(column as u64),
            field: field.map(str::to_owned),
            message,
        };
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let header = lines.find(|(_, l)| !l.trim().is_empty());
    match header {
        Some((_, line)) if split(line).iter().map(|(_, f)| *f).eq(HEADER) => {}
        Some((number, _)) => {
            let message = format!("the header must be `{}`", HEADER.join(","));
            return Err(error(number, 1, None, message));
        }
        None => {
            let message = format!("empty: the header `{}` is missing", HEADER.join(","));
            return Err(error(1, 1, None, message));
        }
    }
    let mut prices = BTreeMap::new();
    for (number, line) in lines.filter(|(_, l)| !l.trim().is_empty()) {
        let fields = split(line);
        let [
            (_, instance_type),
            (zone_column, zone),
            (price_column, price),
        ] = fields[..]
        else {
            let message = format!("{} fields where the header has 3", fields.len());
            return Err(error(number, 1, None, message));
        };
        if instance_type.is_empty() {
            return Err(error(number, 1, Some(HEADER[0]), "empty".to_owned()));
        }
        if zone.is_empty() {
            return Err(error(
                number,
                zone_column,
                Some(HEADER[1]),
                "empty".to_owned(),
            ));
        }
        let value = price
            .parse::<f64>()
            .ok()
            .filter(|p| p.is_finite() && *p >= 0.0)
            .ok_or_else(|| {
                let message = format!("{price:?} is not a price: a finite number, 0 or more");
                error(number, price_column, Some(HEADER[2]), message)
            })?;
        let key = (instance_type.to_owned(), zone.to_owned());
        if prices.insert(key, value).is_some() {
            let message = format!("{instance_type} in {zone} is priced twice");
            return Err(error(number, 1, None, message));
        }
    }
    Ok(prices)
}

/// The comma-separated fields of `line`, trimmed, each with the column
/// (from 1) it starts at.
fn split(line: &str) -> Vec<(usize, &str)> {
    let mut column = 1;
    line.split(',')
        .map(|field| {
            let at = column;
            column += field.chars().count() + 1;
            (at, field.trim())
        })
        .collect()
}
