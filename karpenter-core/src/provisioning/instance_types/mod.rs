//! A NodePool's instance types as new claims use them: the pool as a
//! template ([`templates`]), what the types answer to a requirement
//! ([`type_cache`]), and narrowing a claim's types as it takes pods
//! ([`narrowing`], by the full filter in [`filter`] or by growth in
//! [`fit_index`]).

pub(crate) mod filter;
pub(crate) mod fit_index;
pub(crate) mod narrowing;
pub(crate) mod templates;
pub(crate) mod type_cache;
