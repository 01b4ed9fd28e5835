//! The EC2NodeClass controller, as upstream's: every class carries
//! Karpenter's termination finalizer; a live class's status is resolved
//! (its instance profile made from its `role`) and written when it
//! changed; a deleted class waits for the NodeClaims launched from it to
//! go, then its instance profiles and launch templates are deleted and the
//! finalizer released; every 30 minutes the profiles Karpenter made that
//! nothing uses are collected, and the SSM values of `latest` aliases that
//! name a since-deprecated image dropped.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use karpenter_aws::ec2::{Ec2Api, ParameterApi};
use karpenter_aws::iam::{COLLECT_PERIOD, IamApi, InstanceProfiles};
use karpenter_aws::nodeclass::reconcile::{
    INVALIDATION_PERIOD, SsmCache, Validation, delete_instance_profiles, reconcile_status,
};
use karpenter_aws::nodeclass::resolve::ResolveContext;
use karpenter_aws::{AwsCloudProvider, EC2NodeClass, EC2NodeClassStatus};
use karpenter_core::cluster::Cluster;
use kube::api::{Patch, PatchParams};
use kube::runtime::events::{Event, EventType};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Resource, ResourceExt};
use tokio::sync::watch;

use crate::KubeCluster;
use crate::events::Recorded;

/// The finalizer that holds a deleted class until its launch templates
/// are gone (upstream's `karpenter.k8s.aws/termination`).
pub(crate) const TERMINATION_FINALIZER: &str = "karpenter.k8s.aws/termination";

/// How often a class waiting on its NodeClaims says so again (upstream
/// requeues it every 10 minutes to fire the event).
const WAITING_EVENT_PERIOD: Duration = Duration::from_secs(10 * 60);

/// Upstream's shortest status period: every class is reconciled this often.
const PERIOD: Duration = Duration::from_secs(60);

/// How many NodeClaims a waiting event names before counting the rest.
const NAMED_CLAIMS: usize = 5;

/// What a class's status is resolved against.
#[derive(Clone, Debug)]
pub(crate) struct ClassContext {
    pub(crate) cluster_name: String,
    pub(crate) region: String,
    /// `major.minor`, as alias parameters name it.
    pub(crate) kubernetes_version: String,
    pub(crate) reserved_capacity: bool,
    /// `--isolated-vpc`: IAM is out of reach, so deleted classes' profiles
    /// are left and none are collected, as upstream.
    pub(crate) isolated_vpc: bool,
    /// `DISABLE_DRY_RUN`: classes are valid without launch dry runs.
    pub(crate) dry_run_disabled: bool,
    /// Whether the service CIDR AL2023 nodes need was read at start.
    pub(crate) cluster_cidr_known: bool,
    /// The `NodeClassCEL` gate: kubelet CEL expressions are allowed.
    pub(crate) node_class_cel: bool,
}

/// Reconciles EC2NodeClasses one at a time.
pub(crate) struct ClassController<E, P> {
    provider: Arc<AwsCloudProvider<E>>,
    cluster: KubeCluster,
    api: Api<EC2NodeClass>,
    parameters: P,
    iam: Arc<dyn IamApi>,
    context: ClassContext,
    cache: SsmCache,
    profiles: InstanceProfiles,
    /// The validation's settings and its dry runs' outcomes.
    validation: Validation,
    /// When each deleted class last said it waits on NodeClaims.
    waiting_said: BTreeMap<String, Instant>,
}

impl<E: Ec2Api + 'static, P: ParameterApi + 'static> ClassController<E, P> {
    /// A controller writing to `cluster`, resolving through `provider`'s
    /// EC2, `parameters` (SSM) and `iam`.
    pub(crate) fn new(
        provider: Arc<AwsCloudProvider<E>>,
        cluster: KubeCluster,
        parameters: P,
        iam: Arc<dyn IamApi>,
        context: ClassContext,
    ) -> Self {
        let api = Api::all(cluster.client().clone());
        let mut validation = Validation::new(context.dry_run_disabled, context.cluster_cidr_known);
        validation.node_class_cel = context.node_class_cel;
        ClassController {
            provider,
            cluster,
            api,
            parameters,
            iam,
            context,
            cache: SsmCache::new(),
            profiles: InstanceProfiles::new(),
            validation,
            waiting_said: BTreeMap::new(),
        }
    }

    /// Reconciles each class when it changes and every minute, and
    /// collects unused instance profiles every 30 minutes, until
    /// `stopping`. The first collection waits a whole period: by then the
    /// classes are read, so no profile is taken for unused because the
    /// watch had not yet listed its class.
    pub(crate) fn spawn(mut self, mut stopping: watch::Receiver<bool>) {
        let (reader, writer) = reflector::store();
        let stream = reflector(
            writer,
            watcher(self.api.clone(), watcher::Config::default()),
        )
        .default_backoff()
        .applied_objects();
        tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            let mut tick = tokio::time::interval(PERIOD);
            let mut collect = every(COLLECT_PERIOD);
            let mut invalidate = every(INVALIDATION_PERIOD);
            loop {
                tokio::select! {
                    changed = stream.next() => match changed {
                        Some(Ok(class)) => self.reconcile(&class).await,
                        Some(Err(error)) => tracing::warn!(%error, "watching EC2NodeClasses failed; retrying"),
                        None => return,
                    },
                    _ = tick.tick() => {
                        for class in reader.state() {
                            self.reconcile(&class).await;
                        }
                    }
                    _ = invalidate.tick() => self.invalidate_images().await,
                    _ = collect.tick(), if !self.context.isolated_vpc => {
                        let classes = reader.state();
                        if let Err(error) = self.collect_profiles(&classes).await {
                            tracing::warn!(%error, "collecting unused instance profiles failed");
                        }
                    }
                    _ = stopping.changed() => return,
                }
            }
        });
    }

    /// One pass over `class`: finalized when deleted; else given the
    /// finalizer and its status.
    pub(crate) async fn reconcile(&mut self, class: &EC2NodeClass) {
        let name = class.name_any();
        if class.metadata.deletion_timestamp.is_some() {
            if let Err(error) = self.finalize(class).await {
                tracing::warn!(class = name, %error, "cleaning up the deleted EC2NodeClass failed");
            }
            return;
        }
        self.waiting_said.remove(&name);
        if !class
            .finalizers()
            .iter()
            .any(|f| f == TERMINATION_FINALIZER)
            && let Err(error) = self.set_finalizers(class, true).await
        {
            tracing::warn!(class = name, %error, "adding the EC2NodeClass finalizer failed");
        }
        self.reconcile_status(class).await;
    }

    /// Resolves `class`'s status; writes it and hands it to the provider
    /// when it changed.
    async fn reconcile_status(&mut self, class: &EC2NodeClass) {
        let name = class.name_any();
        let resolve = ResolveContext {
            cluster_name: self.context.cluster_name.clone(),
            region: self.context.region.clone(),
            kubernetes_version: self.context.kubernetes_version.clone(),
            now: Timestamp::now(),
            ssm_parameters: BTreeMap::new(),
            reserved_capacity: self.context.reserved_capacity,
        };
        let reconciled = reconcile_status(
            self.provider.api(),
            &self.parameters,
            self.iam.as_ref(),
            &mut self.cache,
            &mut self.profiles,
            &mut self.validation,
            class,
            &resolve,
        )
        .await;
        let status = match reconciled {
            Ok(reconciled) if reconciled.changed => reconciled.status,
            Ok(_) => return,
            Err(error) => {
                tracing::warn!(class = name, %error, "resolving the EC2NodeClass status failed");
                // As upstream, a failure that still resolved a status (a
                // placement group lookup's) writes it, the condition
                // saying why.
                match error.status() {
                    Some(status) if class.status.as_ref() != Some(status) => status.clone(),
                    _ => return,
                }
            }
        };
        self.write_status(class, status).await;
    }

    /// Writes `status` through the status subresource and hands the class
    /// with it to the provider.
    async fn write_status(&self, class: &EC2NodeClass, status: EC2NodeClassStatus) {
        let name = class.name_any();
        let patch = Patch::Merge(serde_json::json!({ "status": status }));
        if let Err(error) = self
            .api
            .patch_status(&name, &PatchParams::default(), &patch)
            .await
        {
            tracing::warn!(class = name, %error, "writing the EC2NodeClass status failed");
            return;
        }
        let mut class = class.clone();
        class.status = Some(status);
        self.provider.apply_node_class(class);
    }

    /// A deleted class: while NodeClaims launched from it remain, says so
    /// (every 10 minutes); then deletes its instance profiles (unless in
    /// an isolated VPC) and launch templates and releases the finalizer,
    /// as upstream's `finalize`.
    async fn finalize(&mut self, class: &EC2NodeClass) -> Result<(), BoxError> {
        if !class
            .finalizers()
            .iter()
            .any(|f| f == TERMINATION_FINALIZER)
        {
            return Ok(());
        }
        let name = class.name_any();
        let mut waiting: Vec<String> =
            self.cluster
                .node_claims()
                .await?
                .into_iter()
                .filter(|claim| {
                    claim.spec.node_class_ref.as_ref().is_some_and(|r| {
                        r.name == name && r.group == EC2NodeClass::group(&()).as_ref()
                    })
                })
                .filter_map(|claim| claim.metadata.name)
                .collect();
        if !waiting.is_empty() {
            waiting.sort();
            self.say_waiting(class, &waiting);
            return Ok(());
        }
        if !self.context.isolated_vpc {
            delete_instance_profiles(
                self.iam.as_ref(),
                &mut self.profiles,
                class,
                &self.context.cluster_name,
                &self.context.region,
            )
            .await?;
        }
        let deleted = self.provider.delete_class_launch_templates(&name).await?;
        if !deleted.is_empty() {
            tracing::info!(
                class = name,
                templates = deleted.len(),
                "deleted launch templates"
            );
        }
        self.set_finalizers(class, false).await?;
        self.waiting_said.remove(&name);
        Ok(())
    }

    /// The `WaitingOnNodeClaimTermination` event, at most every 10 minutes.
    fn say_waiting(&mut self, class: &EC2NodeClass, claims: &[String]) {
        let name = class.name_any();
        let due = self
            .waiting_said
            .get(&name)
            .is_none_or(|said| said.elapsed() >= WAITING_EVENT_PERIOD);
        if !due {
            return;
        }
        self.waiting_said.insert(name.clone(), Instant::now());
        self.cluster.events().record(Recorded {
            regarding: class_ref(class),
            event: Event {
                type_: EventType::Normal,
                reason: "WaitingOnNodeClaimTermination".into(),
                note: Some(format!(
                    "Waiting on NodeClaim termination for {}",
                    pretty_list(claims, NAMED_CLAIMS)
                )),
                action: "Finalize".into(),
                secondary: None,
            },
        });
    }

    /// Adds (`keep`) or removes Karpenter's finalizer, as a merge patch
    /// carrying the resourceVersion it read, as upstream's optimistic
    /// lock: a class another writer changed meanwhile gets 409 Conflict
    /// rather than its finalizer list overwritten, and the next pass tries
    /// again.
    async fn set_finalizers(&self, class: &EC2NodeClass, keep: bool) -> Result<(), kube::Error> {
        let mut wanted: Vec<String> = class
            .finalizers()
            .iter()
            .filter(|f| *f != TERMINATION_FINALIZER)
            .cloned()
            .collect();
        if keep {
            wanted.push(TERMINATION_FINALIZER.to_owned());
        }
        let patch = Patch::Merge(serde_json::json!({
            "metadata": {
                "finalizers": wanted,
                "resourceVersion": class.resource_version(),
            },
        }));
        self.api
            .patch(&class.name_any(), &PatchParams::default(), &patch)
            .await
            .map(drop)
    }
}

/// The boxed error a finalize fails with.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A reference to `class` for its events.
fn class_ref(class: &EC2NodeClass) -> ObjectReference {
    ObjectReference {
        api_version: Some(EC2NodeClass::api_version(&()).into_owned()),
        kind: Some(EC2NodeClass::kind(&()).into_owned()),
        name: class.metadata.name.clone(),
        uid: class.metadata.uid.clone(),
        ..ObjectReference::default()
    }
}

/// `a, b, c and 2 other(s)`: the first `most` of `items`, then how many
/// more, as upstream's event messages list names.
fn pretty_list(items: &[String], most: usize) -> String {
    let shown = items
        .iter()
        .take(most)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    match items.len().saturating_sub(most) {
        0 => shown,
        more => format!("{shown} and {more} other(s)"),
    }
}

mod periodic;

use periodic::every;
#[cfg(test)]
mod tests;
