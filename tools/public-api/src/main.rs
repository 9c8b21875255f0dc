//! Holds each library crate's public API to the listing checked in beside
//! it, `crates/<crate>/public-api.txt`: one line per public item, sorted by
//! path, from rustdoc's JSON. An addition to a crate's API then shows in
//! review as an added line, and one nobody meant fails the check.
//!
//! ```text
//! cargo run -p public-api              # check: fails, with a diff, if a listing is not the crate's API
//! cargo run -p public-api -- --bless   # write the listings from the crates as they are
//! ```
//!
//! rustdoc runs into `target/public-api/`, with `RUSTDOCFLAGS` cleared, for
//! the host (what docs.rs shows), with items marked `#[doc(hidden)]`
//! included: hidden from the documentation, they are still public.

mod diff;
mod listing;
mod render;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The library crates: each package's name and its crate's.
const CRATES: [(&str, &str); 8] = [
    ("cg-kernel", "cg_kernel"),
    ("cg-barrier", "cg_barrier"),
    ("cg-emulator", "cg_emulator"),
    ("cg-kernel-macros", "cg_kernel_macros"),
    ("cg-builder", "cg_builder"),
    ("cg-launcher", "cg_launcher"),
    ("cg-algorithms-kernels", "cg_algorithms_kernels"),
    ("cg-algorithms", "cg_algorithms"),
];

/// The rustdoc JSON format this tool was written against (the pinned
/// nightly's); another is read too, and named if the check fails.
const FORMAT_VERSION: u64 = 57;

const USAGE: &str = "\
usage: cargo run -p public-api -- [--check | --bless]

Lists each library crate's public items from rustdoc's JSON and compares them
with the listing checked in beside it, crates/<crate>/public-api.txt.

  --check   (the default) fail, showing the lines added and removed, if a
            crate's public items are not its listing
  --bless   write the listings from the crates as they are; review the diff
            before committing it";

fn main() -> ExitCode {
    let mut bless = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--check" => bless = false,
            "--bless" => bless = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("error: public-api: unknown argument `{other}`\n\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    match run(bless) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: public-api: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Checks (or, with `bless`, writes) every crate's listing; whether all matched.
fn run(bless: bool) -> Result<bool, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut crates = Vec::new();
    for (package, crate_name) in CRATES {
        crates.push((package, rustdoc_json(&root, package, crate_name)?));
    }
    // Each crate's items by their public paths, for the others' listings.
    let mut public = std::collections::HashMap::new();
    for (package, krate) in &crates {
        public.extend(listing::public_paths(krate).map_err(|e| format!("{package}: {e}"))?);
    }
    let mut differ = Vec::new();
    for (package, krate) in &crates {
        let format_version = krate["format_version"].as_u64().unwrap_or(0);
        let lines = listing::listing(krate, &public).map_err(|e| format!("{package}: {e} (rustdoc JSON format {format_version})"))?;
        let relative = format!("crates/{package}/public-api.txt");
        let file = root.join(&relative);
        let text = listing_file(package, &lines);
        let old = std::fs::read_to_string(&file).unwrap_or_default();
        if bless {
            if old != text {
                std::fs::write(&file, &text).map_err(|e| format!("cannot write {relative}: {e}"))?;
                println!("public-api: wrote {relative} ({} items)", lines.len());
            } else {
                println!("public-api: {relative} is up to date ({} items)", lines.len());
            }
            continue;
        }
        if old == text {
            println!("public-api: {package} matches {relative} ({} items)", lines.len());
            continue;
        }
        let old_lines: Vec<&str> = old.lines().collect();
        let new_lines: Vec<&str> = text.lines().collect();
        let hunks = diff::unified(&old_lines, &new_lines, 2);
        let added = hunks.iter().filter(|l| l.starts_with('+')).count();
        let removed = hunks.iter().filter(|l| l.starts_with('-')).count();
        if old.is_empty() {
            eprintln!("public-api: {relative} is missing or empty");
        }
        eprintln!("public-api: the public API of {package} differs from {relative}: {}, {}", count(added, "added"), count(removed, "removed"));
        eprintln!("--- {relative} (checked in)\n+++ {package} (the source now)");
        for line in &hunks {
            eprintln!("{line}");
        }
        if format_version != FORMAT_VERSION {
            eprintln!(
                "(rustdoc wrote JSON format {format_version}; this tool was written against {FORMAT_VERSION}: a line may differ only in how it is written)"
            );
        }
        differ.push(*package);
    }
    if !differ.is_empty() {
        eprintln!(
            "error: public-api: the public API of {} differs from its checked-in listing (above). If the change is meant, review those lines, \
             run `cargo run -p public-api -- --bless`, and commit the listings with the change.",
            differ.join(", ")
        );
    }
    Ok(differ.is_empty())
}

/// `1 line added`, `2 lines removed`.
fn count(n: usize, what: &str) -> String {
    format!("{n} {} {what}", if n == 1 { "line" } else { "lines" })
}

/// A listing file: a line saying what it is, then the items.
fn listing_file(package: &str, lines: &[String]) -> String {
    let mut text = format!("# The public API of {package}, one item a line: checked by `cargo run -p public-api`, rewritten by `-- --bless`.\n");
    for line in lines {
        text += line;
        text.push('\n');
    }
    text
}

/// The JSON rustdoc writes for `package` (whose crate is `crate_name`).
fn rustdoc_json(root: &Path, package: &str, crate_name: &str) -> Result<Value, String> {
    // A target directory of its own: the JSON runs with other flags than
    // `cargo doc` and would otherwise sit in target/doc beside its HTML.
    let target_dir: PathBuf = root.join("target/public-api");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    println!("public-api: rustdoc JSON of {package}");
    let output = Command::new(cargo)
        .current_dir(root)
        // Every feature on, so that an item behind one (cg-launcher's `nccl`) is listed.
        .args(["rustdoc", "--quiet", "-p", package, "--lib", "--all-features", "--target-dir"])
        .arg(&target_dir)
        .args(["--", "-Z", "unstable-options", "--output-format", "json", "--document-hidden-items"])
        // A developer's flags (`-D warnings`) are not the listing's business:
        // rustdoc warns about links to hidden items it is asked to include.
        .env_remove("RUSTDOCFLAGS")
        .env_remove("CARGO_ENCODED_RUSTDOCFLAGS")
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!("`cargo rustdoc -p {package}` failed:\n{}", String::from_utf8_lossy(&output.stderr)));
    }
    let json_file = target_dir.join("doc").join(format!("{crate_name}.json"));
    let text = std::fs::read_to_string(&json_file).map_err(|e| format!("cannot read {}: {e}", json_file.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", json_file.display()))
}
