//! The interruption queue (SQS) behind [`QueueApi`], and [`InMemoryQueue`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};

use super::faults::Faults;
use super::{Ec2Error, Operation};

/// SQS's cap on messages per receive.
const MAX_MESSAGES: usize = 10;

/// How long a received message stays hidden when the call names no
/// timeout: SQS's default.
const DEFAULT_VISIBILITY: SignedDuration = SignedDuration::from_secs(30);

/// `ReceiveMessage`'s input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiveMessageInput {
    /// At most this many (1 to 10; upstream: 10).
    pub max_number_of_messages: u32,
    /// Long polling: seconds to wait for a message (upstream: 20).
    pub wait_time_seconds: u32,
    /// Seconds a received message stays hidden (upstream: 20); the queue's
    /// default when `None`.
    pub visibility_timeout: Option<u32>,
}

/// A received message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Message {
    /// The message's ID.
    pub message_id: String,
    /// What deletes this receipt of it.
    pub receipt_handle: String,
    /// The body: an EventBridge envelope for the interruption queue.
    pub body: String,
}

/// The interruption queue's calls.
///
/// Contract: `receive_message` returns at most `max_number_of_messages`
/// visible messages, oldest first, hiding each for the visibility timeout;
/// one not deleted by then comes back with a new receipt handle.
/// `delete_message` removes the message a current receipt handle names.
#[async_trait]
pub trait QueueApi: Send + Sync {
    /// SQS `ReceiveMessage`.
    async fn receive_message(&self, input: ReceiveMessageInput) -> Result<Vec<Message>, Ec2Error>;
    /// SQS `DeleteMessage`.
    async fn delete_message(&self, receipt_handle: &str) -> Result<(), Ec2Error>;
}

#[derive(Debug)]
struct Stored {
    id: String,
    body: String,
    /// Hidden until then, with the receipt that hid it.
    hidden: Option<(Timestamp, String)>,
}

#[derive(Debug, Default)]
struct QueueState {
    now: Timestamp,
    messages: VecDeque<Stored>,
    next_message: u64,
    next_receipt: u64,
    faults: Faults,
}

impl QueueState {
    /// The error injected for `operation`'s next call, if any.
    fn take_fault(&mut self, operation: Operation) -> Result<(), Ec2Error> {
        self.faults.take(operation)
    }
}

/// An SQS queue in memory on its own clock: receives never wait, and time
/// moves only by [`advance`](Self::advance). Clones share the queue.
#[derive(Clone, Debug, Default)]
pub struct InMemoryQueue {
    state: Arc<Mutex<QueueState>>,
}

impl InMemoryQueue {
    /// An empty queue whose clock reads `now`.
    pub fn new(now: Timestamp) -> Self {
        let queue = Self::default();
        queue.lock().now = now;
        queue
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        // A panic while holding the lock leaves plain data behind: keep going.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends a message with `body`; its ID.
    pub fn push(&self, body: impl Into<String>) -> String {
        let mut state = self.lock();
        state.next_message += 1;
        let id = format!("msg-{:08}", state.next_message);
        state.messages.push_back(Stored {
            id: id.clone(),
            body: body.into(),
            hidden: None,
        });
        id
    }

    /// Moves the queue's clock on by `by`.
    pub fn advance(&self, by: SignedDuration) {
        let mut state = self.lock();
        state.now = state.now.saturating_add(by).unwrap_or(state.now);
    }

    /// Makes every received, undeleted message visible again at once.
    pub fn redeliver(&self) {
        for message in &mut self.lock().messages {
            message.hidden = None;
        }
    }

    /// Makes the next call of `operation` (`ReceiveMessage` or
    /// `DeleteMessage`) fail with `error`; several fail the next calls in
    /// turn.
    pub fn fail_next(&self, operation: Operation, error: Ec2Error) {
        self.lock().faults.push(operation, error);
    }

    /// How many messages the queue holds, hidden or not.
    pub fn len(&self) -> usize {
        self.lock().messages.len()
    }

    /// Whether the queue holds no message.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait]
impl QueueApi for InMemoryQueue {
    async fn receive_message(&self, input: ReceiveMessageInput) -> Result<Vec<Message>, Ec2Error> {
        let mut state = self.lock();
        state.take_fault(Operation::ReceiveMessage)?;
        let wanted = usize::try_from(input.max_number_of_messages).unwrap_or(MAX_MESSAGES);
        if !(1..=MAX_MESSAGES).contains(&wanted) {
            return Err(Ec2Error::service(
                Operation::ReceiveMessage,
                "InvalidParameterValue",
                format!("MaxNumberOfMessages must be 1 to 10, not {wanted}"),
            ));
        }
        let visibility = input.visibility_timeout.map_or(DEFAULT_VISIBILITY, |s| {
            SignedDuration::from_secs(i64::from(s))
        });
        let now = state.now;
        let until = now.saturating_add(visibility).unwrap_or(now);
        let mut received = Vec::new();
        let mut next_receipt = state.next_receipt;
        for message in &mut state.messages {
            if received.len() == wanted {
                break;
            }
            if message.hidden.as_ref().is_some_and(|(at, _)| *at > now) {
                continue;
            }
            next_receipt += 1;
            let receipt = format!("rh-{next_receipt:08}");
            message.hidden = Some((until, receipt.clone()));
            received.push(Message {
                message_id: message.id.clone(),
                receipt_handle: receipt,
                body: message.body.clone(),
            });
        }
        state.next_receipt = next_receipt;
        Ok(received)
    }

    async fn delete_message(&self, receipt_handle: &str) -> Result<(), Ec2Error> {
        let mut state = self.lock();
        state.take_fault(Operation::DeleteMessage)?;
        let position = state.messages.iter().position(|m| {
            m.hidden
                .as_ref()
                .is_some_and(|(_, receipt)| receipt == receipt_handle)
        });
        match position {
            Some(i) => {
                state.messages.remove(i);
                Ok(())
            }
            None => Err(Ec2Error::service(
                Operation::DeleteMessage,
                "ReceiptHandleIsInvalid",
                format!("receipt handle {receipt_handle} names no received message"),
            )),
        }
    }
}
