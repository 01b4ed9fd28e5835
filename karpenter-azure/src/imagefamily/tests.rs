use serde_json::json;

use super::*;

const VERSION: &str = "202505.27.0";
const UBUNTU: &str = "/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images";
const AZL: &str = "/CommunityGalleries/AKSAzureLinux-f7c7cda5-1c9a-4bdc-a222-9614c968580b/images";

/// The community image IDs of a class at `VERSION`, in preference order,
/// as upstream's node image provider lists them.
fn cig_ids(family: ImageFamily, fips: bool, tl: bool, k8s: &str) -> Vec<String> {
    let distro = Distro::resolve(family, fips, tl, Some(k8s));
    distro
        .community_definitions(fips, tl)
        .iter()
        .map(|d| community_image_id(distro.community_gallery(), d.name, VERSION))
        .collect()
}

fn ids(gallery: &str, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .map(|n| format!("{gallery}/{n}/versions/{VERSION}"))
        .collect()
}

#[test]
fn community_image_ids_match_upstreams_vectors() {
    use ImageFamily::*;
    let ubuntu_2204 = ids(
        UBUNTU,
        &[
            "2204gen2containerd",
            "2204containerd",
            "2204gen2arm64containerd",
        ],
    );
    let ubuntu_2404 = ids(
        UBUNTU,
        &[
            "2404gen2containerd",
            "2404containerd",
            "2404gen2arm64containerd",
        ],
    );
    let azl2 = ids(AZL, &["V2gen2", "V2", "V2gen2arm64"]);
    let azl3 = ids(AZL, &["V3gen2", "V3", "V3gen2arm64"]);
    // (family, trusted launch, Kubernetes version, expected)
    let cases = [
        (Ubuntu2204, false, "1.31.0", ubuntu_2204.clone()),
        (Ubuntu2204, false, "1.32.0", ubuntu_2204.clone()),
        (Ubuntu, false, "1.31.0", ubuntu_2204.clone()),
        (Ubuntu, false, "1.32.0", ubuntu_2204),
        (Ubuntu2404, false, "1.31.0", ubuntu_2404.clone()),
        (Ubuntu2404, false, "1.32.0", ubuntu_2404),
        (AzureLinux, false, "1.31.0", azl2),
        (AzureLinux, false, "1.32.0", azl3),
        (
            Ubuntu2204,
            true,
            "1.31.0",
            ids(UBUNTU, &["2204gen2TLcontainerd"]),
        ),
        (
            Ubuntu2204,
            true,
            "1.32.0",
            ids(UBUNTU, &["2204gen2TLcontainerd"]),
        ),
        (
            Ubuntu,
            true,
            "1.31.0",
            ids(UBUNTU, &["2204gen2TLcontainerd"]),
        ),
        (
            Ubuntu2404,
            true,
            "1.31.0",
            ids(UBUNTU, &["2404gen2TLcontainerd"]),
        ),
        (
            Ubuntu2404,
            true,
            "1.32.0",
            ids(UBUNTU, &["2404gen2TLcontainerd"]),
        ),
        (AzureLinux, true, "1.31.0", ids(AZL, &["V2gen2TL"])),
        (AzureLinux, true, "1.32.0", ids(AZL, &["V3gen2TL"])),
    ];
    for (family, tl, k8s, expected) in cases {
        assert_eq!(
            cig_ids(family, false, tl, k8s),
            expected,
            "{family:?} trusted launch {tl} on {k8s}"
        );
    }
}

#[test]
fn fips_images_are_not_in_the_community_gallery() {
    for family in [
        ImageFamily::Ubuntu,
        ImageFamily::Ubuntu2204,
        ImageFamily::AzureLinux,
    ] {
        for tl in [false, true] {
            assert!(cig_ids(family, true, tl, "1.32.0").is_empty(), "{family:?}");
        }
    }
    // They exist in the shared gallery's catalogue all the same.
    let names: Vec<&str> = Distro::AzureLinux3
        .definitions(true, false)
        .iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(names, ["V3gen2fips", "V3fips", "V3gen2arm64fips"]);
    let fips_tl: Vec<&str> = Distro::Ubuntu2204
        .definitions(true, true)
        .iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(fips_tl, ["2204gen2fipsTLcontainerd"]);
    assert!(Distro::Ubuntu2204.definitions(true, false).is_empty());
    assert!(Distro::Ubuntu2004.definitions(false, false).is_empty());
    assert!(Distro::Ubuntu2004.definitions(true, true).is_empty());
}

#[test]
fn families_resolve_as_upstream() {
    // (imageFamily, flags, Kubernetes version ("none": unknown), expected
    // os-sku-effective, which names the distro: plain Ubuntu is 20.04).
    let cases = [
        ("Ubuntu", "", "1.33.9", "Ubuntu2204"),
        ("Ubuntu", "", "1.34.0", "Ubuntu2404"),
        ("Ubuntu", "", "v1.35.1", "Ubuntu2404"),
        ("Ubuntu", "", "none", "Ubuntu2404"),
        ("Ubuntu", "", "latest", "Ubuntu2204"),
        ("Ubuntu", "fips", "1.34.0", "Ubuntu"),
        ("Ubuntu", "fips tl", "1.34.0", "Ubuntu2204"),
        ("Ubuntu", "tl", "1.34.0", "Ubuntu2204"),
        ("Ubuntu2204", "", "1.35.0", "Ubuntu2204"),
        ("Ubuntu2404", "tl", "1.30.0", "Ubuntu2404"),
        ("AzureLinux", "", "1.31.9", "AzureLinux2"),
        ("AzureLinux", "fips", "1.32.0-rc.1", "AzureLinux3"),
        ("AzureLinux", "", "none", "AzureLinux3"),
        ("AzureLinux", "", "", "AzureLinux2"),
    ];
    for (family, flags, version, effective) in cases {
        let parsed = ImageFamily::parse(family).expect("a family");
        let version = (version != "none").then_some(version);
        let fips = flags.contains("fips");
        let tl = flags.contains("tl");
        let got = Distro::resolve(parsed, fips, tl, version);
        assert_eq!(
            got.os_sku_effective(),
            effective,
            "{family} {flags} {version:?}"
        );
    }
    assert_eq!(
        Distro::resolve(ImageFamily::Ubuntu, true, false, None),
        Distro::Ubuntu2004
    );
}

#[test]
fn os_sku_effective_reads_a_class_s_settings() {
    let mut settings = Settings::for_region("eastus");
    settings.image_family = ImageFamily::AzureLinux;
    assert_eq!(os_sku_effective(&settings, Some("1.31.0")), "AzureLinux2");
    settings.image_family = ImageFamily::Ubuntu;
    settings.fips = true;
    assert_eq!(os_sku_effective(&settings, Some("1.31.0")), "Ubuntu");
    settings.trusted_launch = true;
    assert_eq!(os_sku_effective(&settings, None), "Ubuntu2204");
}

#[test]
fn definitions_carry_what_they_boot() {
    let defs = Distro::Ubuntu2404.definitions(false, false);
    let booted: Vec<(&str, &str)> = defs.iter().map(|d| (d.arch, d.hyperv_generation)).collect();
    assert_eq!(booted, [("amd64", "2"), ("amd64", "1"), ("arm64", "2")]);
    assert_eq!(defs[2].distro, "aks-ubuntu-arm64-containerd-24.04-gen2");
    for distro in [Distro::Ubuntu2204, Distro::AzureLinux2, Distro::AzureLinux3] {
        let tl = distro.definitions(false, true);
        assert_eq!(tl.len(), 1);
        assert_eq!((tl[0].arch, tl[0].hyperv_generation), ("amd64", "2"));
    }
}

fn version(name: &str, published: &str) -> Value {
    json!({"name": name, "location": "eastus", "properties": {"publishedDate": published}})
}

#[test]
fn the_newest_version_is_the_latest_published() {
    let listed = [
        version("202505.27.0", "2025-05-27T10:00:00Z"),
        version("202506.01.0", "2025-06-01T08:30:00.1234567+00:00"),
        version("202505.20.0", "2025-05-20T10:00:00Z"),
    ];
    assert_eq!(newest_version(&listed).as_deref(), Some("202506.01.0"));
    // Not by name: a re-published older build wins when it is newer.
    let republished = [
        version("202506.01.0", "2025-06-01T00:00:00Z"),
        version("202504.01.1", "2025-06-02T00:00:00Z"),
    ];
    assert_eq!(newest_version(&republished).as_deref(), Some("202504.01.1"));
}

#[test]
fn ties_go_to_the_greater_name_in_any_order() {
    let a = version("202505.27.0", "2025-05-27T00:00:00Z");
    let b = version("202505.27.1", "2025-05-27T00:00:00Z");
    assert_eq!(
        newest_version(&[a.clone(), b.clone()]).as_deref(),
        Some("202505.27.1")
    );
    assert_eq!(newest_version(&[b, a]).as_deref(), Some("202505.27.1"));
}

#[test]
fn ties_compare_versions_by_their_numbers_not_their_text() {
    let nine = version("202505.9.0", "2025-05-27T00:00:00Z");
    let ten = version("202505.10.0", "2025-05-27T00:00:00Z");
    let longer = version("202505.10.0.1", "2025-05-27T00:00:00Z");
    assert_eq!(
        newest_version(&[ten.clone(), nine.clone()]).as_deref(),
        Some("202505.10.0")
    );
    assert_eq!(
        newest_version(&[nine, ten.clone()]).as_deref(),
        Some("202505.10.0")
    );
    assert_eq!(
        newest_version(&[longer, ten]).as_deref(),
        Some("202505.10.0.1")
    );
}

#[test]
fn malformed_versions_are_passed_over() {
    let listed = [
        version("202512.01.0", "yesterday"),
        json!({"name": "202512.02.0", "properties": {}}),
        json!({"properties": {"publishedDate": "2025-12-03T00:00:00Z"}}),
        json!(null),
        version("202505.27.0", "2025-05-27T00:00:00Z"),
    ];
    assert_eq!(newest_version(&listed).as_deref(), Some("202505.27.0"));
    assert_eq!(newest_version(&listed[..4]), None);
    assert_eq!(newest_version(&[]), None);
}
