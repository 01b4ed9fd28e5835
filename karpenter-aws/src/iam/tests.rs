//! `InMemoryIam` keeps IAM's rules; names and error readings.

use super::{
    CreateInstanceProfileInput, IamApi, InMemoryIam, is_already_exists, is_limit_exceeded,
    is_role_not_found, legacy_instance_profile_name, role_name,
};

#[tokio::test]
async fn in_memory_iam_keeps_one_role_per_profile_and_refuses_what_iam_refuses() {
    let iam = InMemoryIam::new();
    iam.add_role("A");
    iam.add_role("B");
    let input = CreateInstanceProfileInput {
        instance_profile_name: "p".into(),
        ..CreateInstanceProfileInput::default()
    };
    let made = iam.create_instance_profile(input.clone()).await;
    assert_eq!(made.map(|p| p.path).ok().as_deref(), Some("/"));
    let again = iam.create_instance_profile(input).await;
    assert!(again.as_ref().is_err_and(is_already_exists), "{again:?}");
    assert!(iam.add_role_to_instance_profile("p", "A").await.is_ok());
    let second = iam.add_role_to_instance_profile("p", "B").await;
    assert!(second.as_ref().is_err_and(is_limit_exceeded), "{second:?}");
    let missing = iam.add_role_to_instance_profile("p", "C").await;
    assert!(
        missing.as_ref().is_err_and(is_role_not_found),
        "{missing:?}"
    );
    let held = iam.delete_instance_profile("p").await;
    assert!(held.is_err(), "a profile holding a role is not deleted");
    assert!(
        iam.remove_role_from_instance_profile("p", "A")
            .await
            .is_ok()
    );
    assert!(iam.delete_instance_profile("p").await.is_ok());
    let gone = iam.get_instance_profile("p").await;
    assert!(
        gone.as_ref()
            .is_err_and(|e| e.is_not_found() && !is_role_not_found(e))
    );
}

#[test]
fn names_follow_upstreams_format() {
    assert_eq!(role_name("team/sub/NodeRole"), "NodeRole");
    assert_eq!(role_name("NodeRole"), "NodeRole");
    // FNV-1a 64 of "" is its offset basis: the hash is upstream's.
    let name = legacy_instance_profile_name("c", "", "");
    assert_eq!(name, format!("c_{}", 0xcbf2_9ce4_8422_2325_u64));
}

#[tokio::test]
async fn the_collector_deletes_only_unused_unprotected_profiles_of_the_cluster() {
    use std::collections::BTreeSet;

    use jiff::{SignedDuration, Timestamp};

    use super::{InstanceProfile, InstanceProfiles, Role, collect_instance_profiles};

    let iam = InMemoryIam::new();
    let profile = |name: &str, path: &str| InstanceProfile {
        instance_profile_name: name.into(),
        path: path.into(),
        roles: vec![Role {
            role_name: "R".into(),
            path: "/".into(),
        }],
        tags: Vec::new(),
    };
    let ours = "/karpenter/us-west-2/c/uid-1/";
    iam.insert_profile(profile("used", ours));
    iam.insert_profile(profile("fresh", ours));
    iam.insert_profile(profile("stale", ours));
    iam.insert_profile(profile("other-cluster", "/karpenter/us-west-2/d/uid-2/"));
    iam.insert_profile(profile("users", "/"));
    let now = Timestamp::UNIX_EPOCH;
    let mut profiles = InstanceProfiles::new();
    profiles.protect("fresh", now);
    let in_use = BTreeSet::from(["used".to_owned()]);
    let collect = collect_instance_profiles(&iam, &mut profiles, "c", "us-west-2", &in_use, now);
    let deleted = collect.await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(deleted, ["stale"]);
    // Protection lapses after an hour.
    let later = now + SignedDuration::from_mins(61);
    let collect = collect_instance_profiles(&iam, &mut profiles, "c", "us-west-2", &in_use, later);
    let deleted = collect.await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(deleted, ["fresh"]);
    let left: Vec<String> = iam
        .profiles()
        .into_iter()
        .map(|p| p.instance_profile_name)
        .collect();
    assert_eq!(left, ["other-cluster", "used", "users"]);
}
