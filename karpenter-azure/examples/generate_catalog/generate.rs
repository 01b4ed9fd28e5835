//! Makes the embedded catalog (`karpenter-azure/data/*.tsv`) from the public
//! Azure data tables that `karpenter-azure/data/SOURCES.md` describes.
//! [`generate`] returns the files, which `main.rs` writes. What each holds:
//!
//! - `skus.tsv`: every size of `sku-catalog.csv` with a vCPU count, its quota
//!   family, vCPUs, memory (GiB as the Resource SKUs API writes it: exact
//!   where `skus.csv` has the size, else CA's whole GiB), GPUs, arch, whether
//!   upstream knows it (`known_skus.yaml`) and parses its name, the name-derived
//!   labels, and the capabilities `skus.csv` records (empty where unknown);
//! - `zones.tsv`: the zones each size of `skus.csv` is offered in, per region,
//!   and whether a location restriction keeps it out;
//! - `regions.tsv`: every region with its zone count and whether it has prices;
//! - `prices.tsv`: on-demand USD per hour, one row per size, one column per
//!   region (empty where the region's table lacks the size);
//! - `gpus.tsv`: the GPU registry.
//!
//! The same input gives the same files, byte for byte.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// A CSV file (no quoted fields, as these tables are) as rows of named cells.
fn read(dir: &Path, file: &str) -> Result<Vec<BTreeMap<String, String>>, String> {
    let text = fs::read_to_string(dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .ok_or(format!("{file}: empty"))?
        .split(',')
        .collect();
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != header.len() {
            return Err(format!(
                "{file}:{}: {} cells, header has {}",
                i + 2,
                cells.len(),
                header.len()
            ));
        }
        rows.push(
            header
                .iter()
                .zip(cells)
                .map(|(h, c)| (h.to_string(), c.to_string()))
                .collect(),
        );
    }
    Ok(rows)
}

fn cell<'r>(row: &'r BTreeMap<String, String>, column: &str) -> &'r str {
    row.get(column).map(String::as_str).unwrap_or_default()
}

/// A price without trailing zeros (`0.096000` -> `0.096`).
fn trim_price(price: &str) -> String {
    if !price.contains('.') {
        return price.to_owned();
    }
    price.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Appends a row of `skus.tsv`: `fields`, then the capability columns as
/// the fixture has them (empty without one).
fn push_sku(
    skus: &mut String,
    fields: &[&str],
    capability_columns: &[&str],
    fixture: Option<&BTreeMap<String, String>>,
) {
    skus.push_str(&fields.join("\t"));
    for column in capability_columns {
        skus.push('\t');
        skus.push_str(fixture.map(|f| cell(f, column)).unwrap_or_default());
    }
    skus.push('\n');
}

/// A row of a CSV table: its cells by column name.
type Row = BTreeMap<String, String>;

/// The capabilities `skus.tsv` copies from `skus.csv`, in column order.
const CAPABILITY_COLUMNS: [&str; 12] = [
    "hyperv_generations",
    "accelerated_networking",
    "premium_io",
    "ephemeral_os_disk",
    "ephemeral_os_disk_placements",
    "max_resource_volume_mb",
    "cached_disk_bytes",
    "nvme_disk_size_mib",
    "encryption_at_host",
    "low_priority_capable",
    "ultra_ssd_available",
    "trusted_launch_disabled",
];

/// The catalog's files (name, contents) made from the tables in `input`.
pub(crate) fn generate(input: &Path) -> Result<Vec<(&'static str, String)>, String> {
    let catalog = read(input, "sku-catalog.csv")?;
    let fixtures = read(input, "skus.csv")?;
    let mut by_size: BTreeMap<&str, &Row> = BTreeMap::new();
    for row in &fixtures {
        by_size.entry(cell(row, "name")).or_insert(row);
    }

    let (skus, names) = skus_tsv(&catalog, &by_size);
    let zones = zones_tsv(&fixtures);
    let prices_rows = read(input, "prices-all-regions-ondemand.csv")?;
    let (prices_tsv, priced_regions) = prices_tsv(&prices_rows, &names);
    let regions = regions_tsv(&read(input, "regions.csv")?, &priced_regions);
    let gpus = gpus_tsv(read(input, "gpu-skus.csv")?);

    Ok(vec![
        ("skus.tsv", skus),
        ("zones.tsv", zones),
        ("prices.tsv", prices_tsv),
        ("regions.tsv", regions),
        ("gpus.tsv", gpus),
    ])
}

/// `skus.tsv`, and the names of the sizes it lists: every size of the
/// catalog with a vCPU count, then those only the fixtures have.
fn skus_tsv(catalog: &[Row], by_size: &BTreeMap<&str, &Row>) -> (String, BTreeSet<String>) {
    let mut skus = String::from(
        "name\tfamily\tvcpus\tmemory_gib\tgpus\tarch\tknown\tname_parses\tsku_family\tsku_series\tsku_version\taccelerator",
    );
    for column in CAPABILITY_COLUMNS {
        skus.push('\t');
        skus.push_str(column);
    }
    skus.push('\n');
    let mut names = BTreeSet::new();
    for row in catalog {
        if cell(row, "vcpus").is_empty() {
            continue; // known to upstream by name only: no capacity to model
        }
        let name = cell(row, "name");
        names.insert(name.to_owned());
        let fixture = by_size.get(name);
        let memory = fixture
            .map(|f| cell(f, "memory_gib"))
            .unwrap_or_else(|| cell(row, "memory_gib_floor"));
        let yes = |v: &str| if v == "true" { "1" } else { "0" };
        let fields = [
            name,
            cell(row, "family"),
            cell(row, "vcpus"),
            memory,
            cell(row, "gpus"),
            cell(row, "arch"),
            yes(cell(row, "in_karpenter_known_skus")),
            yes(cell(row, "name_parse_ok")),
            cell(row, "sku_family_label"),
            cell(row, "sku_series_label"),
            cell(row, "sku_version_label"),
            cell(row, "accelerator_from_name"),
        ];
        push_sku(&mut skus, &fields, &CAPABILITY_COLUMNS, fixture.copied());
    }

    // Sizes only the fixtures have (Standard_A0): from the fixture alone.
    for (name, fixture) in by_size {
        if names.contains(*name) {
            continue;
        }
        names.insert((*name).to_owned());
        let arch = match cell(fixture, "arch") {
            "x64" => "amd64",
            "Arm64" => "arm64",
            other => other,
        };
        let fields = [
            name,
            cell(fixture, "family"),
            cell(fixture, "vcpus"),
            cell(fixture, "memory_gib"),
            cell(fixture, "gpus"),
            arch,
            "0",
            "1",
            cell(fixture, "sku_family_label"),
            cell(fixture, "sku_series_label"),
            cell(fixture, "sku_version_label"),
            cell(fixture, "gpu_name_from_size"),
        ];
        push_sku(&mut skus, &fields, &CAPABILITY_COLUMNS, Some(fixture));
    }
    (skus, names)
}

/// `zones.tsv`: the zones each size of `skus.csv` is offered in, per region.
fn zones_tsv(fixtures: &[Row]) -> String {
    let mut zones = String::from("region\tname\tavailable_zones\tlocation_restricted\n");
    for row in fixtures {
        let restricted = cell(row, "restrictions")
            .split(';')
            .any(|r| r.starts_with("Location:"));
        zones.push_str(&format!(
            "{}\t{}\t{}\t{}\n",
            cell(row, "region"),
            cell(row, "name"),
            cell(row, "available_zones"),
            u8::from(restricted)
        ));
    }
    zones
}

/// `prices.tsv` for the sizes `skus.tsv` lists, and every region the price
/// table has.
fn prices_tsv<'r>(prices_rows: &'r [Row], names: &BTreeSet<String>) -> (String, BTreeSet<&'r str>) {
    let mut prices: BTreeMap<&str, BTreeMap<&str, String>> = BTreeMap::new();
    let mut priced_regions = BTreeSet::new();
    for row in prices_rows {
        let sku = cell(row, "sku");
        priced_regions.insert(cell(row, "region"));
        if names.contains(sku) {
            prices.entry(sku).or_default().insert(
                cell(row, "region"),
                trim_price(cell(row, "on_demand_usd_per_hour")),
            );
        }
    }
    let regions_list: Vec<&str> = priced_regions.iter().copied().collect();
    let mut prices_tsv = format!("name\t{}\n", regions_list.join("\t"));
    for (sku, by_region) in &prices {
        prices_tsv.push_str(sku);
        for region in &regions_list {
            prices_tsv.push('\t');
            prices_tsv.push_str(
                by_region
                    .get(region)
                    .map(String::as_str)
                    .unwrap_or_default(),
            );
        }
        prices_tsv.push('\n');
    }
    (prices_tsv, priced_regions)
}

/// `regions.tsv`: the regions `regions.csv` lists, then those only the price
/// table has.
fn regions_tsv(listed: &[Row], priced_regions: &BTreeSet<&str>) -> String {
    let mut regions = String::from("region\tzone_count\thas_prices\n");
    for row in listed {
        let region = cell(row, "region");
        regions.push_str(&format!(
            "{region}\t{}\t{}\n",
            cell(row, "zone_count"),
            u8::from(priced_regions.contains(region))
        ));
    }
    // A region the price table has but the locations list lacks
    // (swedensouth): no zones known, so regional placement only.
    for region in priced_regions {
        if !listed.iter().any(|row| cell(row, "region") == *region) {
            regions.push_str(&format!("{region}\t0\t1\n"));
        }
    }
    regions
}

/// `gpus.tsv`: the GPU registry.
fn gpus_tsv(rows: Vec<Row>) -> String {
    let mut gpus = String::from("name\tmanufacturer\tsupported_os\tmanaged_driver_install\n");
    for row in rows {
        gpus.push_str(&format!(
            "{}\t{}\t{}\t{}\n",
            cell(&row, "sku_lowercase"),
            cell(&row, "manufacturer"),
            cell(&row, "supported_os"),
            u8::from(cell(&row, "managed_driver_install") == "true")
        ));
    }
    gpus
}
