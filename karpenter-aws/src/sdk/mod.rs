//! The live AWS client (feature `sdk`): [`Ec2Api`](crate::ec2::Ec2Api),
//! [`QueueApi`](crate::ec2::QueueApi) and
//! [`ParameterApi`](crate::ec2::ParameterApi) over the official AWS SDK for
//! Rust, and [`IamApi`](crate::iam::IamApi) for the instance profiles.
//!
//! [`AwsClients::load`] finds the region and credentials as every AWS tool
//! does: the environment (`AWS_REGION`, `AWS_ACCESS_KEY_ID`, ...), the shared
//! config files, IRSA's web identity token (`AWS_WEB_IDENTITY_TOKEN_FILE` and
//! `AWS_ROLE_ARN`), EKS Pod Identity's container endpoint, and last the
//! instance's metadata service (IMDSv2). From it come [`SdkEc2`] (EC2 and
//! the Pricing API), [`SdkQueue`] (the interruption queue),
//! [`SdkParameters`] (SSM's public parameters), [`SdkIam`] (the instance
//! profiles of a class's `role`), and
//! [`AwsClients::describe_cluster`] reads the EKS cluster nodes join.
//!
//! What every call keeps ([`ClientLimits`]):
//! - **A deadline** per attempt and per call; a call past it fails with
//!   [`Ec2Error::Transport`], retryable.
//! - **Retries** of throttling and transient failures, with exponential
//!   backoff and jitter (the SDK's standard strategy).
//! - **Pages**: describe calls follow `NextToken` to the end, up to
//!   [`ClientLimits::max_pages`], past which they fail with
//!   [`Ec2Error::PageLimit`] rather than
//!   answer with part of a list.
//! - **Errors** keep the service's code and message, or the SDK's error as
//!   their source, and say whether a retry may help
//!   ([`Ec2Error::is_retryable`]).
//! - **Credentials** stay in the SDK's credential cache: no error, log line
//!   or `Debug` output of this module holds one.
//!
//! ```no_run
//! use karpenter_aws::ec2::{DescribeInput, Ec2Api, Filter};
//! use karpenter_aws::sdk::{AwsClients, ClientOptions};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let clients = AwsClients::load(ClientOptions::default()).await?;
//! let ec2 = clients.ec2();
//! let subnets = ec2
//!     .describe_subnets(DescribeInput {
//!         filters: vec![Filter::new("tag:karpenter.sh/discovery", ["my-cluster"])],
//!         ..DescribeInput::default()
//!     })
//!     .await?;
//! println!("{} subnets in {}", subnets.subnets.len(), clients.region());
//! # Ok(())
//! # }
//! ```

mod ec2;
mod eks;
mod error;
mod iam;
mod limits;
mod pages;
mod pricing;
mod sqs;
mod ssm;

#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_ec2::config::ProvideCredentials;

pub use ec2::SdkEc2;
pub use eks::EksCluster;
pub use iam::SdkIam;
pub use limits::ClientLimits;
pub use pricing::pricing_region;
pub use sqs::SdkQueue;
pub use ssm::SdkParameters;

use crate::ec2::{Ec2Error, Operation};

/// The longest wait SQS allows a receive to long-poll; a queue client's
/// attempts get it on top of their deadline.
const LONG_POLL: Duration = Duration::from_secs(20);

/// Where the clients connect and what limits their calls.
#[derive(Clone, Debug, Default)]
pub struct ClientOptions {
    /// The region; `None` finds it as the SDK does (`AWS_REGION`, the
    /// config files, the instance's metadata).
    pub region: Option<String>,
    /// One endpoint for every service (a proxy, a test server); `None`
    /// uses each service's regional endpoint.
    pub endpoint_url: Option<String>,
    /// Deadlines, retries and the page cap.
    pub limits: ClientLimits,
}

/// Why the clients could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// No region was given and none could be found.
    #[error("no AWS region: set AWS_REGION, or run where the instance metadata service answers")]
    NoRegion,
    /// The credential chain found no usable credentials.
    #[error("no usable AWS credentials")]
    Credentials {
        /// The credential chain's error (it names the providers it tried,
        /// never a secret).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// The SDK's shared configuration (region, credentials, HTTP client) with
/// the limits every client made from it keeps.
#[derive(Clone)]
pub struct AwsClients {
    config: SdkConfig,
    region: String,
    limits: ClientLimits,
}

impl fmt::Debug for AwsClients {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The SDK configuration holds the credential provider: never printed.
        f.debug_struct("AwsClients")
            .field("region", &self.region)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl AwsClients {
    /// Loads the region and the credential chain (see the module's page).
    /// Credentials are fetched on the first call, not here: see
    /// [`check_credentials`](Self::check_credentials).
    ///
    /// # Errors
    ///
    /// [`SetupError::NoRegion`] when no region is given or found.
    pub async fn load(options: ClientOptions) -> Result<Self, SetupError> {
        let mut loader = aws_config::defaults(BehaviorVersion::latest())
            .timeout_config(options.limits.timeouts(Duration::ZERO))
            .retry_config(options.limits.retries());
        if let Some(region) = options.region {
            loader = loader.region(Region::new(region));
        }
        if let Some(url) = options.endpoint_url {
            loader = loader.endpoint_url(url);
        }
        Self::from_sdk_config(loader.load().await, options.limits)
    }

    /// Clients from a configuration the caller loaded, with `limits`
    /// applied to every client made from it.
    ///
    /// # Errors
    ///
    /// [`SetupError::NoRegion`] when `config` has no region.
    pub fn from_sdk_config(config: SdkConfig, limits: ClientLimits) -> Result<Self, SetupError> {
        let region = config.region().ok_or(SetupError::NoRegion)?.to_string();
        Ok(AwsClients {
            config,
            region,
            limits,
        })
    }

    /// The region the clients call.
    pub fn region(&self) -> &str {
        &self.region
    }

    /// Resolves credentials once, so a controller refuses to start without
    /// them rather than failing at its first call.
    ///
    /// # Errors
    ///
    /// [`SetupError::Credentials`] when the chain finds none.
    pub async fn check_credentials(&self) -> Result<(), SetupError> {
        let Some(provider) = self.config.credentials_provider() else {
            return Err(SetupError::Credentials {
                source: "no credential provider is configured".into(),
            });
        };
        provider
            .provide_credentials()
            .await
            .map(drop)
            .map_err(|e| SetupError::Credentials {
                source: Box::new(e),
            })
    }

    /// EC2, and the Pricing API at [`pricing_region`]'s endpoint.
    pub fn ec2(&self) -> SdkEc2 {
        let ec2 = aws_sdk_ec2::config::Builder::from(&self.config)
            .timeout_config(self.limits.timeouts(Duration::ZERO))
            .retry_config(self.limits.retries())
            .build();
        let pricing = aws_sdk_pricing::config::Builder::from(&self.config)
            .region(Region::new(pricing_region(&self.region)))
            .timeout_config(self.limits.timeouts(Duration::ZERO))
            .retry_config(self.limits.retries())
            .build();
        SdkEc2 {
            ec2: aws_sdk_ec2::Client::from_conf(ec2),
            pricing: aws_sdk_pricing::Client::from_conf(pricing),
            max_pages: self.limits.max_pages,
        }
    }

    /// The SQS queue `name` in the clients' region (`GetQueueUrl`).
    ///
    /// # Errors
    ///
    /// The [`Ec2Error`] of `GetQueueUrl`: code
    /// `AWS.SimpleQueueService.NonExistentQueue` (or
    /// `QueueDoesNotExist`) when there is no such queue.
    pub async fn queue(&self, name: &str) -> Result<SdkQueue, Ec2Error> {
        let config = aws_sdk_sqs::config::Builder::from(&self.config)
            .timeout_config(self.limits.timeouts(LONG_POLL))
            .retry_config(self.limits.retries())
            .build();
        let client = aws_sdk_sqs::Client::from_conf(config);
        let op = Operation::GetQueueUrl;
        let answer = client
            .get_queue_url()
            .queue_name(name)
            .send()
            .await
            .map_err(|e| error::sdk_error(op, e))?;
        let url = answer
            .queue_url()
            .ok_or_else(|| Ec2Error::Transport {
                operation: op,
                source: "the answer has no QueueUrl".into(),
            })?
            .to_owned();
        Ok(SdkQueue { client, url })
    }

    /// The EKS cluster `name` (`DescribeCluster`): its endpoint, CA and
    /// service CIDR, for nodes to join it.
    ///
    /// # Errors
    ///
    /// The [`Ec2Error`] of `DescribeCluster`: code
    /// `ResourceNotFoundException` when there is no such cluster (a cluster
    /// not run by EKS).
    pub async fn describe_cluster(&self, name: &str) -> Result<EksCluster, Ec2Error> {
        let config = aws_sdk_eks::config::Builder::from(&self.config)
            .timeout_config(self.limits.timeouts(Duration::ZERO))
            .retry_config(self.limits.retries())
            .build();
        eks::describe_cluster(&aws_sdk_eks::Client::from_conf(config), name).await
    }

    /// IAM, for the instance profiles of classes with a `role`. IAM is
    /// global: the SDK picks its endpoint for the region's partition.
    pub fn iam(&self) -> SdkIam {
        let config = aws_sdk_iam::config::Builder::from(&self.config)
            .timeout_config(self.limits.timeouts(Duration::ZERO))
            .retry_config(self.limits.retries())
            .build();
        SdkIam {
            client: aws_sdk_iam::Client::from_conf(config),
            max_pages: self.limits.max_pages,
        }
    }

    /// SSM Parameter Store.
    pub fn parameters(&self) -> SdkParameters {
        let config = aws_sdk_ssm::config::Builder::from(&self.config)
            .timeout_config(self.limits.timeouts(Duration::ZERO))
            .retry_config(self.limits.retries())
            .build();
        SdkParameters {
            client: aws_sdk_ssm::Client::from_conf(config),
        }
    }
}
