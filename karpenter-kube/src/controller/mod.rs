//! The karpenter-controller binary's parts: its flags, its main loop, the
//! fake cloud that launches Node objects, its metrics and health
//! endpoints, its logs, and leader election.

mod args;
mod azure;
mod instance_types;
mod kwok;
mod run;

pub use args::{Args, AzureArgs, Listen, LogFormat, ProviderKind, parse_duration};
pub use azure::TOKEN_VARIABLE;
pub use instance_types::load_instance_types;
pub use kwok::{KWOK_ANNOTATION, KwokProvider, LAUNCHED_LABEL, PROVIDER_ID_PREFIX};
pub use run::{RunError, run, run_until};
