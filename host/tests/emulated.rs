//! The lesson and the exercise on the emulated device: the same kernels and
//! host code, no GPU (these run in CI).

use host::cli::Variant;
use host::device::Gpu;
use host::exercise::{self, LADDER};
use host::lesson::{self, LessonConfig};
use std::process::Command;

fn emulated() -> Gpu {
    Gpu::emulated(gpu::emu::Device::T4_LIKE)
}

#[test]
fn the_lesson_passes_every_check_on_the_emulator() {
    let gpu = emulated();
    for (n, threads) in [(100_003, 256), (611, 64), (0, 256)] {
        let r = lesson::run(&gpu, LessonConfig { n, threads, runs: 2, warmups: 1 }).unwrap();
        for c in &r.checks {
            assert!(c.pass, "n = {n}, block {threads}: {} ({})", c.name, c.detail);
        }
        // The emulator has no driver whose context remembers a cooperative launch.
        let ordinary: Vec<bool> = r.probes.iter().filter(|p| p.launch.starts_with("ordinary")).map(|p| p.result.as_ref().unwrap().is_valid).collect();
        assert_eq!(ordinary, vec![false, false]);
    }
}

#[test]
fn the_exercise_and_its_mistakes_on_the_emulator() {
    let gpu = emulated();
    // CI runs the ladder up to 4,194,915; `host exercise --emulate` runs all nine.
    let sizes = &LADDER[..8];
    let capacity = 16; // 4 blocks of 256 per SM, 4 SMs
    for (variant, expected) in [
        (Variant::Solve, vec![]),
        (Variant::GridFromN, sizes.iter().copied().filter(|&n| n.div_ceil(256) > capacity).collect()),
        (Variant::ZeroGrid, vec![0]),
        (Variant::BoundsBug, vec![1, 31, 611, 4_194_915]),
    ] {
        let r = exercise::run_sizes(&gpu, variant, sizes).unwrap();
        let failing: Vec<u64> = r.cases.iter().filter(|c| !c.pass).map(|c| c.n).collect();
        assert_eq!(failing, expected, "{variant:?}");
    }
}

fn host(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_host")).args(args).env_remove("RUST_BACKTRACE").output().expect("the binary runs")
}

#[test]
fn host_emulate_runs_the_lesson_and_the_whole_exercise_without_a_gpu() {
    let lesson = host(&["--emulate", "--n", "40960", "--runs", "2", "--warmups", "1"]);
    let out = String::from_utf8_lossy(&lesson.stdout);
    assert!(lesson.status.success(), "{out}\n{}", String::from_utf8_lossy(&lesson.stderr));
    assert!(out.contains("emulated GPU on the CPU") && out.contains("not GPU timings") && out.ends_with("all checks passed\n"), "{out}");
    let ex = host(&["exercise", "--emulate"]);
    let out = String::from_utf8_lossy(&ex.stdout);
    assert!(ex.status.success(), "{out}");
    assert!(out.contains("  67108864 ") && out.ends_with("all checks passed\n"), "{out}");
}

#[test]
fn bench_refuses_the_emulator_in_one_line() {
    let o = host(&["bench", "--emulate"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(err.trim(), "error: bench measures a GPU, so it does not run on the emulated one: drop --emulate");
}
