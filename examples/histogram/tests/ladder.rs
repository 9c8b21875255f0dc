//! The histogram as a user runs it, on the emulated T4: the ladder's sizes
//! up to 2^20 + 7, uniform and constant bytes, each bin counted right, and
//! the named errors.

use std::process::Command;

fn histogram(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_histogram")).args(args).output().expect("the histogram program runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_ladder_is_counted_right_on_uniform_and_constant_bytes_on_the_emulator() {
    for way in [&["--emulate"][..], &["--emulate", "--library"]] {
        ladder_passes(way);
    }
}

/// The ladder run with `args`: both inputs at every size pass.
fn ladder_passes(args: &[&str]) {
    let (ok, stdout, stderr) = histogram(args);
    assert!(ok, "{stdout}{stderr}");
    for n in ["1", "3", "4", "5", "611", "4097", "1048583"] {
        let rows: Vec<&str> = stdout.lines().filter(|l| l.split_whitespace().next() == Some(n)).collect();
        assert_eq!(rows.len(), 2, "uniform and constant for {n}: {stdout}");
        assert!(rows.iter().all(|r| r.ends_with("pass")), "{rows:?}");
    }
    assert!(stdout.contains("all checks passed"), "{stdout}");
}

#[test]
fn bad_requests_are_one_line_and_a_failure() {
    let (ok, _, stderr) = histogram(&["--emulate", "--n", "0"]);
    assert!(!ok && stderr.trim().lines().count() == 1, "{stderr}");
    let (ok, _, stderr) = histogram(&["--emulate", "--bench", "--n", "32"]);
    assert!(!ok && stderr.contains("needs a CUDA GPU"), "{stderr}");
}
