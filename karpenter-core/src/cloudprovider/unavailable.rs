//! [`UnavailableOfferings`]: offerings the cloud lately had no capacity for,
//! each until its time-to-live runs out (upstream's `UnavailableOfferings`
//! cache, three minutes by default). Time is passed in, so the same calls
//! give the same answers.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::{InstanceType, OfferingKey};

/// How long an offering stays unavailable after the cloud refused it, unless
/// marked otherwise: upstream's three minutes.
pub const DEFAULT_UNAVAILABLE_TTL: Duration = Duration::from_secs(180);

/// Offerings marked unavailable, each until a moment.
///
/// Two caches are equal when they mark the same offerings until the same
/// moments, whatever their [`generation`](Self::generation)s.
#[derive(Clone, Debug, Default)]
pub struct UnavailableOfferings {
    until: BTreeMap<OfferingKey, Timestamp>,
    /// How many marks were made: what tells a cache's user that nothing
    /// was marked since it last looked.
    generation: u64,
}

impl PartialEq for UnavailableOfferings {
    fn eq(&self, other: &Self) -> bool {
        self.until == other.until
    }
}

impl Eq for UnavailableOfferings {}

impl UnavailableOfferings {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks the offering unavailable from `now` for `ttl`; a later expiry
    /// already recorded stands.
    pub fn mark(&mut self, offering: OfferingKey, now: Timestamp, ttl: Duration) {
        let ttl = SignedDuration::try_from(ttl).unwrap_or(SignedDuration::MAX);
        let until = now.saturating_add(ttl).unwrap_or(Timestamp::MAX);
        let entry = self.until.entry(offering).or_insert(until);
        *entry = (*entry).max(until);
        self.generation += 1;
    }

    /// How many times an offering was [`mark`](Self::mark)ed: a generation
    /// seen before, with a `now` before [`earliest_expiry`](Self::earliest_expiry),
    /// says that the cache marks just what it marked then
    /// ([`expire`](Self::expire) only forgets what has run out).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// When the first of the marked offerings becomes available again (an
    /// expired one still kept included); `None` when none is marked.
    pub fn earliest_expiry(&self) -> Option<Timestamp> {
        self.until.values().min().copied()
    }

    /// Whether the offering is unavailable at `now`.
    pub fn is_unavailable(&self, offering: &OfferingKey, now: Timestamp) -> bool {
        self.until.get(offering).is_some_and(|until| now < *until)
    }

    /// Forgets the offerings whose time has run out at `now`.
    pub fn expire(&mut self, now: Timestamp) {
        self.until.retain(|_, until| now < *until);
    }

    /// How many offerings are marked (expired ones included until
    /// [`expire`](Self::expire)).
    pub fn len(&self) -> usize {
        self.until.len()
    }

    /// Whether none is marked.
    pub fn is_empty(&self) -> bool {
        self.until.is_empty()
    }

    /// Marks the offerings of `types` that are unavailable at `now` as such
    /// (`available: false`, the types' zones and capacity types narrowed to
    /// what stays available); the others keep what they said.
    pub fn apply(&self, types: &mut [InstanceType], now: Timestamp) {
        if self.until.is_empty() {
            return;
        }
        for instance_type in types {
            let name = instance_type.name.clone();
            instance_type.mark_unavailable(|offering| {
                let key = OfferingKey {
                    instance_type: name.clone(),
                    zone: offering.zone.clone(),
                    capacity_type: offering.capacity_type.clone(),
                    reservation_id: offering.reservation_id().map(str::to_owned),
                };
                self.is_unavailable(&key, now)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloudprovider::Offering;
    use crate::resources::ResourceList;

    fn key(zone: &str) -> OfferingKey {
        OfferingKey::new("m-2x", zone, "spot")
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).expect("a valid time")
    }

    #[test]
    fn an_offering_is_unavailable_until_its_ttl_runs_out() {
        let mut cache = UnavailableOfferings::new();
        cache.mark(key("a"), at(0), DEFAULT_UNAVAILABLE_TTL);
        assert!(cache.is_unavailable(&key("a"), at(0)));
        assert!(cache.is_unavailable(&key("a"), at(179)));
        assert!(!cache.is_unavailable(&key("a"), at(180)));
        assert!(!cache.is_unavailable(&key("b"), at(0)));
        // A shorter mark later does not cut a longer one short.
        cache.mark(key("a"), at(10), Duration::from_secs(3600));
        cache.mark(key("a"), at(20), Duration::from_secs(1));
        assert!(cache.is_unavailable(&key("a"), at(3000)));
        cache.expire(at(3610));
        assert!(cache.is_empty());
    }

    #[test]
    fn every_mark_is_a_new_generation_and_the_first_expiry_is_known() {
        let mut cache = UnavailableOfferings::new();
        assert_eq!((cache.generation(), cache.earliest_expiry()), (0, None));
        cache.mark(key("a"), at(0), Duration::from_secs(600));
        cache.mark(key("b"), at(10), DEFAULT_UNAVAILABLE_TTL);
        // A mark that changes no expiry is a new generation all the same.
        cache.mark(key("a"), at(20), Duration::from_secs(1));
        assert_eq!(cache.generation(), 3);
        assert_eq!(cache.earliest_expiry(), Some(at(190)));
        // Forgetting what ran out is no new generation.
        cache.expire(at(190));
        assert_eq!(cache.generation(), 3);
        assert_eq!(cache.earliest_expiry(), Some(at(600)));
        let mut other = UnavailableOfferings::new();
        other.mark(key("a"), at(0), Duration::from_secs(600));
        assert_eq!(cache, other, "equal marks, whatever the generations");
    }

    #[test]
    fn apply_marks_only_the_cached_offerings() {
        let mut cache = UnavailableOfferings::new();
        cache.mark(key("a"), at(0), DEFAULT_UNAVAILABLE_TTL);
        let labels: [(&str, &str); 0] = [];
        let mut types = vec![InstanceType::new(
            "m-2x",
            labels,
            vec![
                Offering::new("a", "spot", 0.1),
                Offering::new("b", "spot", 0.1),
                Offering::new("a", "on-demand", 0.2),
            ],
            ResourceList::new(),
            ResourceList::new(),
        )];
        cache.apply(&mut types, at(1));
        let available: Vec<bool> = types[0].offerings.iter().map(|o| o.available).collect();
        assert_eq!(available, [false, true, true]);
    }
}
