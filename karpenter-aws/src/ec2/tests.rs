use jiff::{SignedDuration, Timestamp};

use super::pricing::price_document;
use super::{
    Ec2Error, GetProductsInput, InMemoryEc2, InMemoryQueue, Operation, PricingFilter, QueueApi,
    ReceiveMessageInput, on_demand_prices,
};
use crate::ec2::Ec2Api;

fn receive(max: u32, visibility: Option<u32>) -> ReceiveMessageInput {
    ReceiveMessageInput {
        max_number_of_messages: max,
        wait_time_seconds: 20,
        visibility_timeout: visibility,
    }
}

#[tokio::test]
async fn receive_gives_at_most_n_oldest_first() {
    let queue = InMemoryQueue::new(Timestamp::UNIX_EPOCH);
    for body in ["one", "two", "three"] {
        queue.push(body);
    }
    let first = queue.receive_message(receive(2, None)).await.unwrap();
    let bodies: Vec<&str> = first.iter().map(|m| m.body.as_str()).collect();
    assert_eq!(bodies, ["one", "two"]);
    let rest = queue.receive_message(receive(10, None)).await.unwrap();
    assert_eq!(rest.len(), 1, "received messages stay hidden");
    assert_eq!(rest[0].body, "three");
}

#[tokio::test]
async fn undeleted_messages_come_back_after_the_visibility_timeout() {
    let queue = InMemoryQueue::new(Timestamp::UNIX_EPOCH);
    queue.push("warning");
    let first = queue.receive_message(receive(10, Some(20))).await.unwrap();
    queue.advance(SignedDuration::from_secs(19));
    assert!(
        queue
            .receive_message(receive(10, None))
            .await
            .unwrap()
            .is_empty()
    );
    queue.advance(SignedDuration::from_secs(1));
    let again = queue.receive_message(receive(10, None)).await.unwrap();
    assert_eq!(again[0].message_id, first[0].message_id);
    assert_ne!(again[0].receipt_handle, first[0].receipt_handle);
    let stale = queue
        .delete_message(&first[0].receipt_handle)
        .await
        .unwrap_err();
    assert_eq!(stale.code(), Some("ReceiptHandleIsInvalid"));
    queue
        .delete_message(&again[0].receipt_handle)
        .await
        .unwrap();
    assert!(queue.is_empty());
}

#[tokio::test]
async fn redeliver_makes_hidden_messages_visible_at_once() {
    let queue = InMemoryQueue::new(Timestamp::UNIX_EPOCH);
    queue.push("a");
    queue.receive_message(receive(1, None)).await.unwrap();
    queue.redeliver();
    assert_eq!(
        queue.receive_message(receive(1, None)).await.unwrap().len(),
        1
    );
    assert_eq!(queue.len(), 1);
}

#[tokio::test]
async fn receive_refuses_more_than_ten() {
    let queue = InMemoryQueue::new(Timestamp::UNIX_EPOCH);
    let err = queue.receive_message(receive(11, None)).await.unwrap_err();
    assert_eq!(err.code(), Some("InvalidParameterValue"));
    assert!(queue.receive_message(receive(0, None)).await.is_err());
}

#[test]
fn errors_classify_by_code() {
    let ice = Ec2Error::service(
        Operation::CreateFleet,
        "InsufficientInstanceCapacity",
        "none left",
    );
    assert!(ice.is_insufficient_capacity());
    assert!(!ice.is_retryable());
    assert!(!ice.is_not_found());
    assert_eq!(ice.operation(), Operation::CreateFleet);
    assert_eq!(
        ice.to_string(),
        "CreateFleet: InsufficientInstanceCapacity: none left"
    );
    let internal = Ec2Error::service(Operation::DescribeImages, "InternalError", "oops");
    assert!(internal.is_retryable());
    let io = std::io::Error::other("reset");
    let transport = Ec2Error::Transport {
        operation: Operation::DescribeSubnets,
        source: Box::new(io),
    };
    assert_eq!(transport.code(), None);
    assert!(transport.is_retryable());
    let source = std::error::Error::source(&transport).map(ToString::to_string);
    assert_eq!(source.as_deref(), Some("reset"));
}

#[test]
fn price_documents_read_back_to_their_prices() {
    let list = vec![
        price_document("us-east-1", "m5.large", 0.096, "USD"),
        price_document("cn-north-1", "m5.xlarge", 1.5, "CNY"),
        price_document("us-east-1", "free.nano", 0.0, "USD"),
    ];
    let prices = on_demand_prices(&list).unwrap();
    assert_eq!(prices.len(), 2, "a zero price is no price");
    assert!((prices["m5.large"] - 0.096).abs() < 1e-12);
    assert!((prices["m5.xlarge"] - 1.5).abs() < 1e-12);
}

#[test]
fn a_broken_price_document_is_named() {
    let list = vec![
        price_document("us-east-1", "m5.large", 0.096, "USD"),
        "{\"product\": 1}".to_owned(),
    ];
    let err = on_demand_prices(&list).unwrap_err();
    assert_eq!(err.index, 1);
    let bad_number = price_document("us-east-1", "m5.large", 0.1, "USD").replace("0.1", "cheap");
    assert_eq!(on_demand_prices(&[bad_number]).unwrap_err().index, 0);
}

#[tokio::test]
async fn get_products_prices_a_region_from_the_catalog() {
    let ec2 = InMemoryEc2::new("us-east-1");
    let input = GetProductsInput {
        service_code: "AmazonEC2".into(),
        filters: vec![PricingFilter::new("regionCode", "us-east-1")],
    };
    let documents = ec2.get_products(input).await.unwrap().price_list;
    let prices = on_demand_prices(&documents).unwrap();
    let catalog = crate::Catalog::embedded().unwrap();
    let table = catalog
        .on_demand_price("us-east-1", "m5.large")
        .map(|(p, _)| p);
    assert_eq!(prices.get("m5.large").copied(), table);
    assert_eq!(
        prices.len(),
        catalog
            .type_names()
            .filter(|t| catalog.on_demand_price("us-east-1", t).is_some())
            .count()
    );
    let elsewhere = GetProductsInput {
        service_code: "AmazonEC2".into(),
        filters: vec![PricingFilter::new("regionCode", "eu-west-1")],
    };
    assert!(
        ec2.get_products(elsewhere)
            .await
            .unwrap()
            .price_list
            .is_empty()
    );
}

#[tokio::test]
async fn both_traits_work_as_trait_objects() {
    let ec2: std::sync::Arc<dyn Ec2Api> = std::sync::Arc::new(InMemoryEc2::new("us-west-2"));
    let queue: Box<dyn QueueApi> = Box::new(InMemoryQueue::new(Timestamp::UNIX_EPOCH));
    let input = super::DescribeInput::default();
    assert!(
        ec2.describe_subnets(input)
            .await
            .unwrap()
            .subnets
            .is_empty()
    );
    assert!(
        queue
            .receive_message(receive(1, None))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn queue_faults_fail_the_next_call_and_leave_messages_alone() {
    let queue = InMemoryQueue::new(Timestamp::UNIX_EPOCH);
    queue.push("a");
    let denied = Ec2Error::service(Operation::ReceiveMessage, "AccessDenied", "no");
    queue.fail_next(Operation::ReceiveMessage, denied);
    let err = queue.receive_message(receive(1, None)).await.unwrap_err();
    assert_eq!(err.code(), Some("AccessDenied"));
    let got = queue.receive_message(receive(1, None)).await.unwrap();
    assert_eq!(got.len(), 1, "the failed call hid nothing");
}

#[tokio::test]
async fn in_memory_parameters_answer_what_was_set_and_not_found_otherwise() {
    use super::{InMemoryParameters, PARAMETER_NOT_FOUND, ParameterApi};

    let parameters = InMemoryParameters::new();
    parameters.set("/aws/service/a", "ami-1");
    let shared = parameters.clone();
    shared.set("/aws/service/a", "ami-2");
    assert_eq!(
        parameters.get_parameter("/aws/service/a").await.ok(),
        Some("ami-2".to_owned())
    );
    let missing = parameters
        .get_parameter("/aws/service/b")
        .await
        .expect_err("never set");
    assert_eq!(missing.code(), Some(PARAMETER_NOT_FOUND));
    assert_eq!(missing.operation(), Operation::GetParameter);
}
