//! Where each CapacityBuffer's virtual pods went in a solved run, and what
//! upstream's provisioner writes of it in the buffer's `Provisioning`
//! condition (`pkg/controllers/provisioning/buffers.go`).

use std::collections::BTreeMap;

use crate::capacity_buffers::BufferState;
use crate::provisioning::plan::BufferPlacement;

/// Counts of one buffer's virtual pods.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    /// On each existing node, by name.
    pub(crate) existing: BTreeMap<String, u32>,
    /// On new claims.
    pub(crate) new_claims: u32,
    /// Placed nowhere.
    pub(crate) unschedulable: u32,
}

/// The counts of every buffer, by its index in the snapshot's buffers.
#[derive(Clone, Debug)]
pub(crate) struct BufferTally {
    tallies: Vec<Tally>,
}

impl BufferTally {
    /// Nothing counted yet for `buffers` buffers.
    pub(crate) fn new(buffers: usize) -> BufferTally {
        BufferTally {
            tallies: vec![Tally::default(); buffers],
        }
    }

    /// The counts of the buffer at `index` (a stray index counts nowhere).
    pub(crate) fn of(&mut self, index: u32) -> &mut Tally {
        let at = index as usize;
        if at >= self.tallies.len() {
            self.tallies.resize(at + 1, Tally::default());
        }
        &mut self.tallies[at]
    }

    /// Each buffer's placement, in the buffers' order.
    pub(crate) fn placements(self, states: &[BufferState]) -> Vec<BufferPlacement> {
        states
            .iter()
            .zip(self.tallies)
            .map(|(state, tally)| {
                let provisioning = provisioning_condition(state, &tally);
                let message = (!state.is_resolved()).then(|| state.readiness.to_string());
                BufferPlacement {
                    buffer: state.key.clone(),
                    replicas: state.replicas,
                    ready: state.readiness.reason().to_owned(),
                    message,
                    existing_nodes: tally.existing,
                    new_claims: tally.new_claims,
                    unschedulable: tally.unschedulable,
                    provisioning,
                }
            })
            .collect()
    }
}

/// The reason of upstream's `Provisioning` condition
/// (`computeProvisioningCondition`): not resolved → `NotReadyForProvisioning`;
/// no chunk → `BufferEmpty`; a chunk on a new claim or placed nowhere →
/// `RequiresNewCapacity`; every chunk on existing capacity →
/// `FitsExistingCapacity` (the one with status `True`); none planned → none.
fn provisioning_condition(state: &BufferState, tally: &Tally) -> Option<String> {
    if !state.is_resolved() {
        return Some("NotReadyForProvisioning".to_owned());
    }
    if state.replicas == 0 {
        return Some("BufferEmpty".to_owned());
    }
    let on_existing: u32 = tally.existing.values().sum();
    if tally.new_claims + tally.unschedulable > 0 {
        Some("RequiresNewCapacity".to_owned())
    } else if on_existing > 0 {
        Some("FitsExistingCapacity".to_owned())
    } else {
        None
    }
}
