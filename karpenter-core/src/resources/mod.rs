//! Exact Kubernetes resource arithmetic: quantities, resource lists and pod
//! requests.
//!
//! Every amount is an `i64` count of milli-units (milli-cores, milli-bytes,
//! milli-pods), which is what Kubernetes' `MilliValue()` returns: exact, with
//! no floating point, and ordered the way the scheduler compares amounts.
//!
//! - [`parse_milli`] and [`milli_value`] read quantity strings (`"500m"`,
//!   `"1.5Gi"`, `"2e3"`); [`format_quantity`] and [`format_milli`] write them.
//! - [`ResourceList`] maps resource names to amounts, with the four common
//!   resources in fixed slots for the scheduler's inner loop.
//! - [`pod_requests`] computes what a pod needs, sidecars and overhead
//!   included.
//!
//! ```
//! use karpenter_core::resources::{parse_milli, format_milli};
//!
//! let milli = parse_milli("1536Mi").unwrap();
//! assert_eq!(format_milli("memory", milli), "1536Mi");
//! assert_eq!(format_milli("memory", milli * 2), "3Gi");
//! ```

mod format;
mod list;
mod list_serde;
mod pod_requests;
mod quantity;

pub use format::{format_milli, format_quantity, to_quantity};
pub use list::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS, ResourceList};
pub use pod_requests::pod_requests;
pub use quantity::{QuantityError, QuantityErrorKind, milli_value, parse_milli};
