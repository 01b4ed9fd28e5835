//! An SDK failure read as an [`Ec2Error`]: the service's code and message
//! kept, throttling told apart, transport and client failures keeping the
//! SDK's error as their source.

use std::error::Error as StdError;
use std::fmt;

use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};

use crate::ec2::{Ec2Error, Operation};

/// The codes AWS services answer when the caller is throttled (EC2's
/// Query protocol and the JSON protocols of SQS, SSM and Pricing).
const THROTTLING_CODES: [&str; 9] = [
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestLimitExceeded",
    "RequestThrottled",
    "RequestThrottledException",
    "TooManyRequestsException",
    "SlowDown",
    "EC2ThrottledException",
];

/// The code given to a service error that carried none.
const UNKNOWN_CODE: &str = "Unknown";

/// `error` of `operation` as an [`Ec2Error`].
///
/// A service error becomes [`Ec2Error::Throttling`] or
/// [`Ec2Error::Service`] with its code and message; a timeout, an I/O
/// failure or an unreadable answer [`Ec2Error::Transport`]; anything that
/// stopped the request being made (no credentials, a request the SDK
/// could not build) [`Ec2Error::Client`]. The SDK's errors hold no
/// credentials, so keeping them as the source leaks none.
pub(crate) fn sdk_error<E, R>(operation: Operation, error: SdkError<E, R>) -> Ec2Error
where
    E: ProvideErrorMetadata + StdError + Send + Sync + 'static,
    R: fmt::Debug + Send + Sync + 'static,
{
    match &error {
        SdkError::ServiceError(service) => {
            let code = service.err().code().unwrap_or(UNKNOWN_CODE).to_owned();
            let message = service.err().message().unwrap_or_default().to_owned();
            if THROTTLING_CODES.contains(&code.as_str()) {
                Ec2Error::Throttling {
                    operation,
                    code,
                    message,
                }
            } else {
                Ec2Error::Service {
                    operation,
                    code,
                    message,
                }
            }
        }
        SdkError::TimeoutError(_) | SdkError::ResponseError(_) => Ec2Error::Transport {
            operation,
            source: Box::new(error),
        },
        SdkError::DispatchFailure(failure) if failure.is_io() || failure.is_timeout() => {
            Ec2Error::Transport {
                operation,
                source: Box::new(error),
            }
        }
        _ => Ec2Error::Client {
            operation,
            source: Box::new(error),
        },
    }
}
