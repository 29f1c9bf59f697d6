//! The declared MSRV (`rust-version` in Cargo.toml) is at least every dependency's own
//! `rust-version`, read from `cargo metadata` for the locked dependency graph.
//!
//! What this does and does not test: only one toolchain is installed where this suite is
//! developed, so no build with the MSRV compiler is run. What is checked: (1) here, no locked
//! dependency needs a newer Rust than the declared one; (2) `cargo clippy`, which reads
//! `rust-version`, warns (`clippy::incompatible_msrv`) on standard-library APIs stabilized
//! after it. Language features newer than the MSRV are not detected by either check.

use crate::common::repo_root;

/// `"1.88"` / `"1.66.0"` as comparable (major, minor, patch).
fn version(s: &str) -> (u64, u64, u64) {
    let mut parts = s
        .split('.')
        .map(|p| p.parse::<u64>().expect("numeric rust-version"));
    let mut next = || parts.next().unwrap_or(0);
    (next(), next(), next())
}

/// The packages of a `cargo metadata` document whose `rust_version` is newer than `declared`,
/// as `name version (rust-version)`.
fn newer_than(declared: &str, metadata: &serde_json::Value) -> Vec<String> {
    let declared = version(declared);
    metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| {
            let needs = p["rust_version"].as_str()?;
            (version(needs) > declared).then(|| format!("{} {} ({needs})", p["name"], p["version"]))
        })
        .collect()
}

#[test]
fn declared_msrv_covers_every_dependency() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .current_dir(repo_root())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--all-features",
        ])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let root = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "ninfer-ternary")
        .expect("root package");
    let declared = root["rust_version"]
        .as_str()
        .expect("rust-version is declared");
    let packages_with_msrv = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["rust_version"].is_string())
        .count();
    assert!(
        packages_with_msrv > 10,
        "only {packages_with_msrv} packages state one"
    );
    let newer = newer_than(declared, &metadata);
    assert!(
        newer.is_empty(),
        "rust-version {declared} is older than {newer:?}"
    );
}

#[test]
fn a_dependency_needing_a_newer_rust_is_reported() {
    // Negative control: 1.88.1 > 1.88, 1.9 < 1.88 (numeric, not string, order), no field = ok.
    let metadata = serde_json::json!({"packages": [
        {"name": "a", "version": "1.0.0", "rust_version": "1.88.1"},
        {"name": "b", "version": "1.0.0", "rust_version": "1.9"},
        {"name": "c", "version": "1.0.0", "rust_version": null},
        {"name": "d", "version": "1.0.0", "rust_version": "1.88"}
    ]});
    assert_eq!(newer_than("1.88", &metadata), ["\"a\" \"1.0.0\" (1.88.1)"]);
}
