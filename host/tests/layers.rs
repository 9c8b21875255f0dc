//! The host's layers, as `host/src/lib.rs` lists them: each module may use
//! only the modules before it in [`LAYERS`]. Read from the source, so an
//! import that runs back up (or a circle) fails here, naming the line.

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;
use gpu_ptx as _;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The launcher library's modules that `host/src/lib.rs` re-exports under
/// the lesson's names: below every layer, since they are another crate.
const LAUNCHER: &[&str] = &["device", "group", "nccl", "observe", "sizing"];

/// Every module of `host/src/lib.rs`, lowest first.
const LAYERS: &[&str] = &[
    "text",
    "invocation",
    "json",
    "error",
    "kernels",
    "checks",
    "reference",
    "launch",
    "sums",
    "timing",
    "clusters",
    "progress",
    "lesson",
    "exercise",
    "bench",
    "conjugate_gradient",
    "multi",
    "trace",
    "occupancy",
    "report",
    "cli",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The launcher's modules, lowest first: `crates/cg-launcher/src/lib.rs`'s
/// files may import only down this list (its `group` and `observe` are
/// re-exports written in `lib.rs` itself).
const LAUNCHER_LAYERS: &[&str] = &["sizing", "error", "shape", "driver", "nccl", "device", "launch"];

fn launcher_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/cg-launcher/src")
}

/// The files of top-level module `module` of the crate whose source is
/// `src`: `module.rs`, or everything under `module/`, folders within too.
fn files_of(src: &Path, module: &str) -> Vec<PathBuf> {
    let file = src.join(format!("{module}.rs"));
    if file.exists() {
        return vec![file];
    }
    let mut files = Vec::new();
    let mut stack = vec![src.join(module)];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("module {module}: neither {module}.rs nor {module}/ in {} ({e})", src.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The top-level modules named after each `crate::` in `text`'s code (a
/// comment's, a doc link's, imports nothing), with the line they are on;
/// `crate::{a::X, b}` names `a` and `b`.
fn crate_uses(text: &str) -> Vec<(String, usize)> {
    let code: String = text.lines().map(|l| format!("{}\n", l.split("//").next().unwrap_or(""))).collect();
    let text = code.as_str();
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let mut found = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let line = text[..at].lines().count().max(1);
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group: split on commas outside nested braces.
            let (mut depth, mut start) = (0usize, 0usize);
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        found.push((ident(group[start..k].trim()), line));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.push((ident(group[start..k].trim()), line));
                        start = k + 1;
                    }
                    _ => {}
                }
            }
        } else {
            found.push((ident(rest), line));
        }
    }
    found.retain(|(m, _)| !m.is_empty());
    found
}

#[test]
fn every_module_of_lib_rs_has_a_place_in_the_layers() {
    let lib = fs::read_to_string(src().join("lib.rs")).unwrap();
    let declared: BTreeSet<&str> = lib.lines().filter_map(|l| l.trim().strip_prefix("pub mod ")?.strip_suffix(';')).collect();
    let listed: BTreeSet<&str> = LAYERS.iter().copied().collect();
    assert_eq!(declared, listed, "host/src/lib.rs's modules and this test's LAYERS differ: place the new module in both");
    let reexported = format!("pub use cg_launcher::{{{}}};", LAUNCHER.join(", "));
    assert!(lib.contains(&reexported), "host/src/lib.rs should say `{reexported}`");
}

/// The imports in the files of `layers` (in the crate whose source is `src`)
/// that run up the list: each module may use the modules before it, those
/// of `outside` (another crate's, below all), and `lib.rs`'s own items.
fn upward_imports(src: &Path, layers: &[&str], outside: &[&str]) -> Vec<String> {
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let root_items: Vec<String> = lib
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let name = ["pub const ", "pub fn ", "pub(crate) fn ", "fn "].iter().find_map(|p| l.strip_prefix(p))?;
            Some(name.split([':', '(', '<']).next()?.to_string())
        })
        .collect();
    let mut wrong = Vec::new();
    for (rank, module) in layers.iter().enumerate() {
        for file in files_of(src, module) {
            let text = fs::read_to_string(&file).unwrap();
            for (used, line) in crate_uses(&text) {
                let used_rank = layers.iter().position(|m| *m == used);
                match used_rank {
                    _ if outside.contains(&used.as_str()) => {}
                    Some(r) if r <= rank => {}
                    Some(_) => wrong.push(format!("{}:{line}: {module} uses crate::{used}, a layer above it", file.display())),
                    // An item of lib.rs itself (`kernels()`), below every module.
                    None if root_items.contains(&used) => {}
                    None => wrong.push(format!("{}:{line}: {module} uses crate::{used}, which is not a module of lib.rs", file.display())),
                }
            }
        }
    }
    wrong
}

#[test]
fn each_module_uses_only_the_layers_before_it() {
    let wrong = upward_imports(&src(), LAYERS, LAUNCHER);
    assert!(wrong.is_empty(), "imports that run back up the layers:\n{}", wrong.join("\n"));
}

/// The same of the launcher library, where the devices, the driver's calls
/// and the launches once imported each other in a circle (`Shape` now has a
/// module of its own below all three).
#[test]
fn each_module_of_the_launcher_uses_only_the_layers_before_it() {
    let lib = fs::read_to_string(launcher_src().join("lib.rs")).unwrap();
    let declared: BTreeSet<&str> = lib
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub mod ").or_else(|| l.strip_prefix("mod "))?;
            l.strip_suffix(';')
        })
        .collect();
    let listed: BTreeSet<&str> = LAUNCHER_LAYERS.iter().copied().collect();
    assert_eq!(declared, listed, "cg-launcher's lib.rs modules and LAUNCHER_LAYERS differ: place the new module in both");
    let wrong = upward_imports(&launcher_src(), LAUNCHER_LAYERS, &[]);
    assert!(wrong.is_empty(), "imports that run back up the launcher's layers:\n{}", wrong.join("\n"));
}

#[test]
fn the_parser_sees_grouped_and_nested_imports() {
    let uses = crate_uses("use crate::{device::{Buffer, Gpu}, error::Result};\nlet x = crate::sizing::f();\n");
    let names: Vec<&str> = uses.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(names, ["device", "error", "sizing"]);
    assert_eq!(uses[2].1, 2);
}

/// The library reaches the kernels only through `crate::kernels()` (the
/// registry the linked `gpu` crate exports), so editing a kernel relinks the
/// program without recompiling this library.
#[test]
fn the_library_never_names_the_kernel_crate() {
    let mut named = Vec::new();
    let mut stack = vec![src()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.file_name().is_some_and(|n| n == "main.rs") || path.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let text = fs::read_to_string(&path).unwrap();
            for (k, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if code.contains("gpu::") || code.contains("extern crate gpu") {
                    named.push(format!("{}:{}: {}", path.display(), k + 1, line.trim()));
                }
            }
        }
    }
    assert!(named.is_empty(), "the host library names the `gpu` crate (use `crate::kernels()`):\n{}", named.join("\n"));
}
