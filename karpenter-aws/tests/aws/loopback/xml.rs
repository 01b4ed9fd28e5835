//! The little XML EC2 answers with: elements of escaped text, nested
//! elements, and lists of `<item>`s.

use jiff::Timestamp;
use karpenter_aws::ec2::Tag;

/// EC2's XML namespace, as its answers carry it.
const EC2_NS: &str = "http://ec2.amazonaws.com/doc/2016-11-15/";

/// `text` with XML's special characters escaped.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// `<name>value</name>`, the value escaped.
pub(crate) fn text(name: &str, value: impl ToString) -> String {
    format!("<{name}>{}</{name}>", escape(&value.to_string()))
}

/// [`text`] when `value` is given, nothing otherwise.
pub(crate) fn opt(name: &str, value: Option<impl ToString>) -> String {
    value.map(|v| text(name, v)).unwrap_or_default()
}

/// [`text`] unless `value` is empty: EC2 leaves out what a resource lacks.
pub(crate) fn nonempty(name: &str, value: &str) -> String {
    if value.is_empty() {
        String::new()
    } else {
        text(name, value)
    }
}

/// A time as EC2 writes it (ISO 8601, UTC).
pub(crate) fn time(name: &str, value: Timestamp) -> String {
    text(name, value)
}

/// `<name>inner</name>`, `inner` already XML.
pub(crate) fn node(name: &str, inner: &str) -> String {
    format!("<{name}>{inner}</{name}>")
}

/// `<name><item>..</item>..</name>`, each item already XML.
pub(crate) fn set(name: &str, items: impl IntoIterator<Item = String>) -> String {
    let inner: String = items.into_iter().map(|i| node("item", &i)).collect();
    node(name, &inner)
}

/// A list of plain values as `<item>`s.
pub(crate) fn values<'a>(name: &str, items: impl IntoIterator<Item = &'a String>) -> String {
    set(name, items.into_iter().map(|v| escape(v)))
}

/// Tags as EC2's `tagSet`.
pub(crate) fn tags(tags: &[Tag]) -> String {
    set(
        "tagSet",
        tags.iter()
            .map(|t| text("key", &t.key) + &text("value", &t.value)),
    )
}

/// The answer to `action`: `body` inside `<{action}Response>`.
pub(crate) fn response(action: &str, body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<{action}Response xmlns=\"{EC2_NS}\">\
         <requestId>loopback</requestId>{body}</{action}Response>"
    )
}

/// EC2's error envelope.
pub(crate) fn error(code: &str, message: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error>{}{}</Error>\
         </Errors><RequestID>loopback</RequestID></Response>",
        text("Code", code),
        text("Message", message)
    )
}
