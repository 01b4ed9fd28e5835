//! Packing items (pods' requests) into bins (new nodes) of priced kinds
//! (instance types) at least cost: the packer ([`packer`]) with its two
//! strategies (rounds of the cheapest fractional mix, [`mix`]; value-greedy,
//! [`greedy`]) and the tidying of a packing ([`tidy`]), over the vocabulary
//! of [`bins`].

pub(crate) mod bins;
mod greedy;
pub(crate) mod mix;
pub(crate) mod packer;
mod tidy;

#[cfg(test)]
mod tests;

pub(crate) use bins::Kind;
pub(crate) use packer::pack;
