//! Compiles the `gpu` crate to PTX with rustc's `nvptx64-nvidia-cuda` target
//! (the job rust-cuda's `cuda_builder` does) and leaves it in `OUT_DIR/gpu.ptx`
//! for the host to embed.

use std::path::{Path, PathBuf};
use std::process::{Command, exit};

/// The PTX target architecture unless `GPU_PTX_ARCH` names another.
const DEFAULT_ARCH: &str = "sm_70";
const TOOLCHAIN: &str = "nightly-2026-05-20";

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let gpu_dir = manifest.join("../gpu");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let arch = std::env::var("GPU_PTX_ARCH").unwrap_or_else(|_| DEFAULT_ARCH.to_string());
    println!("cargo:rerun-if-changed={}", gpu_dir.display());
    println!("cargo:rerun-if-env-changed=GPU_PTX_ARCH");
    let barrier_timeout = std::env::var_os("CARGO_FEATURE_BARRIER_TIMEOUT").is_some();

    if !arch.starts_with("sm_") {
        fail(&format!("GPU_PTX_ARCH={arch} is not a PTX target"), "set it to an architecture such as sm_70, sm_80 or sm_90, or unset it");
    }
    // The module the lesson runs, and a traced twin of it for `cg-lesson
    // trace` (gpu::trace), built side by side.
    let features: &[&str] = if barrier_timeout { &["barrier-timeout"] } else { &[] };
    let builds = [(features, "nvptx", "gpu.ptx"), (&["trace"][..], "nvptx-traced", "gpu_traced.ptx")];
    let children: Vec<_> = builds.iter().map(|(features, dir, _)| spawn(&gpu_dir, &out_dir.join(dir), features, &arch)).collect();
    for (child, (_, dir, name)) in children.into_iter().zip(builds) {
        let output = match child.and_then(|c| c.wait_with_output()) {
            Ok(output) => output,
            Err(e) => fail(&format!("could not run cargo to build the GPU crate: {e}"), "check that cargo is on PATH"),
        };
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            eprintln!("{stderr}");
            let fix = if stderr.contains("rust-src") || stderr.contains("library/Cargo.lock") {
                format!("rustup component add rust-src --toolchain {TOOLCHAIN}")
            } else if stderr.contains("-Z") && stderr.contains("nightly") {
                format!("rustup toolchain install {TOOLCHAIN} --profile minimal --component rust-src")
            } else {
                "fix the error above in gpu/ and build again".to_string()
            };
            fail("building the GPU crate for nvptx64-nvidia-cuda failed", &fix);
        }
        let ptx = out_dir.join(dir).join("nvptx64-nvidia-cuda/release/deps/gpu.s");
        copy(&ptx, &out_dir.join(name));
        let text = std::fs::read_to_string(&ptx).unwrap_or_default();
        for name in gpu::kernels::ALL_NAMES {
            if !text.contains(&format!(".entry {name}(")) {
                fail(
                    &format!("the PTX has no entry `{name}`"),
                    "keep every kernel in gpu::kernels::ALL_NAMES `#[kernel]`, whose entry is `#[unsafe(no_mangle)]`",
                );
            }
        }
    }
}

/// Starts `cargo rustc` building `gpu/` to PTX with `features`, into `target_dir`.
fn spawn(gpu_dir: &Path, target_dir: &Path, features: &[&str], arch: &str) -> std::io::Result<std::process::Child> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(gpu_dir)
        .args(["rustc", "--release", "--lib", "--crate-type", "cdylib", "--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
        .args(if features.is_empty() { Vec::new() } else { vec!["--features".to_string(), features.join(",")] })
        .arg("--target-dir")
        .arg(target_dir)
        .args(["--config", "profile.release.panic=\"abort\""])
        .args(["--config", "profile.release.lto=\"fat\""])
        .args(["--config", "profile.release.codegen-units=1"])
        .args(["--config", "profile.release.opt-level=3"])
        .args(["--", "--emit=asm", "-Zno-link"])
        .arg(format!("-Ctarget-cpu={arch}"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for var in ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET", "RUSTC_WORKSPACE_WRAPPER"] {
        cmd.env_remove(var);
    }
    cmd.spawn()
}

fn copy(from: &Path, to: &Path) {
    if let Err(e) = std::fs::copy(from, to) {
        fail(&format!("the GPU build left no PTX at {}: {e}", from.display()), "run `cargo clean` and build again");
    }
}

fn fail(what: &str, fix: &str) -> ! {
    eprintln!("error: {what}\n  to fix: {fix}");
    exit(1)
}
