use super::table::Table;
use super::*;

#[test]
fn the_embedded_data_parses_with_every_instance_type() {
    let catalog = Catalog::embedded().expect("the embedded data parses");
    assert_eq!(catalog.len(), 1382);
    assert!(catalog.contains("m5.large") && catalog.contains("u-24tb1.112xlarge"));
    // The same catalog is handed out each time.
    assert!(std::ptr::eq(catalog, Catalog::embedded().unwrap()));
}

#[test]
fn vpc_limits_take_the_default_network_cards_interfaces() {
    let catalog = Catalog::embedded().unwrap();
    let m5 = catalog.vpc_limits("m5.large").unwrap();
    assert_eq!((m5.default_card_interfaces, m5.ipv4_per_interface), (3, 10));
    assert_eq!(m5.pod_eni, 9);
    // p5.48xlarge has 32 network cards; the default one takes 2 ENIs, not
    // the type's total.
    let p5 = catalog.vpc_limits("p5.48xlarge").unwrap();
    assert_eq!(p5.default_card_interfaces, 2);
}

#[test]
fn the_page_pod_count_is_kept_only_for_types_without_vpc_limits() {
    let catalog = Catalog::embedded().unwrap();
    let without: Vec<&str> = catalog
        .records()
        .filter(|r| catalog.vpc_limits(r.name).is_none())
        .map(|r| r.name)
        .collect();
    assert_eq!(without.len(), 19);
    assert!(
        catalog
            .records()
            .all(|r| r.published_pods.is_some() == without.contains(&r.name))
    );
}

#[test]
fn prices_are_per_region_with_their_currency() {
    let catalog = Catalog::embedded().unwrap();
    assert_eq!(
        catalog.on_demand_price("us-east-1", "m5.large"),
        Some((0.096, "USD"))
    );
    assert_eq!(
        catalog
            .on_demand_price("cn-north-1", "m5.large")
            .map(|p| p.1),
        Some("CNY")
    );
    assert_eq!(catalog.on_demand_price("eu-west-1", "m5.large"), None);
    let regions: Vec<&str> = catalog.priced_regions().collect();
    assert_eq!(
        regions,
        ["cn-north-1", "us-east-1", "us-gov-east-1", "us-gov-west-1"]
    );
}

#[test]
fn labels_distinguish_absent_from_empty() {
    let catalog = Catalog::embedded().unwrap();
    let metal = catalog.record("m5.metal").unwrap();
    assert_eq!(metal.label("instance-hypervisor"), Some(""));
    assert_eq!(metal.label("instance-gpu-name"), None);
    let g5 = catalog.record("g5.12xlarge").unwrap();
    assert_eq!(g5.label("instance-gpu-name"), Some("a10g"));
    assert_eq!(catalog.bandwidth_mbps("m5.large"), Some(750));
    // Only a vague rating upstream: no bandwidth.
    assert_eq!(catalog.bandwidth_mbps("p2.xlarge"), None);
}

#[test]
fn errors_name_file_line_and_column() {
    let table = Table::new(
        "vpc-limits.csv",
        "instance_type,ipv4_per_interface,is_trunking_compatible,branch_interface,default_network_card_index,network_cards\n\
         m5.large,10,true,9,0,0:3\n\
         c5.large,ten,true,9,0,0:3\n",
    )
    .unwrap();
    let error = records::vpc_limits(&table).unwrap_err();
    assert_eq!(
        error,
        CatalogError::at(
            "vpc-limits.csv",
            3,
            2,
            CatalogProblem::NotANumber("ten".into())
        )
    );
    assert_eq!(
        error.to_string(),
        "data/vpc-limits.csv line 3, column 2: not a number: \"ten\""
    );

    let short = Table::new(
        "network-bandwidth.csv",
        "instance_type,network_bandwidth_mbps\na\n",
    )
    .unwrap();
    let error = records::bandwidth(&short).unwrap_err();
    assert_eq!((error.line, error.column), (2, 0));
    assert!(matches!(
        error.problem,
        CatalogProblem::Cells {
            found: 1,
            expected: 2
        }
    ));

    let missing = Table::new("network-bandwidth.csv", "name,mbps\n").unwrap();
    assert_eq!(
        records::bandwidth(&missing).unwrap_err().problem,
        CatalogProblem::MissingColumn("instance_type")
    );
}

#[test]
fn a_missing_default_network_card_is_an_error() {
    let table = Table::new(
        "vpc-limits.csv",
        "instance_type,ipv4_per_interface,is_trunking_compatible,branch_interface,default_network_card_index,network_cards\n\
         m5.large,10,false,0,1,0:3\n",
    )
    .unwrap();
    let error = records::vpc_limits(&table).unwrap_err();
    assert_eq!((error.line, error.column), (2, 6));
    assert_eq!(error.problem, CatalogProblem::NetworkCards("0:3".into()));
}
