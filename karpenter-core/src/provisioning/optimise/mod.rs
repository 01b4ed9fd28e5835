//! Beyond upstream: the price of a plan, bounded and lowered.
//!
//! - [`bound`]: a proven lower bound on the price of any valid plan for the
//!   pods that need new capacity (`--bound`, `lowerBoundPerHour`);
//! - the cost-optimising packing mode (`--packing cost`): the upstream
//!   scheduler places every pod first, with every constraint; then the new
//!   claims whose pods nothing ties to other pods are packed again at least
//!   price ([`repack`], by the packer in [`pack`]), and
//!   kept only where that is cheaper, so a cost-mode plan is never dearer
//!   than the upstream one;
//! - [`dual`]: the fluid relaxation's dual prices, which the bound and the
//!   packer share.

pub(crate) mod dual;
pub(crate) mod lower_bound;
pub(crate) mod pack;
pub(crate) mod repack;
