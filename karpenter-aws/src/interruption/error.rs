//! Why an interruption message could not be read.

/// A message body that is not an EventBridge event the provider can read.
/// Upstream logs such a message and deletes it from the queue, as it does a
/// message it has handled, so that a bad body is not delivered again.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The body is not a JSON object with the envelope's fields (`version`,
    /// `id`, `detail-type`, `source`, `account`, `time`, `region`,
    /// `resources`) of the right types.
    #[error("reading the EventBridge envelope (version, detail-type, source, time, ...)")]
    Envelope(#[source] serde_json::Error),
    /// The body is an event of a kind the provider acts on, but without a
    /// `detail` object.
    #[error("the {detail_type:?} event has no `detail`")]
    MissingDetail {
        /// The event's `detail-type`.
        detail_type: String,
    },
    /// The body's `detail` lacks a field the event's kind needs, or holds one
    /// of the wrong type; the source names the field.
    #[error("reading `detail` of the {detail_type:?} event")]
    Detail {
        /// The event's `detail-type`.
        detail_type: String,
        /// What was wrong with `detail`.
        #[source]
        source: serde_json::Error,
    },
}
