//! IAM's instance-profile calls over its Query protocol (form-encoded
//! requests, XML answers): each call's request and answer, `NoSuchEntity`
//! read as not-found, throttling retried, the global endpoint.

use aws_sdk_iam::config::endpoint::{DefaultResolver, Params, ResolveEndpoint};
use wiremock::matchers::body_string_contains;
use wiremock::{MockServer, ResponseTemplate};

use super::{clients, ec2_action, fast_limits, received};
use crate::ec2::{Operation, Tag};
use crate::iam::{CreateInstanceProfileInput, IamApi, is_role_not_found};

const IAM_NS: &str = "https://iam.amazonaws.com/doc/2010-05-08/";

/// IAM's answer to `action`, `body` inside its result element.
fn iam_ok(action: &str, body: &str) -> ResponseTemplate {
    let xml = format!(
        "<{action}Response xmlns=\"{IAM_NS}\"><{action}Result>{body}</{action}Result>\
         <ResponseMetadata><RequestId>req-1</RequestId></ResponseMetadata></{action}Response>"
    );
    ResponseTemplate::new(200).set_body_raw(xml, "text/xml")
}

/// IAM's answer to an action without a result.
fn iam_done(action: &str) -> ResponseTemplate {
    let xml = format!(
        "<{action}Response xmlns=\"{IAM_NS}\"><ResponseMetadata><RequestId>req-1</RequestId>\
         </ResponseMetadata></{action}Response>"
    );
    ResponseTemplate::new(200).set_body_raw(xml, "text/xml")
}

/// IAM's error answer.
fn iam_error(status: u16, code: &str, message: &str) -> ResponseTemplate {
    let xml = format!(
        "<ErrorResponse xmlns=\"{IAM_NS}\"><Error><Type>Sender</Type><Code>{code}</Code>\
         <Message>{message}</Message></Error><RequestId>req-1</RequestId></ErrorResponse>"
    );
    ResponseTemplate::new(status).set_body_raw(xml, "text/xml")
}

/// A profile's XML, holding `role` when given.
fn profile_xml(name: &str, path: &str, role: Option<&str>) -> String {
    let roles = role.map_or(String::new(), |role| {
        format!(
            "<member><Path>/</Path><RoleName>{role}</RoleName><RoleId>AROA1</RoleId>\
             <Arn>arn:aws:iam::123456789012:role/{role}</Arn>\
             <CreateDate>2024-01-01T00:00:00Z</CreateDate></member>"
        )
    });
    format!(
        "<InstanceProfile><InstanceProfileId>AIPA1</InstanceProfileId><Roles>{roles}</Roles>\
         <InstanceProfileName>{name}</InstanceProfileName><Path>{path}</Path>\
         <Arn>arn:aws:iam::123456789012:instance-profile{path}{name}</Arn>\
         <CreateDate>2024-01-01T00:00:00Z</CreateDate>\
         <Tags><member><Key>karpenter.k8s.aws/ec2nodeclass</Key><Value>default</Value></member></Tags>\
         </InstanceProfile>"
    )
}

#[tokio::test]
async fn a_profile_is_read_with_its_role_and_tags() {
    let server = MockServer::start().await;
    ec2_action("GetInstanceProfile")
        .and(body_string_contains("InstanceProfileName=demo_1"))
        .respond_with(iam_ok(
            "GetInstanceProfile",
            &profile_xml("demo_1", "/karpenter/", Some("NodeRole")),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let iam = clients(&server, fast_limits()).iam();
    let profile = iam.get_instance_profile("demo_1").await.expect("found");
    assert_eq!(profile.instance_profile_name, "demo_1");
    assert_eq!(profile.path, "/karpenter/");
    let roles: Vec<&str> = profile.roles.iter().map(|r| r.role_name.as_str()).collect();
    assert_eq!(roles, ["NodeRole"]);
    assert_eq!(
        profile.tags,
        [Tag::new("karpenter.k8s.aws/ec2nodeclass", "default")]
    );
}

#[tokio::test]
async fn a_profile_is_created_with_its_path_and_tags() {
    let server = MockServer::start().await;
    ec2_action("CreateInstanceProfile")
        .and(body_string_contains("InstanceProfileName=demo_1"))
        .and(body_string_contains("Path=%2Fkarpenter%2Fus-west-2%2F"))
        .and(body_string_contains(
            "Tags.member.1.Key=karpenter.k8s.aws%2Fec2nodeclass",
        ))
        .and(body_string_contains("Tags.member.1.Value=default"))
        .respond_with(iam_ok(
            "CreateInstanceProfile",
            &profile_xml("demo_1", "/karpenter/us-west-2/", None),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let iam = clients(&server, fast_limits()).iam();
    let input = CreateInstanceProfileInput {
        instance_profile_name: "demo_1".into(),
        path: Some("/karpenter/us-west-2/".into()),
        tags: vec![Tag::new("karpenter.k8s.aws/ec2nodeclass", "default")],
    };
    let made = iam.create_instance_profile(input).await.expect("created");
    assert_eq!(made.path, "/karpenter/us-west-2/");
    assert!(made.roles.is_empty());
}

#[tokio::test]
async fn roles_are_added_and_removed_and_the_profile_deleted() {
    let server = MockServer::start().await;
    for action in ["AddRoleToInstanceProfile", "RemoveRoleFromInstanceProfile"] {
        ec2_action(action)
            .and(body_string_contains("InstanceProfileName=demo_1"))
            .and(body_string_contains("RoleName=NodeRole"))
            .respond_with(iam_done(action))
            .expect(1)
            .mount(&server)
            .await;
    }
    ec2_action("DeleteInstanceProfile")
        .and(body_string_contains("InstanceProfileName=demo_1"))
        .respond_with(iam_done("DeleteInstanceProfile"))
        .expect(1)
        .mount(&server)
        .await;
    let iam = clients(&server, fast_limits()).iam();
    let added = iam.add_role_to_instance_profile("demo_1", "NodeRole").await;
    assert!(added.is_ok(), "{added:?}");
    let removed = iam
        .remove_role_from_instance_profile("demo_1", "NodeRole")
        .await;
    assert!(removed.is_ok(), "{removed:?}");
    let deleted = iam.delete_instance_profile("demo_1").await;
    assert!(deleted.is_ok(), "{deleted:?}");
}

#[tokio::test]
async fn profiles_are_listed_by_path_across_pages() {
    let server = MockServer::start().await;
    let page = |name: &str, marker: Option<&str>| {
        let tail = marker.map_or("<IsTruncated>false</IsTruncated>".to_owned(), |m| {
            format!("<IsTruncated>true</IsTruncated><Marker>{m}</Marker>")
        });
        let profile = profile_xml(name, "/karpenter/us-west-2/", None)
            .replace("<InstanceProfile>", "<member>")
            .replace("</InstanceProfile>", "</member>");
        iam_ok(
            "ListInstanceProfiles",
            &format!("<InstanceProfiles>{profile}</InstanceProfiles>{tail}"),
        )
    };
    ec2_action("ListInstanceProfiles")
        .and(body_string_contains("Marker=m-2"))
        .respond_with(page("b", None))
        .with_priority(1)
        .mount(&server)
        .await;
    ec2_action("ListInstanceProfiles")
        .and(body_string_contains(
            "PathPrefix=%2Fkarpenter%2Fus-west-2%2F",
        ))
        .respond_with(page("a", Some("m-2")))
        .with_priority(2)
        .mount(&server)
        .await;
    let iam = clients(&server, fast_limits()).iam();
    let listed = iam
        .list_instance_profiles("/karpenter/us-west-2/")
        .await
        .expect("listed");
    let names: Vec<&str> = listed
        .iter()
        .map(|p| p.instance_profile_name.as_str())
        .collect();
    assert_eq!(names, ["a", "b"]);
}

#[tokio::test]
async fn no_such_entity_is_not_found_and_a_missing_role_is_told_apart() {
    let server = MockServer::start().await;
    ec2_action("GetInstanceProfile")
        .respond_with(iam_error(
            404,
            "NoSuchEntity",
            "Instance Profile demo_1 cannot be found.",
        ))
        .mount(&server)
        .await;
    ec2_action("AddRoleToInstanceProfile")
        .respond_with(iam_error(
            404,
            "NoSuchEntity",
            "The role with name Missing cannot be found.",
        ))
        .mount(&server)
        .await;
    let iam = clients(&server, fast_limits()).iam();
    let missing = iam
        .get_instance_profile("demo_1")
        .await
        .expect_err("absent");
    assert!(
        missing.is_not_found() && !missing.is_retryable(),
        "{missing}"
    );
    assert!(!is_role_not_found(&missing));
    assert_eq!(missing.operation(), Operation::GetInstanceProfile);
    let role = iam
        .add_role_to_instance_profile("demo_1", "Missing")
        .await
        .expect_err("no role");
    assert!(is_role_not_found(&role), "{role}");
}

#[tokio::test]
async fn throttling_is_retried_until_an_answer() {
    let server = MockServer::start().await;
    ec2_action("GetInstanceProfile")
        .respond_with(iam_error(400, "Throttling", "Rate exceeded"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    ec2_action("GetInstanceProfile")
        .respond_with(iam_ok(
            "GetInstanceProfile",
            &profile_xml("demo_1", "/", None),
        ))
        .with_priority(2)
        .mount(&server)
        .await;
    let iam = clients(&server, fast_limits()).iam();
    let found = iam.get_instance_profile("demo_1").await;
    assert!(found.is_ok(), "{found:?}");
    assert_eq!(received(&server, "GetInstanceProfile").await, 2);
}

#[tokio::test]
async fn iam_is_global_one_endpoint_per_partition() {
    let resolver = DefaultResolver::new();
    for (region, url) in [
        ("us-west-2", "https://iam.amazonaws.com"),
        ("eu-central-1", "https://iam.amazonaws.com"),
        ("cn-north-1", "https://iam.cn-north-1.amazonaws.com.cn"),
        ("us-gov-west-1", "https://iam.us-gov.amazonaws.com"),
    ] {
        let params = Params::builder()
            .region(region)
            .use_fips(false)
            .use_dual_stack(false)
            .build()
            .expect("params");
        let endpoint = resolver.resolve_endpoint(&params).await.expect(region);
        assert_eq!(endpoint.url(), url, "{region}");
    }
}
