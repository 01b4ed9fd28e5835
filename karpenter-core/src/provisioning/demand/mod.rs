//! What provisioning reads from pods: which ones it plans for (the pending
//! pods and those leaving nodes on their way out), what each asks of a node
//! (requests, host ports, volume topology and attach limits, Dynamic Resource
//! Allocation), how
//! its preferences are relaxed, and the DaemonSet pods every new node runs.
//!
//! The pod rules both planners share (keys, owners, do-not-disrupt,
//! PodDisruptionBudgets) are in the crate's `pods` module, below this one.

pub(crate) mod attach;
pub(crate) mod daemons;
pub(crate) mod dra;
pub(crate) mod host_ports;
pub(crate) mod leaving;
pub(crate) mod pending_pod;
pub(crate) mod preferences;
pub(crate) mod volumes;
