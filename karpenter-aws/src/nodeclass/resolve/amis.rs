//! Images resolved from their queries: for each set of requirements (the
//! architecture, and an alias image's variant), the best image: not
//! deprecated, then newest, then the greatest name.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::NodeSelectorRequirement;

use super::alias::{ImageVariant, requirement};
use crate::ec2::{DescribeImagesInput, Ec2Api, Ec2Error, Image};
use crate::nodeclass::Ami;

/// One `DescribeImages` call and what its images are for: an image named
/// in `variants` (an alias's) is for those kinds of node, any other for
/// any node of its architecture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ImageQuery {
    pub(crate) input: DescribeImagesInput,
    pub(crate) variants: BTreeMap<String, Vec<ImageVariant>>,
}

/// The Kubernetes architecture of an EC2 one; `None` for others (32-bit,
/// Mac), whose images upstream ignores.
fn kube_arch(ec2: &str) -> Option<&'static str> {
    match ec2 {
        "x86_64" => Some("amd64"),
        "arm64" => Some("arm64"),
        _ => None,
    }
}

/// A candidate image for one requirement set.
struct Candidate {
    image: Image,
    deprecated: bool,
    requirements: Vec<NodeSelectorRequirement>,
}

/// Requirements in upstream's written order: shorter keys first, then by
/// key.
fn sort_requirements(requirements: &mut [NodeSelectorRequirement]) {
    requirements.sort_by(|a, b| a.key.len().cmp(&b.key.len()).then(a.key.cmp(&b.key)));
}

/// The key a requirement set is told apart by.
fn set_key(requirements: &[NodeSelectorRequirement]) -> String {
    requirements
        .iter()
        .map(|r| format!("{} {} {:?}", r.key, r.operator, r.values))
        .collect::<Vec<_>>()
        .join(";")
}

/// Which of two candidates for the same requirements wins.
fn better(new: &Candidate, old: &Candidate) -> bool {
    let rank = |c: &Candidate| (!c.deprecated, c.image.creation_date, c.image.name.clone());
    rank(new).cmp(&rank(old)) == Ordering::Greater
}

/// The requirement sets `image` serves in `query`.
fn requirement_sets(
    query: &ImageQuery,
    image: &Image,
    arch: &str,
) -> Vec<Vec<NodeSelectorRequirement>> {
    let arch = requirement("kubernetes.io/arch", "In", &[arch]);
    let variants = query.variants.get(&image.image_id);
    let mut sets: Vec<Vec<NodeSelectorRequirement>> = match variants {
        Some(variants) => variants.iter().map(|v| v.requirements()).collect(),
        None => vec![Vec::new()],
    };
    for set in &mut sets {
        set.push(arch.clone());
        sort_requirements(set);
    }
    sets
}

/// Runs `queries` and keeps the best image per requirement set, images
/// deprecated at `now` counting as deprecated; sorted newest first, then
/// by ID, as upstream lists them.
pub(crate) async fn resolve_amis(
    api: &impl Ec2Api,
    queries: Vec<ImageQuery>,
    now: Timestamp,
) -> Result<Vec<Ami>, Ec2Error> {
    let mut best: BTreeMap<String, Candidate> = BTreeMap::new();
    for query in queries {
        let images = api.describe_images(query.input.clone()).await?.images;
        for image in images {
            let Some(arch) = kube_arch(&image.architecture) else {
                continue;
            };
            for requirements in requirement_sets(&query, &image, arch) {
                let candidate = Candidate {
                    deprecated: image.deprecation_time.is_some_and(|t| t <= now),
                    image: image.clone(),
                    requirements,
                };
                let key = set_key(&candidate.requirements);
                if best.get(&key).is_none_or(|old| better(&candidate, old)) {
                    best.insert(key, candidate);
                }
            }
        }
    }
    let mut chosen: Vec<Candidate> = best.into_values().collect();
    chosen.sort_by(|a, b| {
        b.image
            .creation_date
            .cmp(&a.image.creation_date)
            .then_with(|| a.image.image_id.cmp(&b.image.image_id))
            // One image can serve several sets: a fixed order among them.
            .then_with(|| set_key(&a.requirements).cmp(&set_key(&b.requirements)))
    });
    Ok(chosen.into_iter().map(to_status).collect())
}

fn to_status(candidate: Candidate) -> Ami {
    Ami {
        id: candidate.image.image_id,
        // Upstream omits an empty name and `deprecated: false`.
        name: Some(candidate.image.name).filter(|name| !name.is_empty()),
        deprecated: candidate.deprecated.then_some(true),
        requirements: candidate.requirements,
        ..Ami::default()
    }
}
