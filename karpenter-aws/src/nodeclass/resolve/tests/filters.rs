//! Selector terms to EC2 filters, as upstream's providers send them.

use serde_json::json;

use crate::ec2::Filter;
use crate::nodeclass::resolve::filters::{
    capacity_reservation_inputs, image_inputs, security_group_filter_sets, subnet_filter_sets,
};

fn parse<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    serde_json::from_value(value).unwrap_or_else(|e| panic!("test terms: {e}"))
}

#[test]
fn subnet_terms_give_one_set_per_tag_term_and_one_for_ids() {
    let terms = parse::<Vec<_>>(json!([
        {"tags": {"Name": "private", "karpenter.sh/discovery": "*"}},
        {"id": "subnet-1"},
        {"id": "subnet-2"},
    ]));
    assert_eq!(
        subnet_filter_sets(&terms),
        [
            vec![
                Filter::new("tag:Name", ["private"]),
                Filter::new("tag-key", ["karpenter.sh/discovery"]),
            ],
            vec![Filter::new("subnet-id", ["subnet-1", "subnet-2"])],
        ]
    );
}

#[test]
fn security_group_terms_group_ids_and_names() {
    let terms = parse::<Vec<_>>(json!([
        {"name": "default"},
        {"id": "sg-1"},
        {"tags": {"team": "a"}},
        {"name": "nodes"},
    ]));
    assert_eq!(
        security_group_filter_sets(&terms),
        [
            vec![Filter::new("tag:team", ["a"])],
            vec![Filter::new("group-id", ["sg-1"])],
            vec![Filter::new("group-name", ["default", "nodes"])],
        ]
    );
}

#[test]
fn image_terms_search_self_and_amazon_for_a_bare_name() {
    let terms = parse::<Vec<_>>(json!([
        {"name": "my-ami-*"},
        {"name": "their-ami", "owner": "0123456789"},
        {"tags": {"team": "*"}},
        {"id": "ami-1"},
        {"ssmParameter": "/my/ami"},
        {"ssmParameter": "/not/an/ami"},
        {"ssmParameter": "/missing"},
    ]));
    let ssm = |name: &str| match name {
        "/my/ami" => Some("ami-2".to_owned()),
        "/not/an/ami" => Some("hello".to_owned()),
        _ => None,
    };
    let inputs = image_inputs(&terms, ssm);
    let state = Filter::new("state", ["available"]);
    let owners: Vec<Vec<String>> = inputs.iter().map(|i| i.owners.clone()).collect();
    assert_eq!(
        owners,
        [vec!["self", "amazon"], vec!["0123456789"], vec![], vec![]]
    );
    assert_eq!(
        inputs[0].filters,
        [Filter::new("name", ["my-ami-*"]), state.clone()]
    );
    assert_eq!(
        inputs[2].filters,
        [Filter::new("tag-key", ["team"]), state.clone()]
    );
    assert_eq!(
        inputs[3].filters,
        [Filter::new("image-id", ["ami-1", "ami-2"]), state]
    );
}

#[test]
fn capacity_reservation_terms_ask_for_active_ones() {
    let terms = parse::<Vec<_>>(json!([
        {"id": "cr-1"},
        {"ownerID": "012345678901", "tags": {"team": "a"}},
        {"instanceMatchCriteria": "open"},
        {"ownerID": "012345678901"},
    ]));
    let inputs = capacity_reservation_inputs(&terms);
    let active = Filter::new("state", ["active"]);
    assert_eq!(inputs.len(), 3, "an owner alone selects nothing");
    assert_eq!(inputs[0].ids, ["cr-1"]);
    assert_eq!(inputs[0].filters, std::slice::from_ref(&active));
    assert_eq!(
        inputs[1].filters,
        [
            active.clone(),
            Filter::new("owner-id", ["012345678901"]),
            Filter::new("tag:team", ["a"]),
        ]
    );
    assert_eq!(
        inputs[2].filters,
        [active, Filter::new("instance-match-criteria", ["open"])]
    );
}
