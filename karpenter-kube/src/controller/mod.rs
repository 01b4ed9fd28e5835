//! The karpenter-controller binary's parts: its flags and main loop
//! ([`run`]), the fake cloud that launches Node objects ([`KwokProvider`]),
//! and the infrastructure around them, each module standing alone:
//! [`http`] serves what [`metrics`] renders, [`logging`] writes the logs,
//! [`leader`] elects one replica through a Lease.

mod args;
mod azure;
mod instance_types;
mod kwok;
mod run;

pub mod http;
pub mod leader;
pub mod logging;
pub mod metrics;

pub use args::{Args, AzureArgs, Listen, ProviderKind, parse_duration};
pub use azure::TOKEN_VARIABLE;
pub use instance_types::load_instance_types;
pub use kwok::{KWOK_ANNOTATION, KwokProvider, LAUNCHED_LABEL, PROVIDER_ID_PREFIX};
pub use run::{RunError, run, run_until};
