//! [`GrowOnly`]: a memo that threads share, read without a lock.
//!
//! The planners remember answers that depend only on what they are looked up
//! by (the instance types a requirement allows, the offerings a zone and
//! capacity-type pair allows, a topology key's domains), filled in as a run
//! meets new requirements. A disruption pass shares them between all its
//! simulations, which an embedder may run on several threads, so they must
//! be `Sync`; and the scheduler reads some of them for every claim a pod
//! tries, so a read must cost about what a single-threaded borrow costs, and
//! threads reading at once must not contend. Here a read takes no lock: each
//! slot is a [`OnceLock`], set once and never changed, and slots are set in
//! order, so readers walk the set prefix. Adding takes a mutex, so that two
//! threads that made the same answer keep one; as the answers are pure,
//! which thread adds it does not change what anyone reads, and plans stay
//! the same whatever the threads do.

use std::sync::{Mutex, OnceLock, PoisonError};

/// How many slots the first chunk has; each next chunk has twice as many as
/// the one before, so a memo of `n` entries walks `log2(n / FIRST)` chunks.
const FIRST: usize = 8;
/// How many chunks there can be: room for `FIRST * (2^CHUNKS - 1)` entries,
/// more than memory holds.
const CHUNKS: usize = 40;

/// A list that only grows, for memos shared between threads (see the module
/// documentation).
pub(crate) struct GrowOnly<T> {
    chunks: [OnceLock<Box<[OnceLock<T>]>>; CHUNKS],
    /// Held while adding: the slot to fill is the first empty one.
    adding: Mutex<()>,
}

impl<T> GrowOnly<T> {
    /// An empty memo; it allocates on the first entry.
    pub(crate) fn new() -> Self {
        GrowOnly {
            chunks: std::array::from_fn(|_| OnceLock::new()),
            adding: Mutex::new(()),
        }
    }

    /// The entries so far, in the order they were added.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks
            .iter()
            .map_while(OnceLock::get)
            .flat_map(|chunk| chunk.iter())
            .map_while(OnceLock::get)
    }

    /// The first entry `matches` accepts; if none does, the entry `make`
    /// makes (which `matches` must accept), added. `make` runs without the
    /// lock: a thread that finds the entry added meanwhile drops its own.
    pub(crate) fn find_or_add(&self, matches: impl Fn(&T) -> bool, make: impl FnOnce() -> T) -> &T {
        if let Some(found) = self.iter().find(|entry| matches(entry)) {
            return found;
        }
        let made = make();
        let _adding = self.adding.lock().unwrap_or_else(PoisonError::into_inner);
        let mut empty = None;
        'chunks: for (k, chunk) in self.chunks.iter().enumerate() {
            let slots = chunk.get_or_init(|| (0..FIRST << k).map(|_| OnceLock::new()).collect());
            for slot in slots.iter() {
                match slot.get() {
                    Some(entry) if matches(entry) => return entry,
                    Some(_) => {}
                    None => {
                        empty = Some(slot);
                        break 'chunks;
                    }
                }
            }
        }
        match empty {
            // Only this thread sets slots (it holds `adding`): the slot is
            // still empty and takes `made`.
            Some(slot) => slot.get_or_init(|| made),
            None => unreachable!("a memo with more entries than memory holds"),
        }
    }
}

impl<T> Default for GrowOnly<T> {
    fn default() -> Self {
        GrowOnly::new()
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for GrowOnly<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::GrowOnly;

    #[test]
    fn entries_are_found_once_added_and_kept_in_order() {
        let memo = GrowOnly::new();
        for n in 0..100_u32 {
            assert_eq!(*memo.find_or_add(|e| *e == n, || n), n);
        }
        let mut made = 0;
        assert_eq!(
            *memo.find_or_add(
                |e| *e == 42,
                || {
                    made += 1;
                    42
                }
            ),
            42
        );
        assert_eq!(made, 0, "a known entry is not made again");
        assert_eq!(
            memo.iter().copied().collect::<Vec<_>>(),
            (0..100).collect::<Vec<_>>()
        );
    }

    #[test]
    fn threads_adding_the_same_entries_keep_one_of_each() {
        let memo = Arc::new(GrowOnly::new());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let memo = Arc::clone(&memo);
                std::thread::spawn(move || {
                    for n in 0..500_u32 {
                        assert_eq!(*memo.find_or_add(|e| *e == n % 50, || n % 50), n % 50);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("no panic");
        }
        let mut entries: Vec<u32> = memo.iter().copied().collect();
        assert_eq!(entries.len(), 50);
        entries.sort_unstable();
        assert_eq!(entries, (0..50).collect::<Vec<_>>());
    }
}
