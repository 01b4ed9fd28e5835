//! Reading each setting and saying what is wrong with it.

use std::collections::BTreeMap;
use std::net::IpAddr;

use super::{
    AksSettings, BootstrapToken, NetworkDataplane, NetworkPlugin, NetworkPluginMode,
    PROVISION_MODE_SCRIPTLESS, SETTINGS, SettingProblem, SettingsError,
};

/// A subnet's ARM ID, in parts
/// (`/subscriptions/<s>/resourceGroups/<rg>/providers/Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubnetId {
    /// The subscription.
    pub subscription: String,
    /// The VNet's resource group.
    pub resource_group: String,
    /// The VNet.
    pub vnet: String,
    /// The subnet.
    pub subnet: String,
}

impl SubnetId {
    /// The parts of a subnet ID; its segment names are matched without
    /// regard to case, as ARM does.
    pub fn parse(id: &str) -> Result<SubnetId, String> {
        let parts: Vec<&str> = id.split('/').collect();
        let expected = [
            (1, "subscriptions"),
            (3, "resourceGroups"),
            (5, "providers"),
            (6, "Microsoft.Network"),
            (7, "virtualNetworks"),
            (9, "subnets"),
        ];
        let well_formed = parts.len() == 11
            && parts[0].is_empty()
            && expected
                .iter()
                .all(|&(i, name)| parts[i].eq_ignore_ascii_case(name))
            && [2, 4, 8, 10].iter().all(|&i| !parts[i].is_empty());
        if !well_formed {
            return Err(format!(
                "`{id}` is not a subnet ID (/subscriptions/<id>/resourceGroups/<group>/providers/\
                 Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>)"
            ));
        }
        Ok(SubnetId {
            subscription: parts[2].to_owned(),
            resource_group: parts[4].to_owned(),
            vnet: parts[8].to_owned(),
            subnet: parts[10].to_owned(),
        })
    }

    /// The ID again, in ARM's canonical spelling.
    pub fn id(&self) -> String {
        format!(
            "/subscriptions/{}/resourceGroups/{}/providers/Microsoft.Network/virtualNetworks/{}/subnets/{}",
            self.subscription, self.resource_group, self.vnet, self.subnet
        )
    }
}

/// Whether `text` has a bootstrap token's form: six and sixteen of `[a-z0-9]`
/// around a dot.
pub(super) fn is_bootstrap_token(text: &str) -> bool {
    let ok = |part: &str, len: usize| {
        part.len() == len
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    text.split_once('.')
        .is_some_and(|(id, secret)| ok(id, 6) && ok(secret, 16))
}

/// Whether `text` is a UUID in its 8-4-4-4-12 hex form.
fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, len)| g.len() == len && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Collects values and problems while the settings are read.
struct Reader<'a> {
    lookup: &'a dyn Fn(&str) -> Option<String>,
    problems: Vec<SettingProblem>,
}

impl Reader<'_> {
    /// The value of `variable` (or its first set alias), trimmed; empty is
    /// unset.
    fn get(&self, variable: &str) -> Option<String> {
        let setting = SETTINGS.iter().find(|s| s.variable == variable)?;
        std::iter::once(setting.variable)
            .chain(setting.aliases.iter().copied())
            .find_map(|name| {
                (self.lookup)(name)
                    .map(|v| v.trim().to_owned())
                    .filter(|v| !v.is_empty())
            })
    }

    fn problem(&mut self, variable: &str, message: impl Into<String>) {
        let Some(setting) = SETTINGS.iter().find(|s| s.variable == variable) else {
            return;
        };
        self.problems.push(SettingProblem {
            variable: setting.variable,
            flag: setting.flag,
            message: message.into(),
        });
    }

    /// A required value; a problem (and an empty string) when unset.
    fn required(&mut self, variable: &str) -> String {
        self.get(variable).unwrap_or_else(|| {
            self.problem(variable, "is required");
            String::new()
        })
    }

    /// A required value checked by `check`; a problem when unset or wrong.
    fn required_checked<T>(
        &mut self,
        variable: &str,
        check: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        if self.get(variable).is_none() {
            self.problem(variable, "is required");
        }
        self.checked(variable, check)
    }

    /// An optional value checked by `check` (which says what is wrong).
    fn checked<T>(
        &mut self,
        variable: &str,
        check: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        let value = self.get(variable)?;
        check(&value)
            .map_err(|message| self.problem(variable, message))
            .ok()
    }
}

fn endpoint_host(text: &str) -> Result<String, String> {
    let url =
        url::Url::parse(text).map_err(|e| format!("`{text}` is not an absolute URL ({e})"))?;
    url.host_str()
        .filter(|h| !h.is_empty())
        .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_owned())
        .ok_or_else(|| format!("`{text}` has no host"))
}

fn uuid(text: &str) -> Result<String, String> {
    if is_uuid(text) {
        Ok(text.to_ascii_lowercase())
    } else {
        Err(format!("`{text}` is not a UUID"))
    }
}

fn admin_username(text: &str) -> Result<String, String> {
    let mut chars = text.chars();
    let starts_with_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if text.len() > 32 {
        Err(format!("`{text}` is longer than 32 characters"))
    } else if !starts_with_letter || !rest_ok {
        Err(format!(
            "`{text}` must start with a letter and hold only letters, digits, `-` and `_`"
        ))
    } else {
        Ok(text.to_owned())
    }
}

fn tags(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut tags = BTreeMap::new();
    let mut seen = BTreeMap::new();
    for pair in text.split(',').filter(|p| !p.trim().is_empty()) {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("`{pair}` is not `key=value`"))?;
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() {
            return Err(format!("`{pair}` has an empty key"));
        }
        if key.len() > 512 || value.len() > 256 {
            return Err(format!(
                "tag `{key}`: keys hold at most 512 characters, values 256"
            ));
        }
        if key.contains(['<', '>', '%', '&', '\\', '?', '/']) {
            return Err(format!(
                "tag key `{key}` holds one of < > % & \\ ? / (Azure refuses them)"
            ));
        }
        if let Some(first) = seen.insert(key.to_ascii_lowercase(), key.to_owned()) {
            return Err(format!(
                "tag keys `{first}` and `{key}` are the same to Azure (case-insensitive)"
            ));
        }
        tags.insert(key.to_owned(), value.to_owned());
    }
    Ok(tags)
}

fn disk_encryption_set(text: &str) -> Result<String, String> {
    let parts: Vec<&str> = text.split('/').collect();
    let ok = parts.len() == 9
        && parts[0].is_empty()
        && parts[1].eq_ignore_ascii_case("subscriptions")
        && parts[3].eq_ignore_ascii_case("resourceGroups")
        && parts[5].eq_ignore_ascii_case("providers")
        && parts[6].eq_ignore_ascii_case("Microsoft.Compute")
        && parts[7].eq_ignore_ascii_case("diskEncryptionSets")
        && [2, 4, 8].iter().all(|&i| !parts[i].is_empty());
    if ok {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "`{text}` is not a disk encryption set ID (/subscriptions/<id>/resourceGroups/<group>/\
             providers/Microsoft.Compute/diskEncryptionSets/<name>)"
        ))
    }
}

fn network_plugin(text: &str) -> Result<NetworkPlugin, String> {
    match text {
        "azure" => Ok(NetworkPlugin::Azure),
        "none" => Ok(NetworkPlugin::None),
        other => Err(format!("`{other}` is not `azure` or `none`")),
    }
}

fn network_dataplane(text: &str) -> Result<NetworkDataplane, String> {
    match text {
        "azure" => Ok(NetworkDataplane::Azure),
        "cilium" => Ok(NetworkDataplane::Cilium),
        other => Err(format!("`{other}` is not `azure`, `cilium` or empty")),
    }
}

/// The network settings; `NETWORK_PLUGIN_MODE` is read raw because its
/// empty value is a mode of its own (node subnet), not "unset".
fn network(reader: &mut Reader<'_>) -> (NetworkPlugin, NetworkPluginMode, NetworkDataplane) {
    let plugin = reader
        .checked("NETWORK_PLUGIN", network_plugin)
        .unwrap_or(NetworkPlugin::Azure);
    let mode = match (reader.lookup)("NETWORK_PLUGIN_MODE").map(|m| m.trim().to_owned()) {
        None => NetworkPluginMode::Overlay,
        Some(m) if m == "overlay" => NetworkPluginMode::Overlay,
        Some(m) if m.is_empty() => NetworkPluginMode::NodeSubnet,
        Some(other) => {
            reader.problem(
                "NETWORK_PLUGIN_MODE",
                format!("`{other}` is not `overlay` or empty"),
            );
            NetworkPluginMode::Overlay
        }
    };
    if plugin == NetworkPlugin::None && mode == NetworkPluginMode::Overlay {
        reader.problem(
            "NETWORK_PLUGIN_MODE",
            "must be empty when NETWORK_PLUGIN is `none`",
        );
    }
    let dataplane = match (reader.lookup)("NETWORK_DATAPLANE").map(|d| d.trim().to_owned()) {
        None => NetworkDataplane::Cilium,
        Some(d) if d.is_empty() => NetworkDataplane::Unset,
        Some(_) => reader
            .checked("NETWORK_DATAPLANE", network_dataplane)
            .unwrap_or(NetworkDataplane::Cilium),
    };
    (plugin, mode, dataplane)
}

/// Reads every setting, collecting every problem.
pub(super) fn read(lookup: &dyn Fn(&str) -> Option<String>) -> Result<AksSettings, SettingsError> {
    let mut r = Reader {
        lookup,
        problems: Vec::new(),
    };
    let cluster_name = r.required("CLUSTER_NAME");
    let cluster_endpoint = r.required("CLUSTER_ENDPOINT");
    let api_server_name = if cluster_endpoint.is_empty() {
        String::new()
    } else {
        r.checked("CLUSTER_ENDPOINT", endpoint_host)
            .unwrap_or_default()
    };
    let bootstrap_token = r.required_checked("KUBELET_BOOTSTRAP_TOKEN", |t| BootstrapToken::new(t));
    let ssh_public_key = r.required("SSH_PUBLIC_KEY");
    let subnet = r.required_checked("VNET_SUBNET_ID", SubnetId::parse);
    let node_resource_group = r.required("AZURE_NODE_RESOURCE_GROUP");
    let location = r.required("LOCATION");
    let subscription_id = r.get("AZURE_SUBSCRIPTION_ID");
    let tenant_id = r.get("AZURE_TENANT_ID").unwrap_or_default();
    let linux_admin_username = r
        .checked("LINUX_ADMIN_USERNAME", admin_username)
        .unwrap_or_else(|| "azureuser".to_owned());
    let (network_plugin, network_plugin_mode, network_dataplane) = network(&mut r);
    let network_policy = r.get("NETWORK_POLICY").unwrap_or_default();
    let dns_service_ip = r.checked("DNS_SERVICE_IP", |t| {
        t.parse::<IpAddr>()
            .map_err(|_| format!("`{t}` is not an IP address"))
    });
    let vnet_guid = r.checked("VNET_GUID", uuid);
    let kubelet_identity_client_id = r.checked("KUBELET_IDENTITY_CLIENT_ID", uuid);
    let node_identities = r
        .get("NODE_IDENTITIES")
        .map(|list| {
            list.split(',')
                .map(str::trim)
                .filter(|id| !id.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let vm_memory_overhead_percent = r
        .checked("VM_MEMORY_OVERHEAD_PERCENT", |t| match t.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(format!("`{t}` is not a number at least 0")),
        })
        .unwrap_or(0.075);
    if let Some(mode) = r
        .get("PROVISION_MODE")
        .filter(|m| m != PROVISION_MODE_SCRIPTLESS)
    {
        r.problem(
            "PROVISION_MODE",
            format!("`{mode}` is not supported yet; only `{PROVISION_MODE_SCRIPTLESS}` is"),
        );
    }
    let disk_encryption_set_id = r.checked("NODE_OSDISK_DISKENCRYPTIONSET_ID", disk_encryption_set);
    let additional_tags = r.checked("ADDITIONAL_TAGS", tags).unwrap_or_default();

    match (bootstrap_token, subnet) {
        (Some(bootstrap_token), Some(subnet)) if r.problems.is_empty() => Ok(AksSettings {
            subscription_id: subscription_id.unwrap_or_else(|| subnet.subscription.clone()),
            cluster_name,
            cluster_endpoint,
            api_server_name,
            bootstrap_token,
            ssh_public_key,
            subnet,
            node_resource_group,
            location,
            tenant_id,
            linux_admin_username,
            network_plugin,
            network_plugin_mode,
            network_policy,
            network_dataplane,
            dns_service_ip,
            vnet_guid,
            kubelet_identity_client_id,
            node_identities,
            vm_memory_overhead_percent,
            disk_encryption_set_id,
            additional_tags,
        }),
        _ => {
            let order = |p: &SettingProblem| SETTINGS.iter().position(|s| s.variable == p.variable);
            r.problems.sort_by_key(order);
            Err(SettingsError {
                problems: r.problems,
            })
        }
    }
}
