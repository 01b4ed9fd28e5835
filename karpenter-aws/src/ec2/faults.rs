//! Errors injected into the in-memory AWS services, one queue per operation:
//! what `fail_next` on [`InMemoryEc2`](super::InMemoryEc2) and
//! [`InMemoryQueue`](super::InMemoryQueue) hold.

use std::collections::{BTreeMap, VecDeque};

use super::{Ec2Error, Operation};

/// The errors the next calls of each operation fail with, in order.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    next: BTreeMap<Operation, VecDeque<Ec2Error>>,
}

impl Faults {
    /// Makes the next call of `operation` not yet failed fail with `error`.
    pub(crate) fn push(&mut self, operation: Operation, error: Ec2Error) {
        self.next.entry(operation).or_default().push_back(error);
    }

    /// The error injected for `operation`'s next call, if any, taken.
    pub(crate) fn take(&mut self, operation: Operation) -> Result<(), Ec2Error> {
        match self.next.get_mut(&operation).and_then(VecDeque::pop_front) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}
