//! Taints and tolerations, after upstream's `pkg/scheduling/taints.go`,
//! `pkg/apis/v1/taints.go` and Kubernetes' `Toleration.ToleratesTaint`.

use std::fmt;

use k8s_openapi::api::core::v1::{Taint, Toleration};
use thiserror::Error;

/// Pods that do not tolerate the taint are not scheduled onto the node.
pub const TAINT_EFFECT_NO_SCHEDULE: &str = "NoSchedule";
/// The scheduler avoids the node for pods that do not tolerate the taint.
/// Karpenter's provisioning treats it like `NoSchedule` until it relaxes
/// preferences.
pub const TAINT_EFFECT_PREFER_NO_SCHEDULE: &str = "PreferNoSchedule";
/// Pods that do not tolerate the taint are also evicted.
pub const TAINT_EFFECT_NO_EXECUTE: &str = "NoExecute";

/// Set by the node lifecycle controller while a node is not ready.
pub const TAINT_NODE_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Set by the node lifecycle controller while a node is unreachable.
pub const TAINT_NODE_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// Set by the kubelet until the external cloud provider initialises the node.
pub const TAINT_EXTERNAL_CLOUD_PROVIDER: &str = "node.cloudprovider.kubernetes.io/uninitialized";
/// Set by Karpenter on nodes it is disrupting.
pub const DISRUPTED_TAINT_KEY: &str = "karpenter.sh/disrupted";
/// Set by Karpenter on nodes until their NodeClaim registers them.
pub const UNREGISTERED_TAINT_KEY: &str = "karpenter.sh/unregistered";

/// A taint known at compile time. Like Kubernetes' `MatchTaint`,
/// [`matches`](Self::matches) compares key and effect only; the value is what
/// [`to_taint`](Self::to_taint) writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TaintTemplate {
    /// The taint key.
    pub key: &'static str,
    /// The taint value, `""` for none.
    pub value: &'static str,
    /// The taint effect.
    pub effect: &'static str,
}

impl TaintTemplate {
    /// Whether `taint` has this key and effect.
    pub fn matches(&self, taint: &Taint) -> bool {
        taint.key == self.key && taint.effect == self.effect
    }

    /// The template as a Kubernetes taint.
    pub fn to_taint(&self) -> Taint {
        Taint {
            key: self.key.to_owned(),
            value: (!self.value.is_empty()).then(|| self.value.to_owned()),
            effect: self.effect.to_owned(),
            time_added: None,
        }
    }
}

/// `karpenter.sh/disrupted:NoSchedule`: keeps new pods off nodes being
/// disrupted. Pods tolerating it are excluded from disruption simulations.
pub const DISRUPTED_NO_SCHEDULE_TAINT: TaintTemplate = TaintTemplate {
    key: DISRUPTED_TAINT_KEY,
    value: "",
    effect: TAINT_EFFECT_NO_SCHEDULE,
};

/// `karpenter.sh/unregistered:NoExecute`: on nodes until they register.
pub const UNREGISTERED_NO_EXECUTE_TAINT: TaintTemplate = TaintTemplate {
    key: UNREGISTERED_TAINT_KEY,
    value: "",
    effect: TAINT_EFFECT_NO_EXECUTE,
};

/// Taints expected while a node initialises. On a Karpenter-managed node that
/// is not initialized yet, they are ignored, since they will go away.
pub const KNOWN_EPHEMERAL_TAINTS: [TaintTemplate; 5] = [
    TaintTemplate {
        key: TAINT_NODE_NOT_READY,
        value: "",
        effect: TAINT_EFFECT_NO_SCHEDULE,
    },
    TaintTemplate {
        key: TAINT_NODE_NOT_READY,
        value: "",
        effect: TAINT_EFFECT_NO_EXECUTE,
    },
    TaintTemplate {
        key: TAINT_NODE_UNREACHABLE,
        value: "",
        effect: TAINT_EFFECT_NO_SCHEDULE,
    },
    TaintTemplate {
        key: TAINT_EXTERNAL_CLOUD_PROVIDER,
        value: "true",
        effect: TAINT_EFFECT_NO_SCHEDULE,
    },
    UNREGISTERED_NO_EXECUTE_TAINT,
];

/// Key prefixes of ephemeral taint families whose suffix is chosen by a
/// controller, such as the Node Readiness Controller's
/// `readiness.k8s.io/<rule>`. Any effect matches.
pub const KNOWN_EPHEMERAL_TAINT_KEY_PREFIXES: [&str; 1] = ["readiness.k8s.io/"];

/// Whether `taint` is one of [`KNOWN_EPHEMERAL_TAINTS`] (by key and effect) or
/// has a key starting with one of [`KNOWN_EPHEMERAL_TAINT_KEY_PREFIXES`].
pub fn is_known_ephemeral_taint(taint: &Taint) -> bool {
    KNOWN_EPHEMERAL_TAINTS
        .iter()
        .any(|known| known.matches(taint))
        || KNOWN_EPHEMERAL_TAINT_KEY_PREFIXES
            .iter()
            .any(|prefix| taint.key.starts_with(prefix))
}

/// The taints of a managed node that is not initialized yet that pods must
/// still tolerate: all but the known ephemeral taints and the node's startup
/// taints (matched by key and effect), which will be removed.
pub fn uninitialized_node_taints<'a>(
    taints: &'a [Taint],
    startup_taints: &'a [Taint],
) -> impl Iterator<Item = &'a Taint> + 'a {
    taints.iter().filter(|taint| {
        !is_known_ephemeral_taint(taint)
            && !startup_taints
                .iter()
                .any(|startup| taints_match(startup, taint))
    })
}

/// Kubernetes' `MatchTaint`: same key and effect, whatever the value.
pub fn taints_match(a: &Taint, b: &Taint) -> bool {
    a.key == b.key && a.effect == b.effect
}

/// `taints` followed by each taint of `with` that matches none of them.
pub fn merge_taints(taints: &[Taint], with: &[Taint]) -> Vec<Taint> {
    let mut merged = taints.to_vec();
    for taint in with {
        if !merged.iter().any(|existing| taints_match(taint, existing)) {
            merged.push(taint.clone());
        }
    }
    merged
}

/// Whether `toleration` tolerates `taint`, as Kubernetes decides with the
/// comparison operators enabled (upstream Karpenter enables them):
///
/// * an empty effect matches every effect, otherwise effects must be equal;
/// * an empty key matches every key, otherwise keys must be equal;
/// * `Exists` matches any value, `Equal` (or no operator) an equal value
///   (absent and empty are equal);
/// * `Gt` and `Lt` hold when the taint's value is greater (less) than the
///   toleration's, both integers in canonical decimal form;
/// * any other operator matches nothing.
///
/// ```
/// use k8s_openapi::api::core::v1::{Taint, Toleration};
/// use karpenter_core::scheduling::tolerates;
/// let taint = Taint { key: "gpu".into(), value: Some("true".into()), effect: "NoSchedule".into(), ..Default::default() };
/// let exists = Toleration { key: Some("gpu".into()), operator: Some("Exists".into()), ..Default::default() };
/// let wrong_value = Toleration { key: Some("gpu".into()), value: Some("false".into()), ..Default::default() };
/// assert!(tolerates(&exists, &taint));
/// assert!(!tolerates(&wrong_value, &taint));
/// ```
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or_default();
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or_default();
    if !key.is_empty() && key != taint.key {
        return false;
    }
    let wanted = toleration.value.as_deref().unwrap_or_default();
    let actual = taint.value.as_deref().unwrap_or_default();
    match toleration.operator.as_deref().unwrap_or_default() {
        "" | "Equal" => wanted == actual,
        "Exists" => true,
        "Gt" => compare_integers(wanted, actual).is_some_and(|(wanted, actual)| actual > wanted),
        "Lt" => compare_integers(wanted, actual).is_some_and(|(wanted, actual)| actual < wanted),
        _ => false,
    }
}

fn compare_integers(wanted: &str, actual: &str) -> Option<(i64, i64)> {
    Some((canonical_integer(wanted)?, canonical_integer(actual)?))
}

/// Kubernetes accepts only canonical decimal integers here: `0`, or an
/// optional `-` and digits without a leading zero (no `+`, no `007`).
fn canonical_integer(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = match digits.as_bytes() {
        [b'0'] => digits.len() == text.len(),
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    canonical.then(|| text.parse().ok()).flatten()
}

/// A taint that none of the tolerations tolerates.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("did not tolerate taint {}", DisplayTaint(taint))]
pub struct TaintError {
    /// The first taint not tolerated.
    pub taint: Box<Taint>,
}

/// Checks that every taint is tolerated by some toleration, whatever its
/// effect (`PreferNoSchedule` included, as upstream provisioning does), and
/// names the first that is not.
///
/// ```
/// use k8s_openapi::api::core::v1::Taint;
/// use karpenter_core::scheduling::tolerates_all;
/// let taint = Taint { key: "dedicated".into(), value: Some("ml".into()), effect: "NoSchedule".into(), ..Default::default() };
/// let error = tolerates_all(&[taint], &[]).unwrap_err();
/// assert_eq!(error.to_string(), "did not tolerate taint dedicated=ml:NoSchedule");
/// ```
pub fn tolerates_all(taints: &[Taint], tolerations: &[Toleration]) -> Result<(), TaintError> {
    match taints.iter().find(|taint| {
        !tolerations
            .iter()
            .any(|toleration| tolerates(toleration, taint))
    }) {
        Some(taint) => Err(TaintError {
            taint: Box::new(taint.clone()),
        }),
        None => Ok(()),
    }
}

/// Formats a taint as `key=value:effect`, or `key:effect` without a value.
pub struct DisplayTaint<'a>(pub &'a Taint);

impl fmt::Display for DisplayTaint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.value.as_deref().filter(|v| !v.is_empty()) {
            Some(value) => write!(f, "{}={}:{}", self.0.key, value, self.0.effect),
            None => write!(f, "{}:{}", self.0.key, self.0.effect),
        }
    }
}
