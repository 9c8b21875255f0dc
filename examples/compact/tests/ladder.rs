//! The compaction as a user runs it, on the emulated T4: the ladder's sizes
//! up to 2^20 + 7 each kept in order and counted right, and the named errors.

use std::process::Command;

fn compact(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_compact")).args(args).output().expect("the compact program runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_ladder_is_compacted_in_order_on_the_emulator() {
    for way in [&["--emulate"][..], &["--emulate", "--library"]] {
        ladder_passes(way);
    }
}

/// The ladder run with `args`: every row passes.
fn ladder_passes(args: &[&str]) {
    let (ok, stdout, stderr) = compact(args);
    assert!(ok, "{stdout}{stderr}");
    for n in ["1", "31", "32", "33", "611", "4096", "1048583"] {
        let row = stdout.lines().find(|l| l.split_whitespace().next() == Some(n)).unwrap_or_else(|| panic!("no row for {n}: {stdout}"));
        assert!(row.ends_with("pass"), "{row}");
    }
    assert!(stdout.contains("all checks passed"), "{stdout}");
}

#[test]
fn bad_requests_are_one_line_and_a_failure() {
    let (ok, _, stderr) = compact(&["--emulate", "--n", "0"]);
    assert!(!ok && stderr.trim().lines().count() == 1, "{stderr}");
    let (ok, _, stderr) = compact(&["--emulate", "--bench", "--n", "32"]);
    assert!(!ok && stderr.contains("needs a CUDA GPU"), "{stderr}");
}
