//! The emulator's floors, as `src/lib.rs` lists its modules: each
//! file may use only the modules listed before it. Read from the source, so
//! an import that runs back up (or a circle) fails here, naming the line.

use std::path::Path;

/// The emulator's modules, lowest first, in the order `lib.rs` declares them.
fn floors(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("lib.rs")).unwrap();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ").or_else(|| l.trim().strip_prefix("mod ")))
        .map(|l| l.trim_end_matches(';').to_string())
        .collect()
}

/// The emulator modules `text` names, with the line of each: `super::x`,
/// `super::{x, y::Z}`, `crate::x`, `crate::{x, y::Z}`.
fn uses(text: &str, modules: &[String]) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for prefix in ["super::", "crate::"] {
            for (at, _) in line.match_indices(prefix) {
                let rest = &line[at + prefix.len()..];
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    Some(group) => group.split('}').next().unwrap_or("").split(',').map(|s| s.trim().split("::").next().unwrap_or("")).collect(),
                    None => vec![rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or("")],
                };
                for name in names {
                    if modules.iter().any(|m| m == name) {
                        found.push((name.to_string(), n + 1));
                    }
                }
            }
        }
    }
    found
}

#[test]
fn every_emulator_file_uses_only_the_floors_below_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let floors = floors(&dir);
    assert!(floors.len() >= 10, "lib.rs lists {floors:?}");
    let mut wrong = Vec::new();
    for (k, module) in floors.iter().enumerate() {
        let file = dir.join(format!("{module}.rs"));
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        // Its own tests may use anything below the facade.
        let text = text.split("#[cfg(test)]").next().unwrap_or("");
        for (used, line) in uses(text, &floors) {
            let at = floors.iter().position(|m| *m == used).unwrap();
            if at >= k {
                wrong.push(format!("src/{module}.rs:{line} uses {used}, which is not below it"));
            }
        }
    }
    assert!(wrong.is_empty(), "imports that run back up the emulator's floors:\n{}", wrong.join("\n"));
}

#[test]
fn an_import_back_up_is_found_with_its_line() {
    let floors: Vec<String> = ["fault", "block", "launch"].map(String::from).to_vec();
    assert_eq!(uses("use super::fault::Fault;\nuse super::{launch::X, block};\n", &floors), [("fault".into(), 1), ("launch".into(), 2), ("block".into(), 2)]);
    assert_eq!(uses("use crate::block::Block;\nuse crate::{fault, launch::Y};\n", &floors), [("block".into(), 1), ("fault".into(), 2), ("launch".into(), 2)]);
}
