//! [`SsmCache`]: the SSM parameter values a status reconcile read, kept
//! for as long as upstream keeps them, so that a reconcile every minute
//! does not ask SSM every minute.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

/// How long the value of a parameter an alias names is kept: upstream's
/// 24 hours. EKS publishes new images far less often.
pub const ALIAS_PARAMETER_TTL: SignedDuration = SignedDuration::from_hours(24);

/// How long the value of an `ssmParameter` term's parameter is kept:
/// upstream's 5 minutes, since a user's own parameter may be rewritten at
/// any time.
pub const CUSTOM_PARAMETER_TTL: SignedDuration = SignedDuration::from_mins(5);

/// A value, the moment it stops being served, and whether the parameter
/// is one whose value moves (an alias at `latest`, a Windows alias), so
/// that a deprecated image it names is dropped before its time.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    value: String,
    expires: Timestamp,
    mutable: bool,
}

/// SSM parameter values by name, each until its time is up. The caller
/// keeps one between reconciles (one for all classes, as upstream shares
/// its cache) and passes the time in: nothing here reads a clock.
///
/// Only values are kept: a parameter SSM does not have is asked for again
/// at the next reconcile, as upstream does not cache failures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SsmCache {
    entries: BTreeMap<String, Entry>,
}

impl SsmCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of `name` if it was read less than its lifetime before
    /// `now`.
    pub fn get(&self, name: &str, now: Timestamp) -> Option<&str> {
        self.entries
            .get(name)
            .filter(|entry| now < entry.expires)
            .map(|entry| entry.value.as_str())
    }

    /// Keeps `value` for `name`, read at `now`, for `ttl`.
    pub fn insert(&mut self, name: &str, value: String, now: Timestamp, ttl: SignedDuration) {
        self.keep(name, value, now, ttl, false);
    }

    /// Keeps `value` for `name` as [`insert`](Self::insert) does, for a
    /// parameter whose value moves to newer images (an alias at `latest`,
    /// a Windows alias): [`invalidate_deprecated_images`] drops it once
    /// the image it names is deprecated.
    ///
    /// [`invalidate_deprecated_images`]: super::invalidate_deprecated_images
    pub fn insert_mutable(
        &mut self,
        name: &str,
        value: String,
        now: Timestamp,
        ttl: SignedDuration,
    ) {
        self.keep(name, value, now, ttl, true);
    }

    fn keep(
        &mut self,
        name: &str,
        value: String,
        now: Timestamp,
        ttl: SignedDuration,
        mutable: bool,
    ) {
        // A timestamp past jiff's range is "never expires" in practice.
        let expires = now.checked_add(ttl).unwrap_or(Timestamp::MAX);
        self.entries.insert(
            name.to_owned(),
            Entry {
                value,
                expires,
                mutable,
            },
        );
    }

    /// The values still served at `now` of the parameters kept with
    /// [`insert_mutable`](Self::insert_mutable), each with the parameters
    /// naming it.
    pub(super) fn mutable_values(&self, now: Timestamp) -> BTreeMap<String, Vec<String>> {
        let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, entry) in &self.entries {
            if entry.mutable && now < entry.expires {
                values
                    .entry(entry.value.clone())
                    .or_default()
                    .push(name.clone());
            }
        }
        values
    }

    /// Forgets `name`, so that the next reconcile reads it again (for a
    /// caller that learns its image was deprecated). Whether it was kept.
    pub fn remove(&mut self, name: &str) -> bool {
        self.entries.remove(name).is_some()
    }

    /// Drops every entry whose time is up at `now`, so the cache holds
    /// only what it would serve.
    pub fn prune(&mut self, now: Timestamp) {
        self.entries.retain(|_, entry| now < entry.expires);
    }

    /// How many values are kept (expired ones until pruned).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no value is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
