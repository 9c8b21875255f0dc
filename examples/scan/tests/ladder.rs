//! The scan program as a user runs it, on the emulated T4: the ladder's
//! sizes up to 2^20 + 7 each within its bound (2^24 takes about 14 s in a
//! release build, so the records hold that run), and the named errors.

use std::process::Command;

fn scan(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_scan")).args(args).output().expect("the scan program runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_ladder_is_scanned_within_its_bound_on_the_emulator() {
    let (ok, stdout, stderr) = scan(&["--emulate", "--n", "1,31,32,33,611,4096,1048583"]);
    assert!(ok, "{stdout}{stderr}");
    for n in ["1", "31", "32", "33", "611", "4096", "1048583"] {
        let row = stdout.lines().find(|l| l.split_whitespace().next() == Some(n)).unwrap_or_else(|| panic!("no row for {n}: {stdout}"));
        assert!(row.ends_with("pass"), "{row}");
    }
    assert!(stdout.contains("160 blocks/SM") || stdout.contains("4 blocks/SM x 40 SMs = 160"), "{stdout}");
    assert!(stdout.contains("all checks passed"), "{stdout}");
}

/// The kernel that reads its input once: on the emulated T4 it holds 40
/// blocks of 12,288 floats on chip (491,520 in all), so 491,521 floats
/// take two rounds and 2^20 + 7 three.
#[test]
fn the_scan_that_reads_once_passes_the_ladder_in_one_round_and_in_three() {
    let (ok, stdout, stderr) = scan(&["--emulate", "--once", "--n", "1,33,4096,491521,1048583"]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.starts_with("inclusive_scan_once on") && stdout.contains("at most 1 block/SM x 40 SMs = 40"), "{stdout}");
    for n in ["1", "33", "4096", "491521", "1048583"] {
        let row = stdout.lines().find(|l| l.split_whitespace().next() == Some(n)).unwrap_or_else(|| panic!("no row for {n}: {stdout}"));
        assert!(row.ends_with("pass") && row.contains("equal"), "{row}");
    }
}

/// The one-pass kernel (decoupled look-back, no grid barrier): one block
/// per tile of 4,096 floats, so 2^20 + 7 is 257 tiles, each waiting on the
/// tiles before it (with a worker per core, blocks run at once, and a
/// block polls a status that another worker's block publishes).
#[test]
fn the_look_back_scan_passes_the_ladder() {
    for kernel in ["lookback"] {
        let (ok, stdout, stderr) = scan(&["--emulate", "--kernel", kernel, "--n", "1,33,4096,4097,8192,611,1048583"]);
        assert!(ok, "{stdout}{stderr}");
        assert!(stdout.starts_with("cg_algorithms::inclusive_scan on"), "{stdout}");
        for (n, tiles) in [("1", "1"), ("33", "1"), ("4096", "1"), ("4097", "2"), ("8192", "2"), ("611", "1"), ("1048583", "257")] {
            let row = stdout.lines().find(|l| l.split_whitespace().next() == Some(n)).unwrap_or_else(|| panic!("no row for {n}: {stdout}"));
            assert!(row.split_whitespace().nth(1) == Some(tiles) && row.ends_with("pass") && row.contains("equal"), "{row}");
        }
    }
}

#[test]
fn bad_requests_are_one_line_and_a_failure() {
    let (ok, _, stderr) = scan(&["--emulate", "--n", "0"]);
    assert!(!ok && stderr.trim().lines().count() == 1, "{stderr}");
    let (ok, _, stderr) = scan(&["--emulate", "--bench", "--n", "32"]);
    assert!(!ok && stderr.contains("needs a CUDA GPU"), "{stderr}");
}
