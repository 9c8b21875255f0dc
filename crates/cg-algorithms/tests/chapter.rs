//! `docs/algorithms.md` shows its files as they are (each block that names
//! a file is that file: `examples/first_calls.rs`, `examples/own_operator.rs`
//! and the operators' kernel crate), and what the two examples print (each
//! run on the emulator, its output the chapter's block).

use std::path::Path;
use std::process::Command;

const CHAPTER: &str = include_str!("../../../docs/algorithms.md");

#[test]
fn the_chapter_shows_each_file_as_it_is() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut shown = Vec::new();
    for block in CHAPTER.split("```rust file=").skip(1) {
        let (path, rest) = block.split_once('\n').expect("the block has a line after its path");
        let body = &rest[..rest.find("```\n").expect("the block ends")];
        let file = std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("docs/algorithms.md names {path}: {e}"));
        assert_eq!(body, file, "docs/algorithms.md's block differs from {path}: paste the file again");
        shown.push(path);
    }
    for path in ["crates/cg-algorithms/examples/first_calls.rs", "crates/cg-algorithms/examples/own_operator.rs", "examples/algorithms/operators/src/lib.rs"] {
        assert!(shown.contains(&path), "docs/algorithms.md does not show {path}");
    }
}

#[test]
fn the_chapter_quotes_what_each_example_prints_on_the_emulator() {
    for example in ["first_calls", "own_operator"] {
        let marker = format!("<!-- output checked by: crates/cg-algorithms/tests/chapter.rs ({example}) -->\n```text\n");
        let start = CHAPTER.find(&marker).unwrap_or_else(|| panic!("the chapter marks {example}'s output")) + marker.len();
        let len = CHAPTER[start..].find("```\n").expect("the block ends");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = Command::new(cargo)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["run", "-q", "-p", "cg-algorithms", "--example", example])
            .output()
            .expect("cargo runs the example");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(stdout, &CHAPTER[start..start + len], "docs/algorithms.md's output block differs from what {example} prints");
    }
}
