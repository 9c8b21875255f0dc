//! `docs/algorithms.md` shows `examples/first_calls.rs` as it is: the
//! chapter's block that names the file is the file.

#[test]
fn the_chapter_shows_the_example_as_it_is() {
    let chapter = include_str!("../../../docs/algorithms.md");
    let file = include_str!("../examples/first_calls.rs");
    let marker = "```rust file=crates/cg-algorithms/examples/first_calls.rs\n";
    let start = chapter.find(marker).expect("the chapter names the example's file") + marker.len();
    let len = chapter[start..].find("```\n").expect("the block ends");
    assert_eq!(&chapter[start..start + len], file, "docs/algorithms.md's block differs from examples/first_calls.rs: paste the file again");
}
