//! The karpenter-controller binary's parts: its flags and main loop
//! ([`run`]), its clouds (`--provider`), each compiled in by a feature of its
//! own: the fake cloud that launches Node objects (`KwokProvider`, the `kwok`
//! feature), Azure (the `azure` feature) and AWS (the `aws` feature); and the
//! infrastructure around
//! them, each module standing alone: [`http`] serves what [`metrics`]
//! renders, [`logging`] writes the logs, [`leader`] elects one replica
//! through a Lease.

mod args;
#[cfg(feature = "aws")]
mod aws;
mod aws_args;
#[cfg(feature = "aws")]
mod aws_classes;
#[cfg(feature = "aws")]
mod aws_interruption;
#[cfg(feature = "aws")]
mod aws_loops;
#[cfg(feature = "azure")]
mod azure;
mod azure_args;
#[cfg(feature = "azure")]
mod azure_credential;
#[cfg(any(feature = "azure", feature = "aws"))]
mod cluster_facts;
mod error;
#[cfg(feature = "kwok")]
mod instance_types;
mod kube_config;
#[cfg(feature = "kwok")]
mod kwok;
#[cfg(any(feature = "azure", feature = "aws"))]
mod node_classes;
mod provider;
mod run;

pub mod http;
pub mod leader;
pub mod logging;
pub mod metrics;

pub use args::{Args, Listen, ProviderKind, parse_duration};
pub use aws_args::AwsArgs;
pub use azure_args::AzureArgs;
#[cfg(feature = "azure")]
pub use azure_credential::{CredentialError, TOKEN_VARIABLE};
#[cfg(any(feature = "azure", feature = "aws"))]
pub use cluster_facts::{DEFAULT_CLUSTER_DNS, FactsError};
pub use error::RunError;
#[cfg(feature = "kwok")]
pub use instance_types::load_instance_types;
#[cfg(feature = "kwok")]
pub use kwok::{KWOK_ANNOTATION, KwokProvider, LAUNCHED_LABEL, PROVIDER_ID_PREFIX};
pub use run::{run, run_until};
