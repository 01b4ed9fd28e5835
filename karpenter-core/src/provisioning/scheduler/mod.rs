//! The scheduler: upstream's solve loop over the pods ([`solve`]), from a
//! set-up read once per snapshot ([`setup`]) or shared by many runs
//! ([`prepared`]), placing pods on existing capacity ([`existing`]) and on
//! new claims ([`claim`], tried in [`claim_order`], skipped by
//! [`claim_sets`], holding capacity [`reservations`]), and the plan written
//! from a solved run ([`finalize`]), with where CapacityBuffers' virtual pods
//! went ([`buffer_tally`]). What a set-up carries to the next one over a later
//! copy of its cluster, for a disruption plan's passes, is in [`carry`].

pub(crate) mod buffer_tally;
pub(crate) mod carry;
pub(crate) mod claim;
pub(crate) mod claim_order;
pub(crate) mod claim_sets;
pub(crate) mod existing;
pub(crate) mod finalize;
pub(crate) mod prepared;
pub(crate) mod reasons;
pub(crate) mod reservations;
pub(crate) mod setup;
pub(crate) mod solve;

#[cfg(test)]
mod buffer_tests;
#[cfg(test)]
mod tests;
