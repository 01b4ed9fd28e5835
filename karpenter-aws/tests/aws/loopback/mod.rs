//! A stateful EC2 on a loopback port: a server speaking EC2's Query
//! protocol (form-encoded `Action=...` requests, XML answers and EC2's
//! error envelope) that answers every call from an [`InMemoryEc2`] it
//! owns, so the SDK-backed client can launch, list and delete without AWS.
//!
//! The in-memory EC2 answers at once (it never waits), so each call is
//! polled once inside the server's responder: nothing blocks the runtime.

mod decode;
mod decode_template;
mod dry_run;
mod encode;
mod encode_launch;
mod form;
mod xml;

use std::future::Future;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_ec2::config::{Credentials, SharedCredentialsProvider};
use karpenter_aws::ec2::{DRY_RUN_OPERATION, Ec2Api, Ec2Error, InMemoryEc2};
use karpenter_aws::sdk::{AwsClients, ClientLimits};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use form::{BadRequest, Form};
use xml::{node, set, text};

/// The running server; the in-memory EC2 behind it is the caller's (a
/// clone shares its state), to set up and to read back.
pub(crate) struct Loopback {
    server: MockServer,
}

impl Loopback {
    /// A server on an ephemeral loopback port answering from `ec2` (a
    /// clone sharing its state). It stops when dropped.
    pub(crate) async fn start(ec2: &InMemoryEc2) -> Self {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(Responder { ec2: ec2.clone() })
            .mount(&server)
            .await;
        Loopback { server }
    }

    /// Clients calling this server in `region` with static test
    /// credentials, the SDK's retries kept short.
    pub(crate) fn clients(&self, region: &str) -> AwsClients {
        let credentials = Credentials::new("AKIDLOOPBACK", "loopback-secret", None, None, "tests");
        let config = SdkConfig::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(region.to_owned()))
            .endpoint_url(self.server.uri())
            .credentials_provider(SharedCredentialsProvider::new(credentials))
            .build();
        let limits = ClientLimits {
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(5),
            ..ClientLimits::default()
        };
        AwsClients::from_sdk_config(config, limits).expect("the config has a region")
    }

    /// How many JSON-protocol requests (Pricing, SQS, ...) the server
    /// received: it serves none of them.
    pub(crate) async fn json_requests(&self) -> usize {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .filter(|r| r.headers.contains_key("x-amz-target"))
            .count()
    }

    /// How many requests of EC2 action `action` the server received.
    pub(crate) async fn requests(&self, action: &str) -> usize {
        let needle = format!("Action={action}&");
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .filter(|r| String::from_utf8_lossy(&r.body).contains(&needle))
            .count()
    }
}

/// What the server answers `body` with from `ec2`: its HTTP status and
/// XML, for tests of requests the SDK never sends.
pub(crate) fn answer(ec2: &InMemoryEc2, body: &[u8]) -> (u16, String) {
    Responder { ec2: ec2.clone() }.answer(body)
}

/// Why a call was not answered with its result.
enum Failure {
    Bad(BadRequest),
    Ec2(Ec2Error),
    /// The in-memory call did not finish at once (it never should).
    Pending,
}

impl From<BadRequest> for Failure {
    fn from(bad: BadRequest) -> Self {
        Failure::Bad(bad)
    }
}

/// The server's one route: every EC2 action.
struct Responder {
    ec2: InMemoryEc2,
}

impl Respond for Responder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        if request.headers.contains_key("x-amz-target") {
            // A JSON-protocol service (the Pricing API): not served here.
            let body = r#"{"__type":"UnknownOperationException","message":"only EC2 is served"}"#;
            return ResponseTemplate::new(400).set_body_raw(body, "application/x-amz-json-1.1");
        }
        let (status, body) = self.answer(&request.body);
        ResponseTemplate::new(status).set_body_raw(body, "text/xml;charset=UTF-8")
    }
}

impl Responder {
    /// The HTTP status and XML body answering `body`; never panics.
    fn answer(&self, body: &[u8]) -> (u16, String) {
        let form = match Form::parse(body) {
            Ok(form) => form,
            Err(bad) => return (400, xml::error(bad.code, &bad.message)),
        };
        let Some(action) = form.get("Action") else {
            let bad = BadRequest::missing("Action");
            return (400, xml::error(bad.code, &bad.message));
        };
        match self.dispatch(&action, &form) {
            Ok(inner) => (200, xml::response(&action, &inner)),
            Err(Failure::Bad(bad)) => (400, xml::error(bad.code, &bad.message)),
            Err(Failure::Ec2(error)) => ec2_error(&error),
            Err(Failure::Pending) => (
                500,
                xml::error("InternalError", "the in-memory call did not finish"),
            ),
        }
    }

    fn dispatch(&self, action: &str, form: &Form) -> Result<String, Failure> {
        if let Some(call) = dry_run::dry_run_call(action, form)? {
            return Err(dry_run::answer(&self.ec2, call));
        }
        match self.describe(action, form)? {
            Some(inner) => Ok(inner),
            None => self.act(action, form),
        }
    }

    /// The read-only describe calls; `None` for another action.
    fn describe(&self, action: &str, form: &Form) -> Result<Option<String>, Failure> {
        let ec2 = &self.ec2;
        let page = Page::of(form)?;
        let inner = match action {
            "DescribeInstanceTypes" => {
                let out = now(ec2.describe_instance_types(decode::describe_instance_types(form)?))?;
                page.list(
                    "instanceTypeSet",
                    out.instance_types.iter().map(encode::instance_type),
                )
            }
            "DescribeInstanceTypeOfferings" => {
                let input = decode::describe_instance_type_offerings(form)?;
                let out = now(ec2.describe_instance_type_offerings(input))?;
                let items = out.instance_type_offerings.iter().map(encode::offering);
                page.list("instanceTypeOfferingSet", items)
            }
            "DescribeSubnets" => {
                let out = now(ec2.describe_subnets(decode::describe(form, "SubnetId")?))?;
                page.list("subnetSet", out.subnets.iter().map(encode::subnet))
            }
            "DescribeSecurityGroups" => {
                let out = now(ec2.describe_security_groups(decode::describe(form, "GroupId")?))?;
                page.list(
                    "securityGroupInfo",
                    out.security_groups.iter().map(encode::security_group),
                )
            }
            "DescribeImages" => {
                let out = now(ec2.describe_images(decode::describe_images(form)?))?;
                page.list("imagesSet", out.images.iter().map(encode::image))
            }
            "DescribeCapacityReservations" => {
                let input = decode::describe(form, "CapacityReservationId")?;
                let out = now(ec2.describe_capacity_reservations(input))?;
                let items = out
                    .capacity_reservations
                    .iter()
                    .map(encode::capacity_reservation);
                page.list("capacityReservationSet", items)
            }
            "DescribePlacementGroups" => {
                let input = decode::describe_placement_groups(form)?;
                let out = now(ec2.describe_placement_groups(input))?;
                let items = out.placement_groups.iter().map(encode::placement_group);
                // One page: EC2 does not page this call.
                set("placementGroupSet", items)
            }
            "DescribeSpotPriceHistory" => {
                let input = decode::describe_spot_price_history(form)?;
                let out = now(ec2.describe_spot_price_history(input))?;
                page.list(
                    "spotPriceHistorySet",
                    out.spot_price_history.iter().map(encode::spot_price),
                )
            }
            "DescribeInstanceStatus" => {
                let input = decode::describe_instance_status(form)?;
                let out = now(ec2.describe_instance_status(input))?;
                let items = out
                    .instance_statuses
                    .iter()
                    .map(encode_launch::instance_status);
                page.list("instanceStatusSet", items)
            }
            "DescribeInstances" => {
                let out = now(ec2.describe_instances(decode::describe(form, "InstanceId")?))?;
                let reservations = out.instances.iter().map(|i| {
                    text("reservationId", format!("r-{}", i.instance_id))
                        + &set("instancesSet", [encode_launch::instance(i)])
                });
                page.list("reservationSet", reservations)
            }
            "DescribeLaunchTemplates" => {
                let input = decode::describe_launch_templates(form)?;
                let out = now(ec2.describe_launch_templates(input))?;
                let items = out
                    .launch_templates
                    .iter()
                    .map(encode_launch::launch_template);
                page.list("launchTemplates", items)
            }
            _ => return Ok(None),
        };
        Ok(Some(inner))
    }

    /// The calls that change EC2.
    fn act(&self, action: &str, form: &Form) -> Result<String, Failure> {
        let ec2 = &self.ec2;
        Ok(match action {
            "CreateFleet" => {
                let out = now(ec2.create_fleet(decode::create_fleet(form)?))?;
                encode_launch::create_fleet(&out)
            }
            "CreateLaunchTemplate" => {
                let input = decode_template::create_launch_template(form)?;
                let out = now(ec2.create_launch_template(input))?;
                node("launchTemplate", &encode_launch::launch_template(&out))
            }
            "DeleteLaunchTemplate" => {
                let name = form.required("LaunchTemplateName")?;
                let out = now(ec2.delete_launch_template(&name))?;
                node("launchTemplate", &encode_launch::launch_template(&out))
            }
            "TerminateInstances" => {
                let out = now(ec2.terminate_instances(decode::terminate_instances(form)?))?;
                let items = out
                    .terminating_instances
                    .iter()
                    .map(encode_launch::state_change);
                set("instancesSet", items)
            }
            "CreateTags" => {
                now(ec2.create_tags(decode::create_tags(form)?))?;
                text("return", true)
            }
            other => {
                return Err(Failure::Bad(BadRequest {
                    code: "InvalidAction",
                    message: format!("The action {other} is not valid for this web service."),
                }));
            }
        })
    }
}

/// The page a describe request asks for: all of the list, or with
/// `MaxResults` that many items from `NextToken` (the index of the page's
/// first item, as this server writes its tokens), so the SDK's client
/// follows pages as it does with EC2.
struct Page {
    size: Option<usize>,
    start: usize,
}

impl Page {
    fn of(form: &Form) -> Result<Self, BadRequest> {
        let size = form.parsed::<usize>("MaxResults")?;
        if size == Some(0) {
            return Err(BadRequest::invalid("MaxResults", "0"));
        }
        Ok(Page {
            size,
            start: form.parsed("NextToken")?.unwrap_or(0),
        })
    }

    /// The list `name` of this page's `items`, with the next page's token
    /// when more remain.
    fn list(&self, name: &str, items: impl IntoIterator<Item = String>) -> String {
        let items: Vec<String> = items.into_iter().collect();
        let Some(size) = self.size else {
            return set(name, items);
        };
        let end = self.start.saturating_add(size).min(items.len());
        let page = items.get(self.start..end).unwrap_or_default().to_vec();
        let next = (end < items.len()).then(|| text("nextToken", end));
        set(name, page) + &next.unwrap_or_default()
    }
}

/// The result of `future`, which must finish at its first poll.
fn now<T>(future: impl Future<Output = Result<T, Ec2Error>>) -> Result<T, Failure> {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(result) => result.map_err(Failure::Ec2),
        Poll::Pending => Err(Failure::Pending),
    }
}

/// An in-memory EC2 error as EC2 answers it: refusals at 400 with their
/// code, throttling at 503, anything else as EC2's internal error.
fn ec2_error(error: &Ec2Error) -> (u16, String) {
    match error {
        // EC2 answers an allowed dry run with 412 Precondition Failed.
        Ec2Error::Service { code, message, .. } if code == DRY_RUN_OPERATION => {
            (412, xml::error(code, message))
        }
        Ec2Error::Service { code, message, .. } => (400, xml::error(code, message)),
        Ec2Error::Throttling { code, message, .. } => (503, xml::error(code, message)),
        other => (500, xml::error("InternalError", &other.to_string())),
    }
}
