//! [`SdkQueue`]: the interruption queue ([`QueueApi`]) over `aws-sdk-sqs`.

use async_trait::async_trait;
use aws_sdk_sqs::types::MessageSystemAttributeName;

use super::error::sdk_error;
use crate::ec2::{Ec2Error, Message, Operation, QueueApi, ReceiveMessageInput};

/// An SQS queue found by name: what
/// [`AwsClients::queue`](super::AwsClients::queue) gives.
///
/// Receives ask for the `SentTimestamp` attribute and every message
/// attribute, as upstream does; each attempt's deadline is the clients'
/// attempt limit plus the long poll's wait, so a 20 s poll is never cut
/// short.
#[derive(Clone, Debug)]
pub struct SdkQueue {
    pub(super) client: aws_sdk_sqs::Client,
    pub(super) url: String,
}

impl SdkQueue {
    /// The queue's URL, as `GetQueueUrl` answered it.
    pub fn url(&self) -> &str {
        &self.url
    }
}

#[async_trait]
impl QueueApi for SdkQueue {
    async fn receive_message(&self, input: ReceiveMessageInput) -> Result<Vec<Message>, Ec2Error> {
        let op = Operation::ReceiveMessage;
        let visibility = input.visibility_timeout.map(clamp);
        let answer = self
            .client
            .receive_message()
            .queue_url(&self.url)
            .max_number_of_messages(clamp(input.max_number_of_messages))
            .wait_time_seconds(clamp(input.wait_time_seconds))
            .set_visibility_timeout(visibility)
            .message_system_attribute_names(MessageSystemAttributeName::SentTimestamp)
            .message_attribute_names("All")
            .send()
            .await
            .map_err(|e| sdk_error(op, e))?;
        Ok(answer
            .messages()
            .iter()
            .map(|m| Message {
                message_id: m.message_id().unwrap_or_default().to_owned(),
                receipt_handle: m.receipt_handle().unwrap_or_default().to_owned(),
                body: m.body().unwrap_or_default().to_owned(),
            })
            .collect())
    }

    async fn delete_message(&self, receipt_handle: &str) -> Result<(), Ec2Error> {
        self.client
            .delete_message()
            .queue_url(&self.url)
            .receipt_handle(receipt_handle)
            .send()
            .await
            .map_err(|e| sdk_error(Operation::DeleteMessage, e))?;
        Ok(())
    }
}

/// A count or number of seconds as SQS's signed integer.
fn clamp(value: u32) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}
