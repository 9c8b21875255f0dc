//! `docs/algorithms.md` shows `examples/first_calls.rs` as it is (the
//! chapter's block that names the file is the file), and what it prints
//! (the example run on the emulator, its output the chapter's block).

use std::process::Command;

#[test]
fn the_chapter_shows_the_example_as_it_is() {
    let chapter = include_str!("../../../docs/algorithms.md");
    let file = include_str!("../examples/first_calls.rs");
    let marker = "```rust file=crates/cg-algorithms/examples/first_calls.rs\n";
    let start = chapter.find(marker).expect("the chapter names the example's file") + marker.len();
    let len = chapter[start..].find("```\n").expect("the block ends");
    assert_eq!(&chapter[start..start + len], file, "docs/algorithms.md's block differs from examples/first_calls.rs: paste the file again");
}

#[test]
fn the_chapter_quotes_what_the_example_prints_on_the_emulator() {
    let chapter = include_str!("../../../docs/algorithms.md");
    let marker = "<!-- output checked by: crates/cg-algorithms/tests/chapter.rs -->\n```text\n";
    let start = chapter.find(marker).expect("the chapter marks the example's output") + marker.len();
    let len = chapter[start..].find("```\n").expect("the block ends");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "-q", "-p", "cg-algorithms", "--example", "first_calls"])
        .output()
        .expect("cargo runs the example");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout, &chapter[start..start + len], "docs/algorithms.md's output block differs from what the example prints");
}
