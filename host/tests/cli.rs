//! The command line as a user meets it, through the debug binary: bad input
//! is one clear line and a non-zero exit, never a panic.

// The kernels the host library reaches through `host::kernels()`.
use gpu as _;
use gpu_ptx as _;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cg-lesson")).args(args).env_remove("RUST_BACKTRACE").output().expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn bad_flags_exit_2_naming_the_flag_and_no_panic() {
    for (args, needle) in [
        (&["--n", "-5"][..], "--n"),
        (&["--n", "-1"], "-1 is negative"),
        (&["--n", "lots"], "'lots'"),
        (&["--n", "18446744073709551616"], "--n"),
        (&["--threads-per-block", "0"], "--threads-per-block"),
        (&["--threads-per-block", "48"], "multiple of 32"),
        (&["--threads-per-block", "4096"], "--threads-per-block"),
        (&["--runs", "-1"], "--runs"),
        (&["--warmups", "-2"], "--warmups"),
        (&["--device", "-1"], "--device"),
        (&["--timeout-s", "-1"], "--timeout-s"),
        (&["exercise", "--variant", "fast"], "fast"),
        (&["--frobnicate"], "--frobnicate"),
        (&["--emulate", "--sms", "0"], "--sms"),
        (&["--emulate", "--sms", "-4"], "--sms"),
        (&["--emulate", "--seed", "soon"], "--seed"),
    ] {
        let o = run(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn flags_that_would_do_nothing_where_they_are_given_are_refused_with_exit_2() {
    for (args, needle) in [
        (&["--n", "5", "--threads-per-block", "1024", "exercise"][..], "--n"),
        (&["--runs", "3", "exercise"], "--runs"),
        (&["--sms", "4"], "run it on the emulator"),
        (&["--seed", "7"], "run it on the emulator"),
        (&["--emulate", "--device", "1"], "--device"),
        (&["bench", "--emulate"], "bench times a GPU"),
        (&["bench", "--sms", "4"], "--sms"),
    ] {
        let o = run(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn each_help_lists_only_the_flags_its_command_uses() {
    let lesson = stdout(&run(&["--help"]));
    for flag in ["--n", "--threads-per-block", "--runs", "--warmups", "--device", "--json", "--timeout-s", "--emulate", "--sms", "--seed", "exercise", "bench"]
    {
        assert!(lesson.contains(flag), "--help lacks {flag}:\n{lesson}");
    }
    let exercise = stdout(&run(&["exercise", "--help"]));
    for flag in ["--variant", "--emulate", "--json", "--device"] {
        assert!(exercise.contains(flag), "exercise --help lacks {flag}:\n{exercise}");
    }
    assert!(!exercise.contains("--threads-per-block") && !exercise.contains("--runs"), "{exercise}");
    let bench = stdout(&run(&["bench", "--help"]));
    for flag in ["--runs", "--max-log2", "--out", "--no-cpp"] {
        assert!(bench.contains(flag), "bench --help lacks {flag}:\n{bench}");
    }
    for flag in ["--emulate", "--sms", "--seed", "--variant"] {
        assert!(!bench.contains(flag), "bench --help lists {flag}, which bench does not use:\n{bench}");
    }
}

#[test]
fn without_a_driver_every_command_says_so_in_one_line_and_names_emulate() {
    for args in [&[][..], &["exercise"], &["--json"], &["bench"]] {
        let o = Command::new(env!("CARGO_BIN_EXE_cg-lesson")).args(args).env("CG_NO_DRIVER", "1").output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("no NVIDIA driver was found") || err.contains("no NVIDIA driver found"), "{err}");
        assert!(o.stdout.is_empty());
        if args == ["bench"] {
            // The emulator cannot time a GPU: bench says so instead of suggesting --emulate for itself.
            // This test's binary runs from target/, as `cargo run` starts it.
            assert!(err.starts_with("error: bench times a GPU") && err.contains("`cargo run --release -p host -- --emulate exercise`"), "{err}");
        } else {
            assert!(err.starts_with("error: no NVIDIA driver found") && err.contains("--emulate"), "{err}");
        }
    }
}

#[test]
fn emulate_may_come_before_the_subcommand_as_cargo_emulate_puts_it() {
    let o = run(&["--emulate", "exercise", "--variant", "zero-grid"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Exercise: single-launch sum, solver zero-grid, on emulated Tesla T4"), "{out}{}", stderr(&o));
    // `cargo emulate conjugate-gradient`, as docs/conjugate-gradient.md gives it.
    let o = run(&["--emulate", "conjugate-gradient", "--n", "1024"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && out.contains("Conjugate gradient on emulated Tesla T4") && out.contains(": pass"), "{out}{}", stderr(&o));
}

#[test]
fn flags_are_taken_before_or_after_the_subcommand() {
    // `cargo emulate trace --gpu h200` runs `cg-lesson --emulate trace --gpu h200`.
    for args in [&["--emulate", "--gpu", "h200", "occupancy"][..], &["--gpu", "h200", "--emulate", "occupancy"], &["occupancy", "--emulate", "--gpu", "h200"]] {
        let o = run(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).contains("H200"), "{args:?}: {}", stdout(&o));
    }
    let o = run(&["--emulate", "--json", "exercise", "--variant", "reference"]);
    assert!(o.status.success() && stdout(&o).trim_start().starts_with('{'), "{}", stderr(&o));
}

#[test]
fn an_unknown_subcommand_is_called_unknown_and_help_works_after_every_subcommand() {
    let o = run(&["--emulate", "frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim(),
        "error: unknown subcommand 'frobnicate': the subcommands are exercise, bench, conjugate-gradient, trace, occupancy, multi-gpu"
    );
    for sub in ["exercise", "bench", "conjugate-gradient", "trace", "occupancy", "multi-gpu"] {
        for args in [&["--emulate", sub, "--help"][..], &[sub, "--help"]] {
            let o = run(args);
            // The repository's build, as `cargo run` runs it, spells its usage that way.
            assert!(o.status.success() && stdout(&o).contains(&format!("Usage: cargo run --release -p host -- {sub}")), "{args:?}: {}", stderr(&o));
        }
    }
}

#[test]
fn flags_in_the_wrong_place_get_the_command_to_write_instead() {
    for (args, expected) in [
        (&["--emulate", "bench"][..], "error: bench times a GPU, so it needs one"),
        (&["--gpu", "h200"], "error: --gpu describes the emulated GPU: run it on the emulator (`cargo run --release -p host -- --emulate --gpu h200`)"),
        (
            &["--threads-per-block", "2048"],
            "error: invalid value '2048' for '--threads-per-block <THREADS_PER_BLOCK>': 2048 is more than 1024, the most threads a block can have",
        ),
        (&["exercise", "--n", "5", "--emulate"], "error: the exercise takes no --n: it runs the lesson's nine sizes"),
        (&["bench", "--emulate"], "error: bench times a GPU, so it needs one"),
    ] {
        let o = run(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with(expected) && err.lines().count() == 1, "{args:?}: {err}");
    }
}

#[test]
fn a_double_dash_as_the_cargo_run_habit_writes_it_is_taken() {
    // `cargo emulate -- --n 611` reaches the program as `--emulate -- --n 611`.
    let o = run(&["--emulate", "--", "--n", "611"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("n = 611 floats"), "{}", stdout(&o));
}

#[test]
fn a_cuda_device_asked_of_the_emulator_is_refused_in_the_learners_words() {
    // This binary is the repository's build: the learner typed --emulate.
    let o = run(&["--emulate", "--device", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim(),
        "error: --device picks a CUDA GPU, and --emulate runs on the emulated one: give one or the other (`cargo run --release -p host -- --device 3`, or `cargo run --release -p host -- --emulate`)"
    );
}

#[test]
fn every_hint_pastes_under_the_invocation_in_use() {
    // No driver: the learner's own command, on the emulator, as this build runs it.
    let o = Command::new(env!("CARGO_BIN_EXE_cg-lesson")).args(["exercise", "--variant", "reference"]).env("CG_NO_DRIVER", "1").output().unwrap();
    let err = stderr(&o);
    assert!(err.contains("(`cargo run --release -p host -- --emulate exercise --variant reference`)"), "{err}");
    // `cargo run --release -p host -- --emulate`: the next step, in the same words.
    let o = run(&["--emulate", "--n", "611"]);
    let next = stdout(&o).lines().find(|l| l.starts_with("Next:")).map(str::to_string).unwrap_or_default();
    assert!(next.contains("(`cargo run --release -p host -- --emulate conjugate-gradient`, docs/conjugate-gradient.md)"), "{next}");
    // Something only a GPU does, asked of the emulator: the command for a GPU.
    let o = run(&["--emulate", "conjugate-gradient", "--bench"]);
    let err = stderr(&o);
    assert!(
        err.trim().ends_with("needs a CUDA GPU, and this run is on the emulated one: on a GPU, `cargo run --release -p host -- conjugate-gradient --bench`"),
        "{err}"
    );
}

#[test]
fn a_bad_block_size_names_the_rule_that_failed_and_quotes_no_number() {
    for (value, rule) in [
        ("2048", "2048 is more than 1024, the most threads a block can have"),
        ("48", "48 is not a multiple of 32: a block is whole warps of 32 threads"),
        ("0", "0 is fewer than 32: a block is at least one warp, 32 threads"),
        ("x", "'x' is not a whole number of threads"),
    ] {
        let o = run(&["--emulate", "--threads-per-block", value]);
        let err = stderr(&o);
        let ours = err.split("<THREADS_PER_BLOCK>': ").nth(1).unwrap_or_default();
        assert!(ours.starts_with(rule), "{value}: {err}");
    }
}

#[test]
fn a_count_of_one_reads_in_the_singular() {
    // Blocks of 1024 on the T4's SMs of 1024 threads: one block per SM.
    let o = run(&["--emulate", "--n", "611", "--threads-per-block", "1024"]);
    let out = stdout(&o);
    assert!(out.contains("reduce_cooperative_grid    1 block/SM x 40 SMs = 40"), "{out}");
    assert!(out.contains("would use 1 block\n") && out.contains("run 1 block, the same grid"), "{out}");
    let one_then_plural = out
        .split(|c: char| !c.is_ascii_alphanumeric() && c != ' ')
        .any(|w| w.split(' ').collect::<Vec<_>>().windows(2).any(|p| p[0] == "1" && p[1] == "blocks"));
    assert!(!one_then_plural, "{out}");
}

#[test]
fn sizes_past_what_memory_can_count_are_one_line_and_exit_1() {
    for n in ["18446744073709551615", "18446744073709551614", "18446744073709550592", "4611686018427387904", "4611686018427387903", "4611686018427387905"] {
        let o = run(&["--emulate", "--n", n]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "--n {n}: {err}");
        assert_eq!(err.lines().count(), 1, "--n {n}: {err}");
        assert!(err.contains(&format!("--n {n} is too large")) || err.contains("use a smaller --n"), "--n {n}: {err}");
        assert!(!err.contains("panicked"), "--n {n}: {err}");
    }
}

#[test]
fn an_input_larger_than_the_hosts_memory_is_one_line_before_anything_is_allocated() {
    // 2^38 floats, 1 TiB, on the emulator, whose device memory is the
    // host's: refused at once, where it once grew to 23 GB and was killed.
    let start = std::time::Instant::now();
    let o = run(&["--emulate", "--n", "274877906944"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(stdout(&o).is_empty(), "nothing printed before the error: {}", stdout(&o));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("use a smaller --n"), "{err}");
    assert!(start.elapsed() < std::time::Duration::from_secs(5), "{:?}", start.elapsed());
}

#[test]
fn an_emulated_device_that_cannot_hold_the_block_is_one_line_naming_the_limit() {
    for args in [&["--emulate", "--threads-per-sm", "128"][..], &["exercise", "--emulate", "--sms", "1", "--threads-per-sm", "32"]] {
        let o = run(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("does not fit on an SM of this device: limited by threads per SM"), "{args:?}: {err}");
    }
}

/// Validates `json` against the schema in docs/schema/`schema`.
fn assert_matches_schema(json: &str, schema: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema").join(schema);
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let value: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}):\n{json}"));
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator.iter_errors(&value).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{schema:?} refuses the output:\n{}", errors.join("\n"));
    let text = json.to_string();
    for rust in ["\"Ok\"", "\"Err\"", "Some(", "None", "4294967295"] {
        assert!(!text.contains(rust), "Rust in the JSON: {rust}");
    }
}

#[test]
fn json_output_follows_its_documented_schema() {
    for args in [&["--emulate", "--n", "611", "--json"][..], &["--emulate", "--n", "0", "--json"], &["--emulate", "--gpu", "h200", "--n", "611", "--json"]] {
        let o = run(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert_matches_schema(&stdout(&o), "lesson.schema.json");
    }
    // On the emulated T4 each runs its ladder twice, the second time on the
    // larger device, whose report nests in the first.
    for variant in ["reference", "partials-if"] {
        let o = run(&["exercise", "--emulate", "--json", "--variant", variant]);
        assert!(stderr(&o).is_empty() || !o.status.success(), "{variant}: {}", stderr(&o));
        assert_matches_schema(&stdout(&o), "exercise.schema.json");
    }
}

#[test]
fn non_finite_numbers_are_strings_in_the_json() {
    let r = host::reference::check(f32::NAN, 1.0, f64::INFINITY);
    let v: serde_json::Value = serde_json::from_str(&host::json::to_string(&r)).unwrap();
    assert_eq!((v["value"].as_str(), v["error"].as_str(), v["bound"].as_str()), (Some("NaN"), Some("NaN"), Some("inf")));
}

#[test]
fn bench_json_carries_each_targets_interval_as_its_schema_says() {
    use host::bench::paired::PairedRatio;
    let report = host::bench::BenchReport {
        device: "test".into(),
        driver: None,
        runs: 3,
        warmups: 1,
        threads_per_block: 256,
        points: vec![],
        cpp: "skipped: --no-cpp".into(),
        sweep_n: 1024,
        grid_sweep: vec![],
        block_sweep: vec![],
        launch_costs: vec![],
        rounds: 6,
        round_runs: 10,
        barrier: vec![],
        barrier_nvidia: None,
        clusters: None,
        paired: vec![
            PairedRatio::new("t", "a", "b", 1024, 1.00, vec![0.95, 0.96, 0.94, 0.95, 0.97, 0.95]),
            PairedRatio::new("t", "a", "b", 2048, 1.00, vec![0.98, 1.03, 0.99, 1.02, 1.0, 1.01]),
        ],
    };
    let text = host::json::to_string(&report);
    assert_matches_schema(&text, "bench.schema.json");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let p = &v["paired"][1];
    assert_eq!(p["verdict"], "not-resolved");
    assert!(p["rounds_needed"].as_u64().unwrap() > 6, "{p}");
    assert!(p["ci_low"].as_f64().unwrap() <= p["median"].as_f64().unwrap());
    let lines = host::bench::targets(&report);
    assert_eq!(lines.len(), 1);
    assert!(lines[0].starts_with("NOT RESOLVED: t (") && lines[0].contains("rounds would resolve it"), "{}", lines[0]);
}

#[test]
fn conjugate_gradient_bench_json_follows_its_schema_and_the_recorded_runs_do_too() {
    use host::conjugate_gradient::{BenchReport, BenchRow, Path, PathTimes, Ratio};
    let times = |path: Path, registers_per_thread: Option<u32>| PathTimes {
        path,
        blocks: 4,
        registers_per_thread,
        iterations: 6,
        median_ms: 0.1,
        median_us_per_iteration: 16.7,
        rounds_ms: vec![0.1, 0.11],
        threads_per_block: 256,
        fallback: (path == Path::OnChip).then(|| "N = 4194304 in 132 blocks is 31776 rows a block: ...: solved by the CUDA graph".to_string()),
        on_chip: None,
    };
    let report = BenchReport {
        device: "test".into(),
        driver: None,
        rounds: 2,
        threads_per_block: 256,
        tolerance: 1e-5,
        max_iterations: 10_000,
        matrix_seed: 1,
        cpp_twin_left_out: Some("--no-cpp".into()),
        rows: vec![BenchRow {
            n: 1024,
            paths: vec![times(Path::LaunchPerStep, None), times(Path::Graph, None), times(Path::Persistent, Some(32)), times(Path::OnChip, None)],
            ratios: vec![Ratio { of: Path::Persistent, to: Path::Graph, median: 0.8, low: 0.75, high: 0.85 }],
            copy_ms: Some(0.5),
            values_per_row: 3.0,
        }],
    };
    let text = host::json::to_string(&report);
    assert_matches_schema(&text, "conjugate-gradient.schema.json");
    // The schema is not a rubber stamp: a row without its ratios is refused.
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["rows"][0].as_object_mut().unwrap().remove("ratios");
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema/conjugate-gradient.schema.json")).unwrap(),
    )
    .unwrap();
    assert!(!jsonschema::validator_for(&schema).unwrap().is_valid(&v));
    let records = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../records");
    let mut recorded = 0;
    for dir in std::fs::read_dir(&records).unwrap() {
        let dir = dir.unwrap().path();
        // A record's raw output is compressed (records/README.md), so the
        // runs are read through gzip.
        let file = dir.join("conjugate-gradient.json.gz");
        if file.exists() {
            let out = std::process::Command::new("gzip").arg("-dc").arg(&file).output().expect("gzip runs");
            assert!(out.status.success(), "gzip -dc {}", file.display());
            assert_matches_schema(&String::from_utf8(out.stdout).unwrap(), "conjugate-gradient.schema.json");
            recorded += 1;
        }
    }
    assert!(recorded >= 4, "{recorded} recorded runs of the benchmark (records/*/conjugate-gradient.json.gz), where there were 4");
}
