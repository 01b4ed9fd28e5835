//! One pass over the interruption queue, with the in-memory queue and EC2.

use std::collections::BTreeSet;
use std::sync::Mutex;

use async_trait::async_trait;
use karpenter_core::cloudprovider::{BoxError, OfferingKey};
use karpenter_core::scheduling::CAPACITY_TYPE_SPOT;
use serde_json::json;

use super::live::{TYPE, ZONE, claim_of, ec2, launch, start};
use super::log::capture;
use crate::ec2::{
    Ec2Error, InMemoryQueue, Message, Operation, QueueApi, ReceiveMessageInput, TargetCapacityType,
};
use crate::interruption::{
    ClaimAction, Disposition, InterruptionHandler, Kind, QueuePass, RECEIVE, poll_queue,
};

/// Records the actions it is handed; fails those of the claims named in
/// `failing`.
#[derive(Default)]
struct Recorder {
    done: Mutex<Vec<ClaimAction>>,
    failing: Mutex<BTreeSet<String>>,
}

impl Recorder {
    fn failing(claims: &[&str]) -> Self {
        let recorder = Recorder::default();
        recorder
            .failing
            .lock()
            .expect("the set")
            .extend(claims.iter().map(|&c| c.to_owned()));
        recorder
    }

    fn heal(&self) {
        self.failing.lock().expect("the set").clear();
    }

    fn done(&self) -> Vec<ClaimAction> {
        self.done.lock().expect("the list").clone()
    }
}

#[async_trait]
impl InterruptionHandler for Recorder {
    async fn handle(&self, action: &ClaimAction) -> Result<(), BoxError> {
        if self
            .failing
            .lock()
            .expect("the set")
            .contains(&action.claim)
        {
            return Err(format!("the API server refused {}", action.claim).into());
        }
        self.done.lock().expect("the list").push(action.clone());
        Ok(())
    }
}

/// An EventBridge event of `detail_type` from EC2 about `instance_id`.
fn ec2_event(detail_type: &str, instance_id: &str) -> String {
    json!({
        "version": "0",
        "id": "5d5c3a1e-0000-4000-8000-000000000001",
        "detail-type": detail_type,
        "source": "aws.ec2",
        "account": "123456789012",
        "time": "2026-11-29T07:00:00Z",
        "region": "us-east-1",
        "resources": [],
        "detail": {"instance-id": instance_id, "instance-action": "terminate"},
    })
    .to_string()
}

#[test]
fn the_receive_is_upstreams() {
    assert_eq!(
        RECEIVE,
        ReceiveMessageInput {
            max_number_of_messages: 10,
            wait_time_seconds: 20,
            visibility_timeout: Some(20),
        }
    );
}

#[tokio::test]
async fn a_spot_reclaim_deletes_its_claim_and_marks_the_offering() {
    let ec2 = ec2().await;
    let queue = InMemoryQueue::new(start());
    ec2.attach_queue(queue.clone());
    let reclaimed = launch(&ec2, TargetCapacityType::Spot).await;
    let spared = launch(&ec2, TargetCapacityType::Spot).await;
    let claims = [
        claim_of("spared", &spared),
        claim_of("reclaimed", &reclaimed),
    ];
    assert!(ec2.reclaim_spot(&reclaimed));

    let handler = Recorder::default();
    let pass = poll_queue(&queue, &claims, &handler).await.expect("a pass");
    assert_eq!(
        pass,
        QueuePass {
            received: 1,
            acted: 1,
            deleted: 1,
            ..QueuePass::default()
        }
    );
    let done = handler.done();
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].claim, "reclaimed");
    assert_eq!(done[0].instance_id, reclaimed);
    assert_eq!(done[0].kind, Kind::SpotInterrupted);
    assert!(done[0].delete);
    assert_eq!(
        done[0].mark_unavailable,
        Some(OfferingKey::new(TYPE, ZONE, CAPACITY_TYPE_SPOT))
    );
    assert!(queue.is_empty(), "the handled message is deleted");
}

#[tokio::test]
async fn unreadable_and_unknown_messages_are_deleted_and_the_unreadable_counted() {
    let queue = InMemoryQueue::new(start());
    queue.push("not json at all");
    queue.push(
        json!({
            "version": "0", "source": "aws.ec2",
            "detail-type": "EC2 Spot Instance Interruption Warning",
            "detail": "secret-value-in-the-body",
        })
        .to_string(),
    );
    queue.push(
        json!({"version": "0", "source": "aws.s3", "detail-type": "Object Created", "detail": {}})
            .to_string(),
    );
    let handler = Recorder::default();
    let (log, guard) = capture();
    let pass = poll_queue(&queue, &[], &handler).await.expect("a pass");
    drop(guard);
    assert_eq!(
        pass,
        QueuePass {
            received: 3,
            deleted: 3,
            malformed: 2,
            ..QueuePass::default()
        }
    );
    assert!(queue.is_empty());
    assert!(handler.done().is_empty());
    let log = log.text();
    assert!(
        log.contains("msg-00000001") && log.contains("msg-00000002"),
        "{log}"
    );
    assert!(
        !log.contains("msg-00000003"),
        "an unknown kind is not malformed: {log}"
    );
    assert!(
        !log.contains("secret-value") && !log.contains("not json"),
        "the log quotes no body: {log}"
    );
}

#[tokio::test]
async fn a_failed_action_leaves_the_message_until_it_succeeds() {
    let ec2 = ec2().await;
    let queue = InMemoryQueue::new(start());
    ec2.attach_queue(queue.clone());
    let id = launch(&ec2, TargetCapacityType::Spot).await;
    // Two claims of one instance: the failing one does not stop the other.
    let claims = [claim_of("stuck", &id), claim_of("fine", &id)];
    assert!(ec2.reclaim_spot(&id));

    let handler = Recorder::failing(&["stuck"]);
    let first = poll_queue(&queue, &claims, &handler).await.expect("a pass");
    assert_eq!(
        first,
        QueuePass {
            received: 1,
            acted: 1,
            left: 1,
            ..QueuePass::default()
        }
    );
    assert_eq!(queue.len(), 1, "the message stays");
    let hidden = poll_queue(&queue, &claims, &handler).await.expect("a pass");
    assert_eq!(hidden.received, 0, "hidden until its timeout ends");

    queue.redeliver();
    handler.heal();
    let again = poll_queue(&queue, &claims, &handler).await.expect("a pass");
    assert_eq!(
        again,
        QueuePass {
            received: 1,
            acted: 2,
            deleted: 1,
            ..QueuePass::default()
        }
    );
    assert!(queue.is_empty());
    let claims_done: Vec<String> = handler.done().into_iter().map(|a| a.claim).collect();
    assert_eq!(claims_done, ["fine", "stuck", "fine"]);
}

#[tokio::test]
async fn a_rebalance_recommendation_is_an_event_only() {
    let ec2 = ec2().await;
    let id = launch(&ec2, TargetCapacityType::Spot).await;
    let queue = InMemoryQueue::new(start());
    queue.push(ec2_event("EC2 Instance Rebalance Recommendation", &id));
    let handler = Recorder::default();
    let pass = poll_queue(&queue, &[claim_of("kept", &id)], &handler)
        .await
        .expect("a pass");
    assert_eq!((pass.acted, pass.deleted), (1, 1));
    let done = handler.done();
    assert_eq!(done[0].kind, Kind::RebalanceRecommendation);
    assert_eq!(done[0].disposition, Disposition::Keep);
    assert!(!done[0].delete);
    assert!(done[0].mark_unavailable.is_none());
    assert!(
        !done[0].events.is_empty(),
        "the recommendation is announced"
    );
}

#[tokio::test]
async fn an_instance_without_a_claim_does_nothing_and_the_message_goes() {
    let ec2 = ec2().await;
    let queue = InMemoryQueue::new(start());
    ec2.attach_queue(queue.clone());
    let orphan = launch(&ec2, TargetCapacityType::Spot).await;
    let other = launch(&ec2, TargetCapacityType::Spot).await;
    assert!(ec2.reclaim_spot(&orphan));
    let handler = Recorder::default();
    let pass = poll_queue(&queue, &[claim_of("other", &other)], &handler)
        .await
        .expect("a pass");
    assert_eq!(
        pass,
        QueuePass {
            received: 1,
            deleted: 1,
            ..QueuePass::default()
        }
    );
    assert!(handler.done().is_empty());
    assert!(queue.is_empty());
}

/// A queue whose receive throttles, or whose deletes fail.
struct Faulty {
    inner: InMemoryQueue,
    throttle: bool,
}

#[async_trait]
impl QueueApi for Faulty {
    async fn receive_message(&self, input: ReceiveMessageInput) -> Result<Vec<Message>, Ec2Error> {
        if self.throttle {
            return Err(Ec2Error::Throttling {
                operation: Operation::ReceiveMessage,
                code: "RequestThrottled".into(),
                message: "slow down".into(),
            });
        }
        self.inner.receive_message(input).await
    }

    async fn delete_message(&self, _: &str) -> Result<(), Ec2Error> {
        Err(Ec2Error::service(
            Operation::DeleteMessage,
            "AccessDenied",
            "no sqs:DeleteMessage",
        ))
    }
}

#[tokio::test]
async fn a_receive_error_is_returned_and_a_failed_delete_leaves_the_message() {
    let inner = InMemoryQueue::new(start());
    inner.push(ec2_event("EC2 Instance Rebalance Recommendation", "i-0abc"));
    let throttled = Faulty {
        inner: inner.clone(),
        throttle: true,
    };
    let handler = Recorder::default();
    let error = poll_queue(&throttled, &[], &handler)
        .await
        .expect_err("the receive fails");
    assert_eq!(error.operation(), Operation::ReceiveMessage);
    assert!(error.is_retryable());

    let refusing = Faulty {
        inner: inner.clone(),
        throttle: false,
    };
    let pass = poll_queue(&refusing, &[], &handler).await.expect("a pass");
    assert_eq!(
        pass,
        QueuePass {
            received: 1,
            left: 1,
            delete_failed: 1,
            ..QueuePass::default()
        }
    );
    assert_eq!(inner.len(), 1);
}
