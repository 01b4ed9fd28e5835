//! The small conversions every EC2 call shares: filters, tags, times,
//! counts and enum names between this crate's types and the SDK's.

use aws_sdk_ec2::types as sdk;
use aws_smithy_types::DateTime;
use jiff::Timestamp;

use crate::ec2::{Filter, Tag};

/// The SDK's filters for `filters`; `None` for none, so the request
/// carries no empty list.
pub(super) fn filters(filters: Vec<Filter>) -> Option<Vec<sdk::Filter>> {
    let out: Vec<_> = filters
        .into_iter()
        .map(|f| {
            sdk::Filter::builder()
                .name(f.name)
                .set_values(Some(f.values))
                .build()
        })
        .collect();
    (!out.is_empty()).then_some(out)
}

/// `values` as a request list; `None` for none.
pub(super) fn list(values: Vec<String>) -> Option<Vec<String>> {
    (!values.is_empty()).then_some(values)
}

/// The SDK's tags for `tags`.
pub(super) fn tags_out(tags: Vec<Tag>) -> Vec<sdk::Tag> {
    tags.into_iter()
        .map(|t| sdk::Tag::builder().key(t.key).value(t.value).build())
        .collect()
}

/// Our tags for the SDK's, sorted by key so answers compare equal whatever
/// order EC2 lists them in.
pub(super) fn tags_in(tags: &[sdk::Tag]) -> Vec<Tag> {
    let mut out: Vec<Tag> = tags
        .iter()
        .map(|t| Tag {
            key: t.key().unwrap_or_default().to_owned(),
            value: t.value().unwrap_or_default().to_owned(),
        })
        .collect();
    out.sort();
    out
}

/// An optional string field, empty when absent.
pub(super) fn text(value: Option<&str>) -> String {
    value.unwrap_or_default().to_owned()
}

/// A count EC2 gives as a signed 32-bit integer; absent or negative is 0.
pub(super) fn count(value: Option<i32>) -> u32 {
    value.and_then(|v| u32::try_from(v).ok()).unwrap_or(0)
}

/// An SDK time as a timestamp; `None` when out of jiff's range.
pub(super) fn time_in(value: &DateTime) -> Option<Timestamp> {
    let nanos = i32::try_from(value.subsec_nanos()).ok()?;
    Timestamp::new(value.secs(), nanos).ok()
}

/// A timestamp as an SDK time.
pub(super) fn time_out(value: Timestamp) -> DateTime {
    let nanos = u32::try_from(value.subsec_nanosecond()).unwrap_or(0);
    DateTime::from_secs_and_nanos(value.as_second(), nanos)
}

/// A time EC2 gives as ISO 8601 text (images' `CreationDate`,
/// `DeprecationTime`); `None` when absent or unreadable.
pub(super) fn time_text(value: Option<&str>) -> Option<Timestamp> {
    value.and_then(|v| v.parse().ok())
}
