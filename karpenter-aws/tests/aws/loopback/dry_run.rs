//! `DryRun=true` requests: asked of the in-memory EC2 as dry runs (so an
//! injected fault refuses them) and answered with EC2's `DryRunOperation`
//! error when allowed; nothing is made.

use karpenter_aws::ec2::{
    DRY_RUN_OPERATION, DryRunCall, Ec2Api, Ec2Error, InMemoryEc2, RunInstancesInput,
};

use super::form::{BadRequest, Form};
use super::{Failure, decode, now};

/// EC2's message for a dry run that would have succeeded.
const WOULD_SUCCEED: &str = "Request would have succeeded, but DryRun flag is set.";

/// The dry-run call `form` asks for when it carries `DryRun=true`; `None`
/// otherwise, for the action to be answered as usual.
pub(super) fn dry_run_call(action: &str, form: &Form) -> Result<Option<DryRunCall>, BadRequest> {
    if form.get("DryRun").as_deref() != Some("true") {
        return Ok(None);
    }
    Ok(Some(match action {
        "CreateFleet" => DryRunCall::CreateFleet(Box::new(decode::create_fleet(form)?)),
        "RunInstances" => DryRunCall::RunInstances(run_instances(form)?),
        other => {
            return Err(BadRequest {
                code: "InvalidAction",
                message: format!("The action {other} is not served as a dry run here."),
            });
        }
    }))
}

/// What `ec2` answers `call` with: EC2's `DryRunOperation` error when
/// allowed, the injected fault otherwise.
pub(super) fn answer(ec2: &InMemoryEc2, call: DryRunCall) -> Failure {
    let operation = call.operation();
    match now(ec2.dry_run(call)) {
        Ok(()) => Failure::Ec2(Ec2Error::service(
            operation,
            DRY_RUN_OPERATION,
            WOULD_SUCCEED,
        )),
        Err(failure) => failure,
    }
}

/// `RunInstances`' one-instance input: the launch data, the first
/// interface's subnet and groups, and the tag specifications.
fn run_instances(form: &Form) -> Result<RunInstancesInput, BadRequest> {
    let interface = form.items("NetworkInterface")?.into_iter().next();
    let interface = interface.ok_or_else(|| BadRequest::missing("NetworkInterface.1"))?;
    let profile = form.member("IamInstanceProfile");
    Ok(RunInstancesInput {
        image_id: form.get("ImageId"),
        instance_type: form.required("InstanceType")?,
        iam_instance_profile: profile.and_then(|p| p.get("Name")),
        subnet_id: interface.required("SubnetId")?,
        security_group_ids: interface.list("SecurityGroupId")?,
        tag_specifications: decode::tag_specifications(form, "TagSpecification")?,
    })
}
