//! The catalog's records and how each table's rows become them.

use std::collections::BTreeMap;

use super::table::{Row, Table};
use super::{CatalogError, CatalogProblem};

/// The `karpenter.k8s.aws/*` labels read from `instance-types.csv`, by the
/// column's name (the part after the `/`). The network bandwidth is not
/// among them: upstream takes it from its bandwidth table, and so does the
/// catalog.
pub(crate) const LABEL_COLUMNS: [&str; 20] = [
    "instance-category",
    "instance-family",
    "instance-generation",
    "instance-size",
    "instance-cpu",
    "instance-cpu-manufacturer",
    "instance-cpu-sustained-clock-speed-mhz",
    "instance-memory",
    "instance-hypervisor",
    "instance-encryption-in-transit-supported",
    "instance-capability-flex",
    "instance-ebs-bandwidth",
    "instance-local-nvme",
    "instance-gpu-name",
    "instance-gpu-manufacturer",
    "instance-gpu-count",
    "instance-gpu-memory",
    "instance-accelerator-name",
    "instance-accelerator-manufacturer",
    "instance-accelerator-count",
];

/// The column whose empty cell is a label with an empty value (bare metal
/// has no hypervisor, and upstream still sets the label), not an absent one.
const ALWAYS_PRESENT: &str = "instance-hypervisor";

/// A processor architecture, as `kubernetes.io/arch` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arch {
    /// `x86_64` in EC2's words.
    Amd64,
    /// Graviton.
    Arm64,
}

impl Arch {
    /// The label value.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Arch::Amd64 => "amd64",
            Arch::Arm64 => "arm64",
        }
    }
}

/// One instance type of `instance-types.csv`.
#[derive(Clone, Debug)]
pub(crate) struct TypeRecord {
    /// `m5.large`.
    pub(crate) name: &'static str,
    pub(crate) arch: Arch,
    /// `kubernetes.io/os` (`linux` on every row).
    pub(crate) os: &'static str,
    /// The value of each label of [`LABEL_COLUMNS`], in that order; `None`
    /// where the type has no such label.
    labels: Vec<Option<&'static str>>,
    /// `instance-cpu`.
    pub(crate) vcpus: u32,
    /// `instance-memory`, MiB as EC2 reports it.
    pub(crate) memory_mib: u64,
    /// EFA interfaces (`MaximumEfaInterfaces`): known only from the page's
    /// allocatable, which equals capacity for devices.
    pub(crate) efa: u32,
    /// Neuron cores over all devices, known only the same way.
    pub(crate) neuron_cores: u32,
    /// The page's pod count, kept only for the types `vpc-limits.csv` lacks
    /// (whose ENI limits the data does not give otherwise).
    pub(crate) published_pods: Option<u32>,
}

impl TypeRecord {
    /// The value of label column `column` (one of [`LABEL_COLUMNS`]).
    pub(crate) fn label(&self, column: &str) -> Option<&'static str> {
        LABEL_COLUMNS
            .iter()
            .position(|c| *c == column)
            .and_then(|i| self.labels.get(i).copied().flatten())
    }

    /// Every label column with its value, in [`LABEL_COLUMNS`] order.
    pub(crate) fn labels(&self) -> impl Iterator<Item = (&'static str, Option<&'static str>)> + '_ {
        LABEL_COLUMNS
            .iter()
            .copied()
            .zip(self.labels.iter().copied())
    }
}

/// What `vpc-limits.csv` says of a type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct VpcLimits {
    /// The most ENIs the default network card takes.
    pub(crate) default_card_interfaces: u32,
    /// Every network card as (index, most ENIs it takes), in table order.
    pub(crate) network_cards: Vec<(u32, u32)>,
    /// IPv4 addresses per ENI.
    pub(crate) ipv4_per_interface: u32,
    /// Branch ENIs for pods (`vpc.amazonaws.com/pod-eni`): the table's
    /// branch interfaces when the type is trunking-compatible, else 0.
    pub(crate) pod_eni: u32,
}

/// `vpc-limits.csv` by type.
pub(crate) fn vpc_limits(table: &Table) -> Result<BTreeMap<&'static str, VpcLimits>, CatalogError> {
    let name = table.column("instance_type")?;
    let ipv4 = table.column("ipv4_per_interface")?;
    let trunking = table.column("is_trunking_compatible")?;
    let branch = table.column("branch_interface")?;
    let default_card = table.column("default_network_card_index")?;
    let cards = table.column("network_cards")?;
    let mut limits = BTreeMap::new();
    for row in table.rows() {
        let row = row?;
        let default_index: u32 = row.required_number(default_card)?;
        let network_cards = network_cards(&row, cards)?;
        let default_card_interfaces = network_cards
            .iter()
            .find(|(index, _)| *index == default_index)
            .map(|(_, interfaces)| *interfaces)
            .ok_or_else(|| {
                row.error(
                    cards,
                    CatalogProblem::NetworkCards(row.text(cards).to_owned()),
                )
            })?;
        let record = VpcLimits {
            default_card_interfaces,
            network_cards,
            ipv4_per_interface: row.required_number(ipv4)?,
            pod_eni: if row.boolean(trunking)? {
                row.required_number(branch)?
            } else {
                0
            },
        };
        insert_once(&mut limits, &row, name, record)?;
    }
    Ok(limits)
}

/// The cards of an `index:maxInterfaces;…` cell.
fn network_cards(row: &Row, column: usize) -> Result<Vec<(u32, u32)>, CatalogError> {
    let text = row.text(column);
    let bad = || row.error(column, CatalogProblem::NetworkCards(text.to_owned()));
    text.split(';')
        .map(|card| {
            let (index, interfaces) = card.split_once(':').ok_or_else(bad)?;
            let index = index.parse().map_err(|_| bad())?;
            let interfaces = interfaces.parse().map_err(|_| bad())?;
            Ok((index, interfaces))
        })
        .collect()
}

/// `network-bandwidth.csv`: the types with a bandwidth in Mbps (those with
/// only a vague rating get no label, as upstream).
pub(crate) fn bandwidth(table: &Table) -> Result<BTreeMap<&'static str, u64>, CatalogError> {
    let name = table.column("instance_type")?;
    let mbps = table.column("network_bandwidth_mbps")?;
    let mut bandwidth = BTreeMap::new();
    for row in table.rows() {
        let row = row?;
        if let Some(value) = row.number(mbps)? {
            insert_once(&mut bandwidth, &row, name, value)?;
        }
    }
    Ok(bandwidth)
}

/// `instance-types.csv` by type; `vpc_limits` says which types need the
/// page's pod count.
pub(crate) fn instance_types(
    table: &Table,
    vpc_limits: &BTreeMap<&'static str, VpcLimits>,
) -> Result<BTreeMap<&'static str, TypeRecord>, CatalogError> {
    let name = table.column("name")?;
    let arch = table.column("arch")?;
    let os = table.column("os")?;
    let labels = LABEL_COLUMNS
        .iter()
        .map(|c| table.column(c))
        .collect::<Result<Vec<_>, _>>()?;
    let vcpus = table.column("instance-cpu")?;
    let memory = table.column("instance-memory")?;
    let efa = table.column("alloc_vpc.amazonaws.com/efa")?;
    let neuron_cores = table.column("alloc_aws.amazon.com/neuroncore")?;
    let pods = table.column("alloc_pods")?;
    let mut types = BTreeMap::new();
    for row in table.rows() {
        let row = row?;
        let type_name = row.required(name)?;
        let record = TypeRecord {
            name: type_name,
            arch: match row.text(arch) {
                "amd64" => Arch::Amd64,
                "arm64" => Arch::Arm64,
                other => {
                    return Err(row.error(arch, CatalogProblem::Architecture(other.to_owned())));
                }
            },
            os: row.required(os)?,
            labels: LABEL_COLUMNS
                .iter()
                .zip(&labels)
                .map(|(column, &at)| match row.text(at) {
                    "" if *column != ALWAYS_PRESENT => None,
                    value => Some(value),
                })
                .collect(),
            vcpus: row.required_number(vcpus)?,
            memory_mib: row.required_number(memory)?,
            efa: row.number(efa)?.unwrap_or(0),
            neuron_cores: row.number(neuron_cores)?.unwrap_or(0),
            published_pods: if vpc_limits.contains_key(type_name) {
                None
            } else {
                Some(row.required_number(pods)?)
            },
        };
        insert_once(&mut types, &row, name, record)?;
    }
    Ok(types)
}

/// Inserts `value` under the row's name in `column`, refusing a repeat.
fn insert_once<V>(
    map: &mut BTreeMap<&'static str, V>,
    row: &Row,
    column: usize,
    value: V,
) -> Result<(), CatalogError> {
    let key = row.required(column)?;
    if map.insert(key, value).is_some() {
        return Err(row.error(column, CatalogProblem::Duplicate(key.to_owned())));
    }
    Ok(())
}
