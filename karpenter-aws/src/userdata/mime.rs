//! Multipart MIME archives as cloud-init reads them: parsing the class's
//! user data and writing the merged document with upstream's fixed boundary.

use thiserror::Error;

/// The boundary of every archive Karpenter writes. Upstream fixes it (rather
/// than letting the writer pick a random one) so that the same inputs give
/// the same user data, hence the same launch template.
pub(crate) const BOUNDARY: &str = "//";

/// Why user data that announces itself as MIME could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MimeError {
    /// A header line is neither `Name: value` nor a continuation.
    #[error("line {line}: malformed header {text:?}")]
    MalformedHeader {
        /// The 1-based line number in the user data.
        line: usize,
        /// The offending line.
        text: String,
    },
    /// The document's headers have no `Content-Type`.
    #[error("no Content-Type header")]
    NoContentType,
    /// The document's `Content-Type` is not `multipart/*`.
    #[error("Content-Type {0:?} is not multipart")]
    NotMultipart(String),
    /// The `multipart` content type names no boundary.
    #[error("Content-Type {0:?} names no boundary")]
    NoBoundary(String),
    /// A part is not closed by a boundary before the document ends.
    #[error("part {part} is not closed by the boundary {boundary:?}")]
    UnterminatedPart {
        /// The 1-based number of the part.
        part: usize,
        /// The archive's boundary.
        boundary: String,
    },
}

/// One part of an archive: its headers (canonical names, in order) and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) content: String,
}

impl Part {
    /// A part with a single `Content-Type` header.
    pub(crate) fn new(content_type: &str, content: impl Into<String>) -> Self {
        Part {
            headers: vec![("Content-Type".to_owned(), content_type.to_owned())],
            content: content.into(),
        }
    }

    /// The part's `Content-Type`, empty when it has none (as Go's
    /// `Header.Get` answers).
    pub(crate) fn content_type(&self) -> &str {
        self.headers
            .iter()
            .find(|(name, _)| name == "Content-Type")
            .map_or("", |(_, value)| value.as_str())
    }
}

/// Whether user data is MIME by upstream's test: it starts (after
/// whitespace) with a `MIME-Version:` or `Content-Type:` header.
pub(crate) fn looks_like_mime(user_data: &str) -> bool {
    let trimmed = user_data.trim_start();
    trimmed.starts_with("MIME-Version:") || trimmed.starts_with("Content-Type:")
}

/// The parts of a multipart MIME document. A part's body excludes the line
/// break before the next boundary, which belongs to the delimiter.
pub(crate) fn parse(document: &str) -> Result<Vec<Part>, MimeError> {
    // CRLF and LF documents read alike; Karpenter's output has no CRs.
    let normalised = document.replace("\r\n", "\n");
    let lines: Vec<&str> = normalised.split('\n').collect();
    let (headers, body_start) = read_headers(&lines, 0)?;
    let content_type = headers
        .iter()
        .find(|(name, _)| name == "Content-Type")
        .map(|(_, value)| value.clone())
        .ok_or(MimeError::NoContentType)?;
    let boundary = multipart_boundary(&content_type)?;
    read_parts(&lines, body_start, &boundary)
}

/// The `MIME-Version` header, the multipart content type with [`BOUNDARY`],
/// then each part, as Go's multipart writer lays them out, with LF line
/// breaks only.
pub(crate) fn serialize(parts: &[Part]) -> String {
    let mut out =
        format!("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"{BOUNDARY}\"\n\n");
    for (index, part) in parts.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str("--");
        out.push_str(BOUNDARY);
        out.push('\n');
        for (name, value) in &part.headers {
            out.push_str(name);
            out.push_str(": ");
            out.push_str(value);
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&part.content);
    }
    out.push_str("\n--");
    out.push_str(BOUNDARY);
    out.push_str("--\n");
    // Upstream drops every carriage return from the merged document.
    out.replace('\r', "")
}

/// Headers from `start` to the first empty line, and the index after it.
/// Names are canonicalised (`content-type` → `Content-Type`) as Go's
/// textproto does, so that lookups and the written headers agree.
fn read_headers(lines: &[&str], start: usize) -> Result<(Vec<(String, String)>, usize), MimeError> {
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut index = start;
    while let Some(line) = lines.get(index) {
        index += 1;
        if line.is_empty() {
            return Ok((headers, index));
        }
        if line.starts_with([' ', '\t'])
            && let Some((_, value)) = headers.last_mut()
        {
            value.push(' ');
            value.push_str(line.trim());
            continue;
        }
        let malformed = || MimeError::MalformedHeader {
            line: index,
            text: (*line).to_owned(),
        };
        let (name, value) = line.split_once(':').ok_or_else(malformed)?;
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(malformed());
        }
        headers.push((canonical_name(name), value.trim().to_owned()));
    }
    Ok((headers, index))
}

fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_graphic() && byte != b':'
}

fn canonical_name(name: &str) -> String {
    let mut upper = true;
    name.chars()
        .map(|c| {
            let out = if upper {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            };
            upper = c == '-';
            out
        })
        .collect()
}

/// The boundary of a `multipart/*` content type.
fn multipart_boundary(content_type: &str) -> Result<String, MimeError> {
    let mut fields = content_type.split(';');
    let media_type = fields
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if !media_type.starts_with("multipart/") {
        return Err(MimeError::NotMultipart(content_type.to_owned()));
    }
    fields
        .filter_map(|field| field.split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("boundary"))
        .map(|(_, value)| value.trim().trim_matches('"').to_owned())
        .filter(|boundary| !boundary.is_empty())
        .ok_or_else(|| MimeError::NoBoundary(content_type.to_owned()))
}

/// What a line is to the reader of a body with `boundary`.
enum Line {
    Delimiter,
    Close,
    Text,
}

fn classify(line: &str, boundary: &str) -> Line {
    // Go's reader accepts transport padding (spaces, tabs) after a delimiter.
    let Some(rest) = line
        .trim_end_matches([' ', '\t'])
        .strip_prefix("--")
        .and_then(|rest| rest.strip_prefix(boundary))
    else {
        return Line::Text;
    };
    match rest {
        "" => Line::Delimiter,
        "--" => Line::Close,
        _ => Line::Text,
    }
}

/// The parts after the preamble. A document ending right after a delimiter
/// (no closing `--boundary--`) ends there, as upstream's reader accepts.
fn read_parts(lines: &[&str], start: usize, boundary: &str) -> Result<Vec<Part>, MimeError> {
    let mut index = start;
    // The preamble, up to the first delimiter, is ignored.
    loop {
        match lines.get(index).map(|line| classify(line, boundary)) {
            None | Some(Line::Close) => return Ok(Vec::new()),
            Some(Line::Delimiter) => break,
            Some(Line::Text) => index += 1,
        }
    }
    let mut parts = Vec::new();
    loop {
        index += 1;
        if lines[index.min(lines.len())..]
            .iter()
            .all(|line| line.trim().is_empty())
        {
            return Ok(parts);
        }
        let (headers, body_start) = read_headers(lines, index)?;
        index = body_start;
        let mut content: Vec<&str> = Vec::new();
        let closed = loop {
            match lines.get(index).map(|line| classify(line, boundary)) {
                None => {
                    return Err(MimeError::UnterminatedPart {
                        part: parts.len() + 1,
                        boundary: boundary.to_owned(),
                    });
                }
                Some(Line::Delimiter) => break false,
                Some(Line::Close) => break true,
                Some(Line::Text) => content.push(lines[index]),
            }
            index += 1;
        };
        parts.push(Part {
            headers,
            content: content.join("\n"),
        });
        if closed {
            return Ok(parts);
        }
    }
}
