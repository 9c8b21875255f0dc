//! The command line as a user meets it: bad input is one clear line and a
//! non-zero exit, never a panic.

use std::process::{Command, Output};

fn host(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_host")).args(args).env_remove("RUST_BACKTRACE").output().expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_flags_exit_2_with_the_reason_and_no_panic() {
    for (args, needle) in [
        (&["--n", "-5"][..], "'-5'"),
        (&["--n", "lots"], "'lots'"),
        (&["--block", "0"], "multiple of 32"),
        (&["--block", "48"], "multiple of 32"),
        (&["--block", "4096"], "multiple of 32"),
        (&["--runs", "0"], "--runs"),
        (&["--device", "-1"], "'-1'"),
        (&["exercise", "--variant", "fast"], "fast"),
        (&["--frobnicate"], "--frobnicate"),
    ] {
        let o = host(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn help_explains_every_flag() {
    let o = host(&["--help"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    for flag in ["--n", "--block", "--runs", "--warmups", "--device", "--json", "exercise"] {
        assert!(out.contains(flag), "--help lacks {flag}:\n{out}");
    }
}

#[test]
fn without_a_driver_the_run_says_so_in_one_line() {
    if host::launch::raw::driver_present() {
        eprintln!("skipped: this machine has an NVIDIA driver (the GPU tests cover the run)");
        return;
    }
    for args in [&[][..], &["exercise"], &["--json"]] {
        let o = host(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: no NVIDIA driver found"), "{err}");
        assert!(o.stdout.is_empty());
    }
}
