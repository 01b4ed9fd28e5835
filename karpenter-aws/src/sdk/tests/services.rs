//! SQS (the interruption queue), SSM (public parameters) and the Pricing
//! API, over their JSON protocols.

use serde_json::json;
use wiremock::matchers::body_partial_json;
use wiremock::{MockServer, ResponseTemplate};

use super::{clients, fast_limits, json_ok, json_target};
use crate::ec2::{
    Ec2Api, GetProductsInput, PARAMETER_NOT_FOUND, ParameterApi, PricingFilter, QueueApi,
    ReceiveMessageInput, on_demand_prices,
};
use crate::sdk::pricing_region;

const QUEUE_URL: &str = "https://sqs.us-west-2.amazonaws.com/123456789012/karpenter-demo";

#[tokio::test]
async fn the_queue_is_found_by_name_then_received_from_and_deleted_from() {
    let server = MockServer::start().await;
    json_target("AmazonSQS.GetQueueUrl")
        .and(body_partial_json(json!({"QueueName": "karpenter-demo"})))
        .respond_with(json_ok(json!({"QueueUrl": QUEUE_URL})))
        .mount(&server)
        .await;
    json_target("AmazonSQS.ReceiveMessage")
        .and(body_partial_json(json!({
            "QueueUrl": QUEUE_URL,
            "MaxNumberOfMessages": 10,
            "WaitTimeSeconds": 0,
            "VisibilityTimeout": 20,
            "MessageSystemAttributeNames": ["SentTimestamp"],
            "MessageAttributeNames": ["All"],
        })))
        .respond_with(json_ok(json!({"Messages": [
            {"MessageId": "m-1", "ReceiptHandle": "rh-1", "Body": "{\"version\":\"0\"}",
             "MD5OfBody": "ignored"},
        ]})))
        .mount(&server)
        .await;
    json_target("AmazonSQS.DeleteMessage")
        .and(body_partial_json(
            json!({"QueueUrl": QUEUE_URL, "ReceiptHandle": "rh-1"}),
        ))
        .respond_with(json_ok(json!({})))
        .expect(1)
        .mount(&server)
        .await;

    let queue = clients(&server, fast_limits())
        .queue("karpenter-demo")
        .await
        .expect("the queue exists");
    assert_eq!(queue.url(), QUEUE_URL);
    let input = ReceiveMessageInput {
        max_number_of_messages: 10,
        wait_time_seconds: 0,
        visibility_timeout: Some(20),
    };
    let messages = queue.receive_message(input).await.expect("one message");
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].body, "{\"version\":\"0\"}");
    queue
        .delete_message(&messages[0].receipt_handle)
        .await
        .expect("deleted");
}

#[tokio::test]
async fn a_parameter_is_read_and_a_missing_one_is_ssms_not_found() {
    let server = MockServer::start().await;
    let name = "/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/standard/recommended/image_id";
    json_target("AmazonSSM.GetParameter")
        .and(body_partial_json(json!({"Name": name})))
        .respond_with(json_ok(json!({"Parameter": {
            "Name": name, "Type": "String", "Value": "ami-0123456789abcdef0", "Version": 4,
        }})))
        .with_priority(1)
        .mount(&server)
        .await;
    json_target("AmazonSSM.GetParameter")
        .respond_with(ResponseTemplate::new(400).set_body_raw(
            json!({"__type": "ParameterNotFound", "message": "not found"}).to_string(),
            "application/x-amz-json-1.1",
        ))
        .with_priority(2)
        .mount(&server)
        .await;

    let ssm = clients(&server, fast_limits()).parameters();
    assert_eq!(
        ssm.get_parameter(name).await.expect("the parameter"),
        "ami-0123456789abcdef0"
    );
    let missing = ssm
        .get_parameter("/aws/service/eks/none")
        .await
        .expect_err("no such parameter");
    assert_eq!(missing.code(), Some(PARAMETER_NOT_FOUND));
    assert!(!missing.is_retryable());
}

#[tokio::test]
async fn products_are_read_from_every_page_with_the_filters_sent() {
    let server = MockServer::start().await;
    let document = |instance_type: &str, price: &str| {
        json!({
            "product": {"attributes": {"instanceType": instance_type}},
            "terms": {"OnDemand": {"t": {"priceDimensions": {"d": {"pricePerUnit": {"USD": price}}}}}},
        })
        .to_string()
    };
    json_target("AWSPriceListService.GetProducts")
        .and(body_partial_json(json!({"NextToken": "page-2"})))
        .respond_with(json_ok(json!({
            "FormatVersion": "aws_v1",
            "PriceList": [document("c5.large", "0.0850000000")],
        })))
        .with_priority(1)
        .mount(&server)
        .await;
    json_target("AWSPriceListService.GetProducts")
        .and(body_partial_json(json!({
            "ServiceCode": "AmazonEC2",
            "Filters": [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": "us-west-2"}],
        })))
        .respond_with(json_ok(json!({
            "FormatVersion": "aws_v1",
            "PriceList": [document("m5.large", "0.0960000000")],
            "NextToken": "page-2",
        })))
        .with_priority(2)
        .mount(&server)
        .await;

    let ec2 = clients(&server, fast_limits()).ec2();
    let input = GetProductsInput {
        service_code: "AmazonEC2".into(),
        filters: vec![PricingFilter::new("regionCode", "us-west-2")],
    };
    let out = ec2.get_products(input).await.expect("two pages");
    let prices = on_demand_prices(&out.price_list).expect("readable documents");
    assert_eq!(prices.get("m5.large"), Some(&0.096));
    assert_eq!(prices.get("c5.large"), Some(&0.085));
}

#[test]
fn prices_come_from_the_pricing_endpoint_nearest_the_region() {
    assert_eq!(pricing_region("ap-southeast-2"), "ap-south-1");
    assert_eq!(pricing_region("cn-north-1"), "cn-northwest-1");
    assert_eq!(pricing_region("eu-west-1"), "eu-central-1");
    assert_eq!(pricing_region("us-west-2"), "us-east-1");
    assert_eq!(pricing_region("sa-east-1"), "us-east-1");
}

#[tokio::test]
async fn the_eks_cluster_gives_its_endpoint_ca_and_service_cidr() {
    use wiremock::Mock;
    use wiremock::matchers::{method, path};

    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/clusters/demo"))
        .respond_with(json_ok(json!({"cluster": {
            "name": "demo",
            "endpoint": "https://ABC.gr7.us-west-2.eks.amazonaws.com",
            "certificateAuthority": {"data": "LS0tLS1CRUdJTg=="},
            "kubernetesNetworkConfig": {"serviceIpv4Cidr": "10.100.0.0/16", "ipFamily": "ipv4"},
            "version": "1.34",
        }})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/clusters/other"))
        .respond_with(
            ResponseTemplate::new(404)
                .set_body_raw(
                    json!({"message": "No cluster found for name: other."}).to_string(),
                    "application/json",
                )
                .insert_header(
                    "x-amzn-errortype",
                    "ResourceNotFoundException:http://internal.amazon.com/coral/com.amazonaws.eks/",
                ),
        )
        .mount(&server)
        .await;

    let aws = clients(&server, fast_limits());
    let cluster = aws.describe_cluster("demo").await.expect("the cluster");
    assert_eq!(
        cluster.endpoint.as_deref(),
        Some("https://ABC.gr7.us-west-2.eks.amazonaws.com")
    );
    assert_eq!(
        cluster.certificate_authority.as_deref(),
        Some("LS0tLS1CRUdJTg==")
    );
    assert_eq!(cluster.service_cidr.as_deref(), Some("10.100.0.0/16"));
    assert_eq!(cluster.version.as_deref(), Some("1.34"));
    let missing = aws
        .describe_cluster("other")
        .await
        .expect_err("no such cluster");
    assert_eq!(missing.code(), Some("ResourceNotFoundException"));
    assert!(missing.is_not_found());
    assert!(!missing.is_retryable());
}
