//! What a cloud provider offers the engine: instance types and their
//! offerings and repair policies, which planning reads as values, and the
//! [`CloudProvider`] trait the driver acts through (create, delete, list, ...).

mod claims;
mod instance_type;
mod offering;
mod provider;
mod rank;
mod repair;
mod unavailable;

pub use claims::{choose_offering, hydrate, requests_of, requirements_of};
pub use instance_type::InstanceType;
pub(crate) use instance_type::cheaper;
pub use offering::{Offering, OfferingFilter, Reservation};
pub use provider::{BoxError, CloudProvider, CloudProviderError, OfferingKey};
pub use rank::{LaunchRank, RankFn};
pub use repair::RepairPolicy;
pub use unavailable::{DEFAULT_UNAVAILABLE_TTL, UnavailableOfferings};
