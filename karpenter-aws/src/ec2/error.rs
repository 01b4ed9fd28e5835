//! [`Ec2Error`]: what an AWS call made through [`Ec2Api`](super::Ec2Api) or
//! [`QueueApi`](super::QueueApi) fails with, and [`Operation`], which call.

use std::error::Error as StdError;
use std::fmt;

/// The error codes upstream reads as "no capacity for this offering": the
/// caller marks the (capacity type, instance type, zone) unavailable and
/// tries elsewhere rather than failing the launch.
pub const INSUFFICIENT_CAPACITY_CODES: [&str; 8] = [
    "InsufficientInstanceCapacity",
    "MaxSpotInstanceCountExceeded",
    "VcpuLimitExceeded",
    "UnfulfillableCapacity",
    "Unsupported",
    "InsufficientFreeAddressesInSubnet",
    "MaxFleetCountExceeded",
    "ReservationCapacityExceeded",
];

/// IAM's code for a named entity (instance profile, role) that does not
/// exist; upstream counts it as "not found".
pub const NO_SUCH_ENTITY: &str = "NoSuchEntity";

/// Service codes that say "try again later" rather than "this request is
/// wrong".
const RETRYABLE_CODES: [&str; 6] = [
    "InternalError",
    // IAM's code for its own failure (HTTP 500).
    "ServiceFailure",
    "InternalFailure",
    "ServiceUnavailable",
    "Unavailable",
    "RequestTimeout",
];

/// An AWS API operation the provider calls, named as AWS names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    /// EC2 `DescribeInstanceTypes`.
    DescribeInstanceTypes,
    /// EC2 `DescribeInstanceTypeOfferings`.
    DescribeInstanceTypeOfferings,
    /// EC2 `DescribeSubnets`.
    DescribeSubnets,
    /// EC2 `DescribeSecurityGroups`.
    DescribeSecurityGroups,
    /// EC2 `DescribeImages`.
    DescribeImages,
    /// EC2 `DescribeCapacityReservations`.
    DescribeCapacityReservations,
    /// EC2 `DescribePlacementGroups`.
    DescribePlacementGroups,
    /// EC2 `CreateFleet`.
    CreateFleet,
    /// EC2 `CreateLaunchTemplate`.
    CreateLaunchTemplate,
    /// EC2 `RunInstances` (only ever a dry run).
    RunInstances,
    /// EC2 `DescribeLaunchTemplates`.
    DescribeLaunchTemplates,
    /// EC2 `DeleteLaunchTemplate`.
    DeleteLaunchTemplate,
    /// EC2 `DescribeInstances`.
    DescribeInstances,
    /// EC2 `TerminateInstances`.
    TerminateInstances,
    /// EC2 `CreateTags`.
    CreateTags,
    /// EC2 `DescribeSpotPriceHistory`.
    DescribeSpotPriceHistory,
    /// EC2 `DescribeInstanceStatus`.
    DescribeInstanceStatus,
    /// Pricing `GetProducts`.
    GetProducts,
    /// SQS `ReceiveMessage`.
    ReceiveMessage,
    /// SQS `DeleteMessage`.
    DeleteMessage,
    /// SQS `GetQueueUrl`.
    GetQueueUrl,
    /// SSM `GetParameter`.
    GetParameter,
    /// EKS `DescribeCluster`.
    DescribeCluster,
    /// IAM `GetInstanceProfile`.
    GetInstanceProfile,
    /// IAM `CreateInstanceProfile`.
    CreateInstanceProfile,
    /// IAM `AddRoleToInstanceProfile`.
    AddRoleToInstanceProfile,
    /// IAM `RemoveRoleFromInstanceProfile`.
    RemoveRoleFromInstanceProfile,
    /// IAM `DeleteInstanceProfile`.
    DeleteInstanceProfile,
    /// IAM `ListInstanceProfiles`.
    ListInstanceProfiles,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The variants carry AWS's own names, so Debug spells them.
        fmt::Debug::fmt(self, f)
    }
}

/// A failed AWS call. Callers match on the kind and on [`code`](Self::code).
#[derive(Debug, thiserror::Error)]
pub enum Ec2Error {
    /// The service refused the request with an error code
    /// (`InsufficientInstanceCapacity`,
    /// `InvalidLaunchTemplateName.NotFoundException`, ...).
    #[error("{operation}: {code}: {message}")]
    Service {
        /// The call that failed.
        operation: Operation,
        /// AWS's error code.
        code: String,
        /// AWS's message.
        message: String,
    },
    /// The service throttled the caller (`RequestLimitExceeded`,
    /// `Throttling`); worth retrying after a pause.
    #[error("{operation}: throttled ({code}): {message}")]
    Throttling {
        /// The call that failed.
        operation: Operation,
        /// AWS's error code.
        code: String,
        /// AWS's message.
        message: String,
    },
    /// The request did not reach the service, took longer than its
    /// deadline, or its answer could not be read.
    #[error("{operation}: transport failed")]
    Transport {
        /// The call that failed.
        operation: Operation,
        /// Why.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
    /// The request could not be made at all: no credentials, no region, a
    /// request the client refused to build. Retrying the same call does not
    /// help; the configuration must change.
    #[error("{operation}: the request could not be made")]
    Client {
        /// The call that failed.
        operation: Operation,
        /// Why.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
    /// A describe call kept answering with more pages than the client
    /// reads; what was read is dropped rather than taken for the whole.
    #[error("{operation}: more than {pages} pages")]
    PageLimit {
        /// The call that failed.
        operation: Operation,
        /// The pages read before giving up.
        pages: usize,
    },
}

impl Ec2Error {
    /// A service error of `operation` with AWS's `code` and `message`.
    pub fn service(operation: Operation, code: &str, message: impl Into<String>) -> Self {
        Ec2Error::Service {
            operation,
            code: code.to_owned(),
            message: message.into(),
        }
    }

    /// The call that failed.
    pub fn operation(&self) -> Operation {
        match self {
            Ec2Error::Service { operation, .. }
            | Ec2Error::Throttling { operation, .. }
            | Ec2Error::Transport { operation, .. }
            | Ec2Error::Client { operation, .. }
            | Ec2Error::PageLimit { operation, .. } => *operation,
        }
    }

    /// AWS's error code; `None` for a failure the service did not answer
    /// with a code.
    pub fn code(&self) -> Option<&str> {
        match self {
            Ec2Error::Service { code, .. } | Ec2Error::Throttling { code, .. } => Some(code),
            Ec2Error::Transport { .. } | Ec2Error::Client { .. } | Ec2Error::PageLimit { .. } => {
                None
            }
        }
    }

    /// Whether the same request may succeed later: throttling, transport
    /// failures (deadlines among them) and the service's own internal
    /// errors.
    pub fn is_retryable(&self) -> bool {
        match self {
            Ec2Error::Throttling { .. } | Ec2Error::Transport { .. } => true,
            Ec2Error::Service { code, .. } => RETRYABLE_CODES.contains(&code.as_str()),
            Ec2Error::Client { .. } | Ec2Error::PageLimit { .. } => false,
        }
    }

    /// Whether the code says a named resource does not exist
    /// (`InvalidInstanceID.NotFound`,
    /// `InvalidLaunchTemplateName.NotFoundException`, IAM's
    /// `NoSuchEntity`, ...).
    pub fn is_not_found(&self) -> bool {
        self.code().is_some_and(|c| {
            c.ends_with(".NotFound") || c.ends_with("NotFoundException") || c == NO_SUCH_ENTITY
        })
    }

    /// Whether EC2 refused the call as not allowed by the caller's policies
    /// (`UnauthorizedOperation`).
    pub fn is_unauthorized(&self) -> bool {
        self.code() == Some(super::UNAUTHORIZED_OPERATION)
    }

    /// Whether the code is one of [`INSUFFICIENT_CAPACITY_CODES`].
    pub fn is_insufficient_capacity(&self) -> bool {
        self.code()
            .is_some_and(|c| INSUFFICIENT_CAPACITY_CODES.contains(&c))
    }
}
