//! The exercise as a learner finishes it: `exercise/solve.rs` as shipped,
//! its one line replaced by a written `solve()` (ours: the body of the
//! `reference` variant), compiled here as the program compiles it (a module
//! of its own, through the library's public API alone) and run on the
//! emulator. The written file is `written_solve/solve.rs`; the first test
//! holds it to the shipped file and the reference, so that a change to
//! either that a learner's `solve()` would not survive fails here.
//!
//! The shipped file is `shipped_solve/solve.rs`, a copy that no learner
//! edits: `exercise/solve.rs` is theirs, and once they write `solve()` the
//! tests that need the unwritten one (this file's, and the doc quote of its
//! one line, `host/tests/doc_quotes.rs`) read the copy. The last test holds
//! `exercise/solve.rs` to the copy while it is unwritten, and accepts any
//! written one.

// The reference's `THREADS_PER_BLOCK as u64` reads `256 as u64` once written in.
#[allow(clippy::unnecessary_cast)]
#[path = "written_solve/solve.rs"]
mod solve;

use cg_emulator::{Device, Options};
use host::device::Gpu;
use host::exercise::{Variant, run_sizes};

// The kernels, linked as the program links them.
use gpu as _;
use gpu_ptx as _;

/// `exercise/solve.rs` with the reference's body written into it (the file
/// `scripts/measure-loop.sh` copies in for its `solve()` edits).
fn written() -> String {
    let variants = include_str!("../src/exercise/variants.rs");
    let start = variants.find("pub fn reference(").expect("variants.rs has the reference");
    let body_start = start + variants[start..].find('{').unwrap() + 1;
    let mut depth = 1;
    let mut end = body_start;
    for (k, c) in variants[body_start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = body_start + k;
                    break;
                }
            }
            _ => {}
        }
    }
    let body = variants[body_start..end].replace("THREADS_PER_BLOCK", "256").replace("crate::", "host::");
    let shipped = include_str!("shipped_solve/solve.rs");
    assert!(shipped.contains(UNWRITTEN), "host/tests/shipped_solve/solve.rs no longer ships the line a learner replaces");
    shipped.replace(UNWRITTEN, &format!("{{{body}}}"))
}

/// The body `exercise/solve.rs` ships with, which the learner replaces.
const UNWRITTEN: &str = "{\n    // Delete this line and write your solve() here.\n    host::exercise::unwritten(gpu, input, total)\n}";

/// Whether `learners` (the text of `exercise/solve.rs`) may stand beside
/// `shipped`: the shipped file itself, or one whose `solve()` is written.
fn as_shipped_or_written(learners: &str, shipped: &str) -> Result<(), String> {
    match (learners == shipped, learners.contains(UNWRITTEN)) {
        (true, _) | (false, false) => Ok(()),
        (false, true) => Err("exercise/solve.rs is unwritten but differs from host/tests/shipped_solve/solve.rs, the copy the tests read once a learner has written solve(): make the copy the same".to_string()),
    }
}

#[test]
fn the_written_file_is_the_shipped_one_with_the_reference_written_in() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/written_solve/solve.rs");
    if std::env::var_os("WRITE_SOLVE").is_some() {
        std::fs::write(&path, written()).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        written(),
        "host/tests/written_solve/solve.rs is out of date: WRITE_SOLVE=1 cargo test -p host --test written_solve rewrites it"
    );
}

#[test]
fn the_learners_file_is_the_shipped_one_or_a_written_solve() {
    let shipped = include_str!("shipped_solve/solve.rs");
    assert_eq!(as_shipped_or_written(include_str!("../../exercise/solve.rs"), shipped), Ok(()));
    // A learner's written solve() passes; a shipped file edited without its copy does not.
    assert_eq!(as_shipped_or_written(&written(), shipped), Ok(()));
    assert!(as_shipped_or_written(&shipped.replace("//! The exercise:", "//! The exercise, changed:"), shipped).is_err());
}

#[test]
fn a_written_solve_compiles_against_the_shipped_imports_and_passes_on_the_emulator() {
    let gpu = Gpu::emulated(Device::T4, Options::default());
    let report = run_sizes(&gpu, Variant::Solve, solve::solve, &[0, 1, 611, 40_960], &mut |_| {}).unwrap();
    assert!(report.cases.iter().all(|c| c.pass()), "{:?}", report.cases);
}
