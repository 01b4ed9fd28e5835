//! A new claim's launch, the node it launches, and each pod's constraints on
//! that node: the rules of [`Checker::check_claim`](super::index::Checker)
//! that need the launch.

use crate::cloudprovider::InstanceType;
use crate::pods::PodInfo;
use crate::provisioning::demand::host_ports::HostPort;
use crate::provisioning::plan::Launch;
use crate::scheduling::{Requirements, WellKnownLabels};

use super::claims::{ClaimCheck, Listed, Load};
use super::describe::describe_taint;
use super::pods::{first_untolerated, pod_key, spec_of, strict_alternatives};
use super::pools::{launched_labels, pool_requirements};
use super::violation::{Rule, Subject, Violation};

/// How far a launch price may be from the catalog's (prices are copied, so this
/// only forgives a round trip through decimal text).
const PRICE_TOLERANCE: f64 = 1e-9;

impl ClaimCheck<'_, '_> {
    /// The launch's rules, in the order they are reported: it exists
    /// ([`Rule::NoLaunch`]), is the cheapest allowed, is listed, is a catalog
    /// offering at its price; then the launched node, its daemons' host
    /// ports, and each pod's constraints on it.
    pub(super) fn check_launch(
        &self,
        listed: &Listed<'_, '_>,
        load: &Load<'_>,
        out: &mut Vec<Violation>,
    ) {
        let Some(launch) = &self.claim.launch else {
            self.flag(out, Rule::NoLaunch, "the claim has no launch".to_string());
            return;
        };
        self.check_launch_cheapest(listed, launch, out);
        if !listed.names.contains(launch.instance_type.as_str()) {
            self.flag(
                out,
                Rule::InstanceTypeList,
                format!("the launch type {} is not listed", launch.instance_type),
            );
        }
        let Some(it) = self
            .checker
            .instance_type(&self.claim.node_pool, &launch.instance_type)
        else {
            self.flag(
                out,
                Rule::LaunchOffering,
                format!("{} is not in the nodepool's catalog", launch.instance_type),
            );
            return;
        };
        self.check_launch_offering(it, launch, out);
        let node = self.check_launched_node(it, launch, out);
        self.check_daemon_host_ports(it, &load.ports, out);
        for &pod in &load.pods {
            self.check_pod_on_launched_node(pod, it, launch, &node, out);
        }
    }

    /// [`Rule::LaunchNotCheapest`]: no available offering of a listed type
    /// that the requirements allow costs less than the launch.
    fn check_launch_cheapest(
        &self,
        listed: &Listed<'_, '_>,
        launch: &Launch,
        out: &mut Vec<Violation>,
    ) {
        let cheapest = listed
            .types
            .iter()
            .flat_map(|it| {
                it.offerings
                    .iter()
                    .filter(|o| o.available && o.is_compatible(&self.requirements))
                    .map(move |o| (it, o))
            })
            .min_by(|a, b| a.1.price.total_cmp(&b.1.price));
        if let Some((it, o)) = cheapest
            && o.price < launch.price - PRICE_TOLERANCE
        {
            self.flag(
                out,
                Rule::LaunchNotCheapest,
                format!(
                    "launches {} {} {} at {} but {} {} {} costs {}",
                    launch.instance_type,
                    launch.zone,
                    launch.capacity_type,
                    launch.price,
                    it.name,
                    o.zone,
                    o.capacity_type,
                    o.price
                ),
            );
        }
    }

    /// [`Rule::LaunchOffering`] and [`Rule::LaunchPrice`]: the launch is an
    /// offering of its type, available, allowed by the requirements, at the
    /// catalog's price.
    fn check_launch_offering(&self, it: &InstanceType, launch: &Launch, out: &mut Vec<Violation>) {
        let offering = it.offerings.iter().find(|o| launch.is_of(o));
        let Some(o) = offering else {
            self.flag(
                out,
                Rule::LaunchOffering,
                format!(
                    "{} has no offering in {} as {}{}",
                    it.name,
                    launch.zone,
                    launch.capacity_type,
                    launch
                        .reservation_id
                        .as_ref()
                        .map(|id| format!(" in reservation {id}"))
                        .unwrap_or_default()
                ),
            );
            return;
        };
        if !o.available {
            self.flag(
                out,
                Rule::LaunchOffering,
                format!(
                    "{} {} {} is not available",
                    it.name, o.zone, o.capacity_type
                ),
            );
        }
        if !o.is_compatible(&self.requirements) {
            self.flag(
                out,
                Rule::LaunchOffering,
                format!(
                    "{} {} {} is not allowed by the claim's requirements",
                    it.name, o.zone, o.capacity_type
                ),
            );
        }
        if (o.price - launch.price).abs() > PRICE_TOLERANCE {
            self.flag(
                out,
                Rule::LaunchPrice,
                format!(
                    "{} {} {} launches at {} but the catalog says {}",
                    it.name, o.zone, o.capacity_type, launch.price, o.price
                ),
            );
        }
    }

    /// [`Rule::LaunchedNodeRequirements`]: the node the launch makes (its
    /// labels, read as requirements) meets the claim's and the pool's
    /// requirements. Returns those node requirements for the pods' check.
    fn check_launched_node(
        &self,
        it: &InstanceType,
        launch: &Launch,
        out: &mut Vec<Violation>,
    ) -> Requirements {
        let labels = launched_labels(self.pool, it, launch, &self.requirements);
        let node = Requirements::from_labels(&labels);
        if let Err(e) = node.compatible(&self.requirements, &WellKnownLabels::empty()) {
            self.flag(
                out,
                Rule::LaunchedNodeRequirements,
                format!(
                    "the launched {} does not meet the claim's requirements: {e}",
                    it.name
                ),
            );
        }
        if let Err(e) = node.compatible(&pool_requirements(self.pool), &WellKnownLabels::empty()) {
            self.flag(
                out,
                Rule::LaunchedNodeRequirements,
                format!(
                    "the launched {} does not meet the nodepool's requirements: {e}",
                    it.name
                ),
            );
        }
        node
    }

    /// [`Rule::HostPort`]: no pod binds a host port a daemon running on the
    /// launched type binds.
    fn check_daemon_host_ports(
        &self,
        it: &InstanceType,
        pod_ports: &[HostPort],
        out: &mut Vec<Violation>,
    ) {
        let running = self.checker.daemons_on(self.pool, it);
        for daemon in running.0.iter().map(|&d| &self.checker.daemons[d]) {
            for port in &daemon.host_ports {
                if let Some(p) = pod_ports.iter().find(|p| p.conflicts(port)) {
                    self.flag(
                        out,
                        Rule::HostPort,
                        format!(
                            "a pod binds host port {p}, which daemon {} binds on {}",
                            daemon.name, it.name
                        ),
                    );
                }
            }
        }
    }

    /// One pod's constraints on the launched node, reported about the pod: it
    /// tolerates the pool's taints ([`Rule::Taint`]), and one of its node
    /// selector alternatives is met by the claim and the node
    /// ([`Rule::NodeRequirements`], or [`Rule::UnreadablePod`] when its
    /// alternatives cannot be read).
    fn check_pod_on_launched_node(
        &self,
        pod: &PodInfo,
        it: &InstanceType,
        launch: &Launch,
        node: &Requirements,
        out: &mut Vec<Violation>,
    ) {
        let index = self.index;
        let taints = self.pool.spec.template.spec.taints();
        let key = pod_key(pod);
        let spec = spec_of(pod);
        let tolerations = spec.tolerations.as_deref().unwrap_or_default();
        if let Some(taint) = first_untolerated(taints, tolerations) {
            out.push(Violation {
                rule: Rule::Taint,
                subject: Subject::Pod(key.clone()),
                detail: format!(
                    "on claim #{index}: does not tolerate the nodepool's taint {}",
                    describe_taint(taint)
                ),
            });
        }
        let alternatives = match strict_alternatives(spec) {
            Ok(a) => a,
            Err(e) => {
                out.push(Violation {
                    rule: Rule::UnreadablePod,
                    subject: Subject::Pod(key),
                    detail: e.to_string(),
                });
                return;
            }
        };
        let well_known = self.checker.well_known;
        let met = alternatives.iter().any(|r| {
            self.requirements.is_compatible(r, well_known)
                && node.is_compatible(r, &WellKnownLabels::empty())
        });
        if !met {
            let why = alternatives
                .first()
                .and_then(|r| {
                    self.requirements
                        .compatible(r, well_known)
                        .and_then(|()| node.compatible(r, &WellKnownLabels::empty()))
                        .err()
                })
                .map(|e| e.to_string())
                .unwrap_or_default();
            out.push(Violation {
                rule: Rule::NodeRequirements,
                subject: Subject::Pod(key),
                detail: format!("on claim #{index} ({} in {} as {}): no node selector alternative is met ({why})", it.name, launch.zone, launch.capacity_type),
            });
        }
    }
}
