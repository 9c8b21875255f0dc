//! The BFS as a user runs it, on the emulated T4: random graphs of several
//! sizes and degrees (more than the 8 edges one select takes, too), every
//! distance equal to the CPU's by both searches (one launch; a launch per
//! level), and the named errors.

use std::process::Command;

fn bfs(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bfs")).args(args).output().expect("the bfs program runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn every_distance_equals_the_cpus_on_the_emulator() {
    for (n, degree, seed) in [("1", "1", "1"), ("33", "1", "2"), ("5000", "3", "3"), ("3000", "19", "4"), ("16384", "8", "1")] {
        let (ok, stdout, stderr) = bfs(&["--emulate", "--n", n, "--degree", degree, "--seed", seed]);
        assert!(ok && stdout.matches("every vertex's distance equals the CPU's: pass").count() == 2, "n = {n}: {stdout}{stderr}");
        assert!(stdout.contains("one cooperative launch") && stdout.contains("a launch per level"), "{stdout}");
    }
}

#[test]
fn bad_requests_are_one_line_and_a_failure() {
    for args in [&["--emulate", "--n", "0"][..], &["--emulate", "--degree", "0"], &["--emulate", "--bench"], &["--emulate", "--rounds", "1"]] {
        let (ok, _, stderr) = bfs(args);
        assert!(!ok && stderr.trim().lines().count() == 1, "{args:?}: {stderr}");
    }
}
