//! The cost-optimising packing mode (`--packing cost`): the upstream scheduler
//! places every pod first, with every constraint; then the new claims whose
//! pods nothing ties to other pods are packed again at least price (see
//! `repack.rs`), and kept only where that is cheaper, so a cost-mode plan is
//! never dearer than the upstream one.

mod mix;
mod pack;
mod repack;

/// How provisioning chooses the new claims and their instance types.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Packing {
    /// As upstream Karpenter: first-fit-decreasing onto ever-narrowing
    /// instance-type lists. The default.
    #[default]
    Upstream,
    /// Every constraint upstream honours, at the least total price this
    /// engine finds: never dearer than [`Packing::Upstream`].
    Cost,
}
