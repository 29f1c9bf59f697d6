//! Embeds every kernel source under `src/cuda/kernels/` (`.cu`, `.cuh`) into the crate, so a
//! new wrong variant or header cannot be left out of the list by hand.

use std::path::Path;

fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, root, out);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("cu" | "cuh")) {
            if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
}

fn main() {
    let root = Path::new("src/cuda/kernels");
    println!("cargo:rerun-if-changed=src/cuda/kernels");
    let mut files = Vec::new();
    walk(root, root, &mut files);
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let mut s = String::from("&[\n");
    for f in &files {
        s.push_str(&format!(
            "    ({f:?}, include_str!(concat!({manifest:?}, \"/src/cuda/kernels/\", {f:?}))),\n"
        ));
    }
    s.push_str("]\n");
    let out = std::env::var("OUT_DIR").unwrap_or_default();
    let _ = std::fs::write(Path::new(&out).join("kernel_files.rs"), s);
}
