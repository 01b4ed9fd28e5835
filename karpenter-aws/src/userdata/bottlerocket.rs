//! Bottlerocket: the class's TOML `userData` with Karpenter's
//! `settings.kubernetes` written over it (upstream's
//! `bootstrap.Bottlerocket`). Karpenter's values win where both set a key;
//! the class's other settings (`settings.network`, `settings.ntp`, ...)
//! are kept as written.

mod keys;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use self::keys::{KUBERNETES_KEYS, Kind};
use super::duration::normalise;
use super::toml::{self, Table, Value};
use super::{Resolved, UserDataError};

/// The key of the bootstrap command that mounts the instance stores.
const MOUNT_INSTANCE_STORAGE: &str = "000-mount-instance-storage";

pub(super) fn user_data(resolved: &Resolved<'_>) -> Result<String, UserDataError> {
    let mut root = match resolved.custom() {
        Some(data) => toml::parse(data).map_err(|source| UserDataError::InvalidToml { source })?,
        None => Table::new(),
    };
    // Upstream's document has `settings` alone; other top-level keys go.
    let mut settings = take_table(&mut root, "settings", "settings")?.unwrap_or_default();
    let user_kubernetes =
        take_table(&mut settings, "kubernetes", "settings.kubernetes")?.unwrap_or_default();
    let kubernetes = kubernetes_settings(resolved, user_kubernetes)?;
    let user_commands = take_table(
        &mut settings,
        "bootstrap-commands",
        "settings.bootstrap-commands",
    )?;
    if let Some(commands) = bootstrap_commands(resolved, user_commands)? {
        settings.push(("bootstrap-commands".to_owned(), Value::Table(commands)));
    }
    settings.push(("kubernetes".to_owned(), Value::Table(kubernetes)));
    settings.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(toml::write(&vec![(
        "settings".to_owned(),
        Value::Table(settings),
    )]))
}

/// Removes `key` from `table`, which must be a table when present (`field`
/// names it in the error).
fn take_table(table: &mut Table, key: &str, field: &str) -> Result<Option<Table>, UserDataError> {
    let Some(index) = table.iter().position(|(k, _)| k == key) else {
        return Ok(None);
    };
    match table.remove(index).1 {
        Value::Table(inner) => Ok(Some(inner)),
        _ => Err(setting_error(field, Kind::Table)),
    }
}

fn setting_error(field: &str, expected: Kind) -> UserDataError {
    UserDataError::InvalidBottlerocketSetting {
        key: field.to_owned(),
        expected: expected.name(),
    }
}

fn kind_of(value: &Value) -> Option<Kind> {
    match value {
        Value::String(_) => Some(Kind::String),
        Value::Integer(_) => Some(Kind::Integer),
        Value::Boolean(_) => Some(Kind::Boolean),
        Value::Array(_) => Some(Kind::Array),
        Value::Table(_) => Some(Kind::Table),
        Value::Float(_) | Value::Datetime(_) => None,
    }
}

/// The class's known `settings.kubernetes` keys with Karpenter's written
/// over them, in upstream's order.
fn kubernetes_settings(resolved: &Resolved<'_>, user: Table) -> Result<Table, UserDataError> {
    let mut settings: BTreeMap<&'static str, Value> = BTreeMap::new();
    for (key, value) in user {
        let Some((known, kind)) = KUBERNETES_KEYS.iter().find(|(k, _)| *k == key) else {
            // Upstream's typed settings have no place for it either; it
            // logs the key and goes on without it.
            tracing::warn!(key = %key, "spec.userData: unknown settings.kubernetes key dropped");
            continue;
        };
        if kind_of(&value) != Some(*kind) {
            return Err(setting_error(&format!("settings.kubernetes.{key}"), *kind));
        }
        settings.insert(known, value);
    }
    karpenter_settings(resolved, &mut settings)?;
    Ok(KUBERNETES_KEYS
        .iter()
        .filter_map(|(key, _)| {
            let value = settings.remove(key)?;
            // Upstream's maps are `omitempty`; its one struct is not.
            let empty_map = matches!(&value, Value::Table(t) if t.is_empty())
                && *key != "topology-manager-policy-options";
            (!empty_map).then(|| ((*key).to_owned(), value))
        })
        .collect())
}

/// Karpenter's own values: the cluster, the node's labels and taints, and
/// what the class's kubelet configuration sets.
fn karpenter_settings(
    resolved: &Resolved<'_>,
    settings: &mut BTreeMap<&'static str, Value>,
) -> Result<(), UserDataError> {
    let input = resolved.input;
    let string = |s: &str| Value::String(s.to_owned());
    settings.insert("cluster-name", string(&input.cluster_name));
    settings.insert("api-server", string(&input.cluster_endpoint));
    match input.ca_bundle.as_deref() {
        Some(ca) => settings.insert("cluster-certificate", string(ca)),
        None => settings.remove("cluster-certificate"),
    };
    let mut labels = match settings.remove("node-labels") {
        Some(Value::Table(table)) => string_map(table, "settings.kubernetes.node-labels")?,
        _ => BTreeMap::new(),
    };
    labels.extend(input.labels.clone());
    settings.insert("node-labels", string_table(&labels));
    // The class's taints are replaced, not merged, as upstream does.
    let mut taints: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for taint in &resolved.taints {
        let value = taint.value.as_deref().unwrap_or_default();
        taints
            .entry(taint.key.as_str())
            .or_default()
            .push(string(&format!("{value}:{}", taint.effect)));
    }
    settings.insert(
        "node-taints",
        Value::Table(
            taints
                .into_iter()
                .map(|(key, values)| (key.to_owned(), Value::Array(values)))
                .collect(),
        ),
    );
    kubelet_settings(resolved, settings);
    Ok(())
}

/// The kubelet configuration's fields Bottlerocket takes as settings.
fn kubelet_settings(resolved: &Resolved<'_>, settings: &mut BTreeMap<&'static str, Value>) {
    let Some(kubelet) = resolved.kubelet.as_ref() else {
        return;
    };
    if let Some(count) = kubelet.max_pods.as_ref().and_then(|m| m.count()) {
        settings.insert("max-pods", Value::Integer(count));
    }
    if let Some(dns) = resolved.cluster_dns() {
        settings.insert("cluster-dns-ip", Value::String(dns.to_owned()));
    }
    // Upstream prints the grace periods back from parsed durations.
    let grace = kubelet.eviction_soft_grace_period.as_ref().map(|periods| {
        periods
            .iter()
            .map(|(signal, period)| {
                let printed = normalise(period).unwrap_or_else(|| period.clone());
                (signal.clone(), printed)
            })
            .collect::<BTreeMap<_, _>>()
    });
    let maps = [
        ("system-reserved", kubelet.system_reserved.as_ref()),
        ("kube-reserved", kubelet.kube_reserved.as_ref()),
        ("eviction-hard", kubelet.eviction_hard.as_ref()),
        ("eviction-soft", kubelet.eviction_soft.as_ref()),
        ("eviction-soft-grace-period", grace.as_ref()),
    ];
    for (key, map) in maps {
        if let Some(map) = map {
            settings.insert(key, string_table(map));
        }
    }
    if let Some(period) = kubelet.eviction_max_pod_grace_period {
        settings.insert("eviction-max-pod-grace-period", Value::Integer(period));
    }
    // Bottlerocket takes the thresholds as strings.
    let thresholds = [
        (
            "image-gc-high-threshold-percent",
            kubelet.image_gc_high_threshold_percent,
        ),
        (
            "image-gc-low-threshold-percent",
            kubelet.image_gc_low_threshold_percent,
        ),
    ];
    for (key, percent) in thresholds {
        if let Some(percent) = percent {
            settings.insert(key, Value::String(percent.to_string()));
        }
    }
    if let Some(quota) = kubelet.cpu_cfs_quota {
        settings.insert("cpu-cfs-quota-enforced", Value::Boolean(quota));
    }
}

/// A table of strings as a map; `field` names a value that is not one.
fn string_map(table: Table, field: &str) -> Result<BTreeMap<String, String>, UserDataError> {
    table
        .into_iter()
        .map(|(key, value)| match value {
            Value::String(s) => Ok((key, s)),
            _ => Err(setting_error(&format!("{field}.{key}"), Kind::String)),
        })
        .collect()
}

fn string_table(map: &BTreeMap<String, String>) -> Value {
    Value::Table(
        map.iter()
            .map(|(key, value)| (key.clone(), Value::String(value.clone())))
            .collect(),
    )
}

/// The class's bootstrap commands, each in upstream's field order, plus
/// the instance-store mount when the class asks for RAID0.
fn bootstrap_commands(
    resolved: &Resolved<'_>,
    user: Option<Table>,
) -> Result<Option<Table>, UserDataError> {
    let mut commands: BTreeMap<String, Table> = BTreeMap::new();
    for (name, value) in user.into_iter().flatten() {
        let field = format!("settings.bootstrap-commands.{name}");
        let Value::Table(mut command) = value else {
            return Err(setting_error(&field, Kind::Table));
        };
        let mut ordered = Table::new();
        for (key, kind) in [
            ("commands", Kind::Array),
            ("mode", Kind::String),
            ("essential", Kind::Boolean),
        ] {
            if let Some(index) = command.iter().position(|(k, _)| k == key) {
                let (key, value) = command.remove(index);
                if kind_of(&value) != Some(kind) {
                    return Err(setting_error(&format!("{field}.{key}"), kind));
                }
                ordered.push((key, value));
            }
        }
        commands.insert(name, ordered);
    }
    if resolved.raid0() {
        commands.insert(MOUNT_INSTANCE_STORAGE.to_owned(), mount_command(resolved));
    }
    if commands.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        commands
            .into_iter()
            .map(|(name, command)| (name, Value::Table(command)))
            .collect(),
    ))
}

/// Initialise the instance stores and bind the kubelet's and containerd's
/// directories onto them; releases before 1.46.0 need the directories named.
fn mount_command(resolved: &Resolved<'_>) -> Table {
    let words = |words: &[&str]| {
        Value::Array(
            words
                .iter()
                .map(|w| Value::String((*w).to_owned()))
                .collect(),
        )
    };
    let bind = if supports_default_bind(resolved.input.ami_version.as_deref()) {
        words(&["apiclient", "ephemeral-storage", "bind"])
    } else {
        words(&[
            "apiclient",
            "ephemeral-storage",
            "bind",
            "--dirs",
            "/var/lib/containerd",
            "/var/lib/kubelet",
            "/var/log/pods",
        ])
    };
    vec![
        (
            "commands".to_owned(),
            Value::Array(vec![
                words(&["apiclient", "ephemeral-storage", "init"]),
                bind,
            ]),
        ),
        ("mode".to_owned(), Value::String("always".to_owned())),
        ("essential".to_owned(), Value::Boolean(true)),
    ]
}

/// Whether the Bottlerocket release `version` (`latest`, `v1.46.0`, ...)
/// binds the default directories by itself: 1.46.0 and later. An unknown
/// version is taken as older, as upstream does.
fn supports_default_bind(version: Option<&str>) -> bool {
    let Some(version) = version.filter(|v| !v.is_empty()) else {
        return false;
    };
    if version == "latest" {
        return true;
    }
    let mut parts = version.trim_start_matches('v').split('.');
    let (Some(major), Some(minor), Some(_patch)) = (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    match (major.parse::<u64>(), minor.parse::<u64>()) {
        (Ok(major), Ok(minor)) => (major, minor) >= (1, 46),
        _ => false,
    }
}
