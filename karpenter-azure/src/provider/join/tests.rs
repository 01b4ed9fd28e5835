use super::*;

fn pools(ids: &[&str], generation: u64) -> Pools {
    Pools {
        ids: ids.iter().map(|s| (*s).to_owned()).collect(),
        generation,
    }
}

fn azure(code: &str, message: &str) -> ArmError {
    ArmError::Azure {
        status: 400,
        code: code.to_owned(),
        message: message.to_owned(),
    }
}

#[test]
fn only_a_missing_pool_that_was_sent_is_stale() {
    let sent = pools(
        &["/subs/x/loadBalancers/kubernetes/backendAddressPools/Gone"],
        1,
    );
    let gone = "Resource /SUBS/X/loadbalancers/kubernetes/backendAddressPools/gone referenced by resource aks-a was not found.";
    assert!(is_stale_pool(
        &azure("InvalidResourceReference", gone),
        &sent
    ));
    assert!(is_stale_pool(
        &azure("invalidresourcereference", gone),
        &sent
    ));
    let subnet =
        "Resource /subs/x/virtualNetworks/v/subnets/s referenced by resource aks-a was not found.";
    assert!(!is_stale_pool(
        &azure("InvalidResourceReference", subnet),
        &sent
    ));
    assert!(!is_stale_pool(&azure("Conflict", gone), &sent));
}
