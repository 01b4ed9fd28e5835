//! The engine's hash maps and sets: std's, with a fast fixed hash (FxHash)
//! rather than SipHash. Their keys are names, labels and indices read from the
//! cluster being planned, hashed many times a plan; no map is iterated where
//! its order could reach a plan (those are `BTreeMap`s), so the hash changes
//! nothing but the time.

/// A `HashMap` with the fast hash.
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, rustc_hash::FxBuildHasher>;
/// A `HashSet` with the fast hash.
pub(crate) type HashSet<T> = std::collections::HashSet<T, rustc_hash::FxBuildHasher>;
