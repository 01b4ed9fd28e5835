//! [`SdkParameters`]: SSM Parameter Store reads ([`ParameterApi`]) over
//! `aws-sdk-ssm`.

use async_trait::async_trait;

use super::error::sdk_error;
use crate::ec2::{Ec2Error, Operation, ParameterApi};

/// SSM Parameter Store: what
/// [`AwsClients::parameters`](super::AwsClients::parameters) gives.
#[derive(Clone, Debug)]
pub struct SdkParameters {
    pub(super) client: aws_sdk_ssm::Client,
}

#[async_trait]
impl ParameterApi for SdkParameters {
    async fn get_parameter(&self, name: &str) -> Result<String, Ec2Error> {
        let op = Operation::GetParameter;
        let answer = self
            .client
            .get_parameter()
            .name(name)
            .send()
            .await
            .map_err(|e| sdk_error(op, e))?;
        answer
            .parameter()
            .and_then(|p| p.value())
            .map(str::to_owned)
            .ok_or_else(|| Ec2Error::Transport {
                operation: op,
                source: format!("the answer for {name} has no value").into(),
            })
    }
}
