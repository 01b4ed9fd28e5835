//! Checks of field values that serde cannot make (quantities, requirements, budgets,
//! the fake provider's instance types), naming the object and the field, and of
//! duplicate names.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Node, PodSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use karpenter_core::api::{NodeClaim, NodePool, NodeSelectorRequirementWithMinValues};
use karpenter_core::resources::{self, QuantityError, ResourceList};
use karpenter_core::scheduling::{self, Requirement, WellKnownLabels};
use karpenter_fake::InstanceTypeDocument;

use super::error::message_after_field;
use super::{Kind, LoadError, Scenario, Source, Sourced};

/// The capacity types an offering may have.
const CAPACITY_TYPES: [&str; 3] = ["on-demand", "spot", "reserved"];

/// A failed check: the field's path in the object and what is wrong.
struct Problem {
    field: String,
    message: String,
}

impl Problem {
    fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            field: field.into(),
            message: message.into(),
        }
    }

    /// A quantity error placed under `parent`, its path becoming the field.
    fn quantity(parent: &str, error: QuantityError) -> Self {
        Problem::at(error.within(parent))
    }

    /// A quantity error whose path is the field.
    fn at(error: QuantityError) -> Self {
        let field = error.path().unwrap_or_default().to_string();
        let message = message_after_field(&error.to_string(), &field);
        Problem { field, message }
    }
}

type Checked = Result<(), Problem>;

impl Scenario {
    /// Checks every object's values and that no two objects of a kind share a name;
    /// the first problem found is the error, naming the object and the field.
    pub fn validate(&self) -> Result<(), LoadError> {
        let well_known = WellKnownLabels::core();
        check_all(Kind::Pod, &self.pods, |pod| {
            pod_spec(pod.spec.as_deref(), None)
        })?;
        check_all(Kind::Node, &self.nodes, node)?;
        check_all(Kind::NodePool, &self.node_pools, |pool| {
            node_pool(pool, well_known)
        })?;
        check_all(Kind::NodeClaim, &self.node_claims, node_claim)?;
        check_all(Kind::DaemonSet, &self.daemon_sets, |ds| {
            pod_spec(ds.spec.template.spec.as_ref(), Some("spec.template"))
        })?;
        check_all(Kind::InstanceType, &self.instance_types, instance_type)?;
        check_all(Kind::CSINode, &self.csi_nodes, csi_node)?;
        check_all(Kind::EC2NodeClass, &self.ec2_node_classes, ec2_node_class)?;
        check_all(Kind::Namespace, &self.namespaces, namespace)?;
        check_all(
            Kind::CapacityBuffer,
            &self.capacity_buffers,
            capacity_buffer,
        )?;
        check_all(Kind::PodTemplate, &self.pod_templates, |template| {
            let spec = template.template.as_ref().and_then(|t| t.spec.as_ref());
            pod_spec(spec, Some("template"))
        })?;
        check_all(Kind::Deployment, &self.deployments, deployment)?;
        check_all(Kind::StatefulSet, &self.stateful_sets, |s| {
            pod_spec(s.spec.template.spec.as_ref(), Some("spec.template"))
        })?;
        check_all(Kind::ReplicaSet, &self.replica_sets, |r| {
            let template = r.spec.template.as_ref();
            pod_spec(
                template.and_then(|t| t.spec.as_ref()),
                Some("spec.template"),
            )
        })?;
        unique(Kind::NodePool, &self.node_pools, |o| &o.metadata)?;
        unique(Kind::NodeClaim, &self.node_claims, |o| &o.metadata)?;
        unique(Kind::Node, &self.nodes, |o| &o.metadata)?;
        unique(Kind::Pod, &self.pods, |o| &o.metadata)?;
        unique(Kind::DaemonSet, &self.daemon_sets, |o| &o.metadata)?;
        unique(Kind::InstanceType, &self.instance_types, |o| &o.metadata)?;
        unique(Kind::AKSNodeClass, &self.aks_node_classes, |o| &o.metadata)?;
        unique(Kind::EC2NodeClass, &self.ec2_node_classes, |o| &o.metadata)?;
        unique(Kind::CSINode, &self.csi_nodes, |o| &o.metadata)?;
        unique(Kind::Namespace, &self.namespaces, |o| &o.metadata)?;
        unique(Kind::CapacityBuffer, &self.capacity_buffers, |o| {
            &o.metadata
        })?;
        unique(Kind::PodTemplate, &self.pod_templates, |o| &o.metadata)?;
        unique(Kind::Deployment, &self.deployments, |o| &o.metadata)?;
        Ok(())
    }
}

/// A Node's capacity and allocatable quantities.
fn node(node: &Node) -> Checked {
    let status = node.status.as_ref();
    quantities("status.capacity", status.and_then(|s| s.capacity.as_ref()))?;
    quantities(
        "status.allocatable",
        status.and_then(|s| s.allocatable.as_ref()),
    )
}

/// A NodePool's template labels and requirements, limits and budgets.
fn node_pool(pool: &NodePool, well_known: &WellKnownLabels) -> Checked {
    let template = &pool.spec.template;
    let labels = template.metadata.as_ref().and_then(|m| m.labels.as_ref());
    for (key, value) in labels.into_iter().flatten() {
        let field = format!("spec.template.metadata.labels[{key}]");
        scheduling::check_restricted_label(key, well_known)
            .and_then(|()| scheduling::validate_label_key(key))
            .and_then(|()| scheduling::validate_label_value(key, value))
            .map_err(|e| Problem::new(field, e.to_string()))?;
    }
    let requirements = template.spec.requirements();
    requirements_valid(
        "spec.template.spec.requirements",
        requirements,
        Some(well_known),
    )?;
    if let Some(limits) = &pool.spec.limits {
        for (name, quantity) in limits.iter() {
            resources::milli_value(quantity)
                .map_err(|e| Problem::quantity(&format!("spec.limits.{name}"), e))?;
        }
    }
    budgets(pool)
}

/// A NodePool's disruption budgets: readable `nodes`, and a schedule only
/// with a duration.
fn budgets(pool: &NodePool) -> Checked {
    let budgets = pool
        .spec
        .disruption
        .as_ref()
        .and_then(|d| d.budgets.as_deref());
    for (i, budget) in budgets.unwrap_or_default().iter().enumerate() {
        let field = format!("spec.disruption.budgets[{i}]");
        budget
            .parse_nodes()
            .map_err(|e| Problem::new(format!("{field}.nodes"), e.to_string()))?;
        if budget.schedule.is_some() != budget.duration.is_some() {
            return Err(Problem::new(
                field,
                "schedule and duration must be set together",
            ));
        }
    }
    Ok(())
}

/// A NodeClaim's requirements, requests, capacity and allocatable.
fn node_claim(claim: &NodeClaim) -> Checked {
    requirements_valid("spec.requirements", claim.spec.requirements(), None)?;
    let requests = claim
        .spec
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref());
    for (name, quantity) in requests.into_iter().flat_map(|r| r.iter()) {
        resources::milli_value(quantity)
            .map_err(|e| Problem::quantity(&format!("spec.resources.requests.{name}"), e))?;
    }
    let status = claim.status.as_ref();
    for (parent, list) in [
        ("status.capacity", status.and_then(|s| s.capacity.as_ref())),
        (
            "status.allocatable",
            status.and_then(|s| s.allocatable.as_ref()),
        ),
    ] {
        for (name, quantity) in list.into_iter().flat_map(|l| l.iter()) {
            resources::milli_value(quantity)
                .map_err(|e| Problem::quantity(&format!("{parent}.{name}"), e))?;
        }
    }
    Ok(())
}

/// A Deployment's replicas (not negative) and pod template.
fn deployment(deployment: &Deployment) -> Checked {
    if let Some(replicas) = deployment.spec.replicas.filter(|r| *r < 0) {
        return Err(Problem::new(
            "spec.replicas",
            format!("{replicas} is negative"),
        ));
    }
    pod_spec(
        deployment.spec.template.spec.as_ref(),
        Some("spec.template"),
    )
}

/// Runs `check` on every object of a kind, turning a problem into an error that
/// names the object.
fn check_all<T>(
    kind: Kind,
    objects: &[Sourced<T>],
    check: impl Fn(&T) -> Checked,
) -> Result<(), LoadError>
where
    T: HasMetadata,
{
    for object in objects {
        if let Err(problem) = check(&object.object) {
            return Err(invalid(kind, object.object.meta(), &object.source, problem));
        }
    }
    Ok(())
}

fn invalid(kind: Kind, meta: &ObjectMeta, source: &Source, problem: Problem) -> LoadError {
    LoadError::Invalid {
        origin: source.clone(),
        object: describe(kind, meta),
        field: problem.field,
        message: problem.message,
    }
}

/// `Pod default/web-0`, `NodePool general`, `Pod (unnamed)`.
fn describe(kind: Kind, meta: &ObjectMeta) -> String {
    match (&meta.namespace, &meta.name) {
        (Some(ns), Some(name)) => format!("{kind} {ns}/{name}"),
        (None, Some(name)) => format!("{kind} {name}"),
        _ => format!("{kind} (unnamed)"),
    }
}

/// Objects whose metadata the checks can name.
trait HasMetadata {
    fn meta(&self) -> &ObjectMeta;
}

macro_rules! has_metadata {
    ($($t:ty),*) => {
        $(impl HasMetadata for $t {
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
        })*
    };
}

has_metadata!(
    std::sync::Arc<karpenter_core::pods::PodInfo>,
    k8s_openapi::api::core::v1::Node,
    k8s_openapi::api::apps::v1::DaemonSet,
    karpenter_core::api::NodePool,
    karpenter_core::api::NodeClaim,
    k8s_openapi::api::storage::v1::CSINode,
    k8s_openapi::api::core::v1::Namespace,
    karpenter_core::api::CapacityBuffer,
    k8s_openapi::api::core::v1::PodTemplate,
    k8s_openapi::api::apps::v1::Deployment,
    k8s_openapi::api::apps::v1::StatefulSet,
    k8s_openapi::api::apps::v1::ReplicaSet,
    InstanceTypeDocument,
    karpenter_aws::EC2NodeClass
);

/// The EC2NodeClass CRD's rules and upstream's kubelet checks: the first
/// problem names the field, and the message lists the others too, so one
/// run shows everything to fix (as the API server lists every failed rule).
fn ec2_node_class(class: &karpenter_aws::EC2NodeClass) -> Checked {
    let Err(invalid) = class.validate() else {
        return Ok(());
    };
    let mut problems = invalid.problems.iter();
    let Some(first) = problems.next() else {
        return Ok(());
    };
    let field = format!("spec.{}", first.field());
    let mut message = message_after_field(&first.to_string(), &field);
    let others: Vec<String> = problems.map(ToString::to_string).collect();
    if !others.is_empty() {
        message.push_str(&format!("; also {}", others.join("; ")));
    }
    Err(Problem { field, message })
}

/// The CapacityBuffer CRD's rules: one reference at most, a template's
/// buffer says how many chunks, names and counts as the schema has them,
/// limits that parse. A buffer with neither reference is admitted, as
/// upstream admits it (it keeps no room).
fn capacity_buffer(buffer: &karpenter_core::api::CapacityBuffer) -> Checked {
    let spec = &buffer.spec;
    if spec.pod_template_ref.is_some() && spec.scalable_ref.is_some() {
        return Err(Problem::new(
            "spec",
            "podTemplateRef and scalableRef are mutually exclusive: set one of them",
        ));
    }
    if let Some(reference) = &spec.pod_template_ref {
        if reference.name.is_empty() {
            return Err(Problem::new(
                "spec.podTemplateRef.name",
                "required: the name of a PodTemplate in the buffer's namespace",
            ));
        }
        if spec.replicas.is_none() && spec.limits.is_none() {
            return Err(Problem::new(
                "spec",
                "a buffer with podTemplateRef needs replicas or limits (how many chunks)",
            ));
        }
    }
    if let Some(reference) = &spec.scalable_ref {
        if reference.kind.is_empty() {
            return Err(Problem::new(
                "spec.scalableRef.kind",
                "required: Deployment, StatefulSet or ReplicaSet",
            ));
        }
        if reference.name.is_empty() {
            return Err(Problem::new(
                "spec.scalableRef.name",
                "required: the name of a workload in the buffer's namespace",
            ));
        }
    }
    for (field, value) in [
        ("spec.replicas", spec.replicas),
        ("spec.percentage", spec.percentage),
    ] {
        if let Some(value) = value.filter(|v| *v < 0) {
            return Err(Problem::new(field, format!("{value} is negative")));
        }
    }
    quantities("spec.limits", spec.limits.as_ref().map(|l| l.as_map()))
}

/// A Namespace has a name and labels the API server would accept, its
/// `kubernetes.io/metadata.name` label (when written) being its name, as the
/// API server sets it: a `namespaceSelector` reads them.
fn namespace(namespace: &k8s_openapi::api::core::v1::Namespace) -> Checked {
    let Some(name) = namespace.metadata.name.as_deref().filter(|n| !n.is_empty()) else {
        return Err(Problem::new("metadata.name", "a Namespace needs a name"));
    };
    for (key, value) in namespace.metadata.labels.iter().flatten() {
        let field = format!("metadata.labels.{key}");
        scheduling::validate_label_key(key)
            .and_then(|()| scheduling::validate_label_value(key, value))
            .map_err(|e| Problem::new(field.clone(), e.to_string()))?;
        if key == scheduling::LABEL_NAMESPACE_NAME && value != name {
            return Err(Problem::new(
                field,
                format!(
                    "is {value:?}, but the API server sets it to the namespace's name, {name:?}"
                ),
            ));
        }
    }
    Ok(())
}

/// A CSINode names its node, and each driver's attach count is not negative.
fn csi_node(csi: &k8s_openapi::api::storage::v1::CSINode) -> Checked {
    if csi.metadata.name.as_deref().is_none_or(str::is_empty) {
        return Err(Problem::new(
            "metadata.name",
            "a CSINode is named after its node",
        ));
    }
    for (i, driver) in csi.spec.drivers.iter().enumerate() {
        let count = driver.allocatable.as_ref().and_then(|a| a.count);
        if let Some(count) = count.filter(|c| *c < 0) {
            return Err(Problem::new(
                format!("spec.drivers[{i}].allocatable.count"),
                format!("{count} is negative"),
            ));
        }
    }
    Ok(())
}

/// Refuses two objects of one kind with the same namespace and name.
fn unique<T>(
    kind: Kind,
    objects: &[Sourced<T>],
    meta: impl Fn(&T) -> &ObjectMeta,
) -> Result<(), LoadError> {
    let mut seen: HashMap<(Option<&str>, &str), &Source> = HashMap::new();
    for object in objects {
        let m = meta(&object.object);
        let Some(name) = m.name.as_deref() else {
            continue;
        };
        if let Some(first) = seen.insert((m.namespace.as_deref(), name), &object.source) {
            let message = format!("a second {} (the first is at {first})", describe(kind, m));
            return Err(invalid(
                kind,
                m,
                &object.source,
                Problem::new("metadata.name", message),
            ));
        }
    }
    Ok(())
}

/// A pod spec's requests; their errors' paths start at `spec.`, under `parent`
/// (a DaemonSet's `spec.template`) when the spec is nested.
fn pod_spec(spec: Option<&PodSpec>, parent: Option<&str>) -> Checked {
    let Some(spec) = spec else { return Ok(()) };
    resources::pod_requests(spec).map_err(|e| match parent {
        Some(parent) => Problem::quantity(parent, e),
        None => Problem::at(e),
    })?;
    // Kubernetes refuses negative requests and limits; a sum would hide them.
    let prefix = parent.map(|p| format!("{p}.")).unwrap_or_default();
    let regular = spec
        .containers
        .iter()
        .enumerate()
        .map(|(i, c)| ("containers", i, c));
    let init = spec.init_containers.iter().flatten().enumerate();
    for (list, i, container) in regular.chain(init.map(|(i, c)| ("initContainers", i, c))) {
        let resources = container.resources.as_ref();
        for (kind, values) in [
            ("requests", resources.and_then(|r| r.requests.as_ref())),
            ("limits", resources.and_then(|r| r.limits.as_ref())),
        ] {
            not_negative(
                &format!("{prefix}spec.{list}[{i}].resources.{kind}"),
                values,
            )?;
        }
    }
    not_negative(&format!("{prefix}spec.overhead"), spec.overhead.as_ref())
}

/// Refuses a negative amount in a list that was already parsed without error.
fn not_negative(parent: &str, list: Option<&BTreeMap<String, Quantity>>) -> Checked {
    for (name, quantity) in list.into_iter().flatten() {
        if resources::milli_value(quantity).is_ok_and(|milli| milli < 0) {
            let message = format!("{:?} is negative", quantity.0);
            return Err(Problem::new(format!("{parent}.{name}"), message));
        }
    }
    Ok(())
}

fn quantities(parent: &str, list: Option<&BTreeMap<String, Quantity>>) -> Checked {
    if let Some(list) = list {
        ResourceList::from_quantities(list).map_err(|e| Problem::quantity(parent, e))?;
    }
    Ok(())
}

/// Each requirement's operator and values; with `well_known`, also restricted keys
/// and known values (what the NodePool CRD's validation refuses).
fn requirements_valid(
    parent: &str,
    requirements: &[NodeSelectorRequirementWithMinValues],
    well_known: Option<&WellKnownLabels>,
) -> Checked {
    for (i, requirement) in requirements.iter().enumerate() {
        let field = format!("{parent}[{i}]");
        let problem = |e: scheduling::RequirementError| Problem::new(field.clone(), e.to_string());
        let selector = requirement.to_selector_requirement().map_err(problem)?;
        match well_known {
            Some(well_known) => scheduling::validate_requirement(&selector, well_known),
            None => Requirement::try_from(&selector).map(drop),
        }
        .map_err(problem)?;
    }
    Ok(())
}

/// The scenario format's rules for the fake provider's `InstanceType`.
fn instance_type(it: &InstanceTypeDocument) -> Checked {
    if it.name().is_empty() {
        return Err(Problem::new(
            "metadata.name",
            "an instance type needs a name",
        ));
    }
    for required in [resources::CPU, resources::MEMORY] {
        if !it.capacity.contains_key(required) {
            return Err(Problem::new(format!("capacity.{required}"), "required"));
        }
    }
    quantities("capacity", Some(&it.capacity))?;
    quantities("overhead", it.overhead.as_ref())?;
    not_negative("capacity", Some(&it.capacity))?;
    not_negative("overhead", it.overhead.as_ref())?;
    if let Some(overhead) = &it.overhead {
        for (name, quantity) in overhead {
            let capacity = it.capacity.get(name).map(resources::milli_value);
            let over = resources::milli_value(quantity).unwrap_or_default();
            if over > capacity.and_then(Result::ok).unwrap_or(0) {
                let message = format!("{:?} is more than the capacity", quantity.0);
                return Err(Problem::new(format!("overhead.{name}"), message));
            }
        }
    }
    for (key, value) in it.labels.iter().flatten() {
        if key == karpenter_fake::RESERVATION_ID_LABEL {
            return Err(Problem::new(
                format!("labels[{key}]"),
                "set by the type's reserved offerings (their reservationID)",
            ));
        }
        scheduling::validate_label_key(key)
            .and_then(|()| scheduling::validate_label_value(key, value))
            .map_err(|e| Problem::new(format!("labels[{key}]"), e.to_string()))?;
    }
    if it.offerings.is_empty() {
        return Err(Problem::new(
            "offerings",
            "at least one offering is required",
        ));
    }
    for (i, offering) in it.offerings.iter().enumerate() {
        let field = |name: &str| format!("offerings[{i}].{name}");
        if offering.zone.is_empty() {
            return Err(Problem::new(field("zone"), "required"));
        }
        if !CAPACITY_TYPES.contains(&offering.capacity_type.as_str()) {
            let message = format!(
                "{:?} is not one of {}",
                offering.capacity_type,
                CAPACITY_TYPES.join(", ")
            );
            return Err(Problem::new(field("capacityType"), message));
        }
        if !offering.price.is_finite() || offering.price < 0.0 {
            let message = format!(
                "{} is not a price (a finite number, 0 or more)",
                offering.price
            );
            return Err(Problem::new(field("price"), message));
        }
        reservation(offering, &field)?;
        let same = |other: &&karpenter_fake::OfferingDocument| {
            other.zone == offering.zone
                && other.capacity_type == offering.capacity_type
                && other.reservation_id == offering.reservation_id
        };
        if let Some(j) = it.offerings[..i].iter().position(|o| same(&o)) {
            let message = format!(
                "repeats offerings[{j}]: one offering per zone, capacity type and reservation"
            );
            return Err(Problem::new(format!("offerings[{i}]"), message));
        }
    }
    Ok(())
}

/// A reserved offering names its reservation and how many more instances it
/// can start; no other offering may.
fn reservation(
    offering: &karpenter_fake::OfferingDocument,
    field: &dyn Fn(&str) -> String,
) -> Checked {
    if offering.capacity_type != scheduling::CAPACITY_TYPE_RESERVED {
        for (name, given) in [
            ("reservationID", offering.reservation_id.is_some()),
            ("capacity", offering.capacity.is_some()),
        ] {
            if given {
                let message = format!("only a reserved offering has a {name}");
                return Err(Problem::new(field(name), message));
            }
        }
        return Ok(());
    }
    let Some(id) = offering.reservation_id.as_ref().filter(|id| !id.is_empty()) else {
        return Err(Problem::new(
            field("reservationID"),
            "required for a reserved offering",
        ));
    };
    scheduling::validate_label_value(karpenter_fake::RESERVATION_ID_LABEL, id)
        .map_err(|e| Problem::new(field("reservationID"), e.to_string()))?;
    if offering.capacity.is_none() {
        return Err(Problem::new(
            field("capacity"),
            "required for a reserved offering (how many more instances it can start)",
        ));
    }
    Ok(())
}
