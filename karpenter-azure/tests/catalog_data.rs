//! The committed catalog is what the generator makes of the public tables,
//! checked wherever those tables sit beside the repository
//! (`../shared/azure-data`).

use std::path::Path;

#[test]
fn the_committed_data_is_the_generators_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = root.join("../../shared/azure-data");
    if !sources.is_dir() {
        eprintln!("skipped: {} is absent", sources.display());
        return;
    }
    let files = karpenter_azure::generate::generate(&sources).expect("the tables read");
    for (file, text) in files {
        let committed = std::fs::read_to_string(root.join("data").join(file)).expect("committed");
        assert!(
            committed == text,
            "data/{file} differs from the generator's output: run the generator"
        );
    }
}
