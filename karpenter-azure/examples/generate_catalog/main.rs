//! Writes the embedded catalog (`karpenter-azure/data/`) from the public Azure
//! data tables that `karpenter-azure/data/SOURCES.md` describes:
//!
//! ```text
//! cargo run -p karpenter-azure --example generate_catalog -- TABLES karpenter-azure/data
//! ```
//!
//! `TABLES` is the folder holding those tables (`sku-catalog.csv`, `skus.csv`,
//! `prices-all-regions-ondemand.csv`, `regions.csv`, `gpu-skus.csv`). The
//! generator is a maintainer's tool, so it lives here rather than in the
//! library; see `generate.rs` for what goes in each file.

mod generate;

use std::path::Path;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let [_, input, output] = args.as_slice() else {
        return Err("usage: generate_catalog <tables> <karpenter-azure/data>".into());
    };
    for (file, text) in generate::generate(Path::new(input))? {
        let path = Path::new(output).join(file);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// The committed catalog is what the generator makes of the public tables.
/// `cargo test` runs these tests (the example is declared with `test = true`).
#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn the_committed_data_is_the_generators_output() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        // The tables are not part of the repository: the check runs on a
        // checkout that has them in a `shared/azure-data` folder beside the
        // workspace, and is skipped elsewhere.
        let sources = root.join("../../shared/azure-data");
        if !sources.is_dir() {
            eprintln!("skipped: {} is absent", sources.display());
            return;
        }
        let files = super::generate::generate(&sources).expect("the tables read");
        for (file, text) in files {
            let committed =
                std::fs::read_to_string(root.join("data").join(file)).expect("committed");
            assert!(
                committed == text,
                "data/{file} differs from the generator's output: run the generator"
            );
        }
    }
}
