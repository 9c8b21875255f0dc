//! Compiles this crate to PTX with rustc's `nvptx64-nvidia-cuda` target (the
//! job rust-cuda's `cuda_builder` does): the module the lesson runs, a
//! traced twin, and an sm_90 module that adds the `#[kernel(cluster)]`
//! kernels, built into `OUT_DIR`, where `kernels/mod.rs`
//! embeds and registers them; then, where `ptxas` is found, asks it how many registers
//! each kernel takes on the lesson's T4 (sm_75), for the emulated occupancy.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio, exit};

/// The PTX target architecture unless `GPU_PTX_ARCH` names another.
const DEFAULT_ARCH: &str = "sm_70";
/// The architecture of the module with the cluster kernels (compute capability 9.0).
const SM90: &str = "sm_90";
const TOOLCHAIN: &str = "nightly-2026-05-20";

fn main() {
    // The nested build below compiles this crate for the GPU, which runs this
    // script again: there is nothing to do then.
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("nvptx64") {
        return;
    }
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let arch = std::env::var("GPU_PTX_ARCH").unwrap_or_else(|_| DEFAULT_ARCH.to_string());
    for watched in ["src", "core/src", "macros/src"] {
        println!("cargo:rerun-if-changed={}", dir.join(watched).display());
    }
    println!("cargo:rerun-if-env-changed=GPU_PTX_ARCH");
    println!("cargo:rerun-if-env-changed=PTXAS");
    if !arch.starts_with("sm_") {
        fail(&format!("GPU_PTX_ARCH={arch} is not a PTX target"), "set it to an architecture such as sm_70, sm_80 or sm_90, or unset it");
    }
    if std::env::var_os("CARGO_FEATURE_EMULATOR_ONLY").is_some() {
        // `cargo emulate`: the emulator runs the kernels on the CPU and needs no PTX.
        for name in ["gpu.ptx", "gpu_traced.ptx", "gpu_sm90.ptx"] {
            write_or_fail(&out_dir.join(name), "");
        }
        write_or_fail(&out_dir.join("ptxas_sm75.rs"), &format!("Err({:?})", "built for the emulator only (cargo emulate): no PTX"));
        return;
    }
    // This crate's features that change the kernels, passed on to the GPU builds.
    let features: Vec<&str> = [("CARGO_FEATURE_BARRIER_TIMEOUT", "barrier-timeout"), ("CARGO_FEATURE_PROBES", "probes")]
        .into_iter()
        .filter(|(var, _)| std::env::var_os(var).is_some())
        .map(|(_, feature)| feature)
        .collect();
    let features = &features[..];
    // The sm_90 module (every kernel, the cluster ones too) builds in a
    // folder of its own while the other two build one after the other in
    // theirs: `core` for the GPU is compiled once per folder and shared (the
    // features differ only for this crate).
    let sm90 = spawn(&dir, &out_dir.join("nvptx-sm90"), features, SM90);
    let traced: Vec<&str> = features.iter().copied().filter(|f| *f == "probes").chain(["trace"]).collect();
    let builds = [(features, "gpu.ptx"), (&traced[..], "gpu_traced.ptx")];
    let target_dir = out_dir.join("nvptx");
    for (features, name) in builds {
        let output = spawn(&dir, &target_dir, features, &arch).and_then(|c| c.wait_with_output());
        take_ptx(output, &target_dir, &out_dir.join(name));
    }
    take_ptx(sm90.and_then(|c| c.wait_with_output()), &out_dir.join("nvptx-sm90"), &out_dir.join("gpu_sm90.ptx"));
    let registers = ptxas_sm75(&dir, &out_dir.join("gpu.ptx"));
    let text = match registers {
        Ok(report) => format!("Ok({report:?})"),
        Err(why) => format!("Err({why:?})"),
    };
    write_or_fail(&out_dir.join("ptxas_sm75.rs"), &text);
}

fn write_or_fail(path: &Path, text: &str) {
    if let Err(e) = std::fs::write(path, text) {
        fail(&format!("could not write {}: {e}", path.display()), "check the build folder's permissions");
    }
}

/// Copies the PTX a finished GPU build left in `target_dir` to `to`, or fails naming the fix.
fn take_ptx(output: std::io::Result<std::process::Output>, target_dir: &Path, to: &Path) {
    {
        let output = match output {
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
        let ptx = target_dir.join("nvptx64-nvidia-cuda/release/deps/gpu.s");
        let text = match std::fs::read_to_string(&ptx) {
            Ok(text) => text,
            Err(e) => fail(&format!("the GPU build left no PTX at {}: {e}", ptx.display()), "run `cargo clean` and build again"),
        };
        match with_launch_bounds(&text) {
            Ok(text) => write_or_fail(to, &text),
            Err(why) => fail(&format!("launch bounds: {why}"), "report this: `#[kernel(launch_bounds(...))]` and gpu/build.rs (with_launch_bounds) disagree"),
        }
    }
}

/// The PTX with each `#[kernel(launch_bounds(max, min))]` applied: the
/// macro's global `__launch_bounds__<name>` (two little-endian u32, which
/// the PTX lists as bytes, trailing zeros left out) is removed, and every
/// entry of that kernel (`name`, `name__watched`) gets `.maxntid max, 1, 1`
/// and `.minnctapersm min` between its parameters and its body, where
/// nvcc writes `__launch_bounds__`.
fn with_launch_bounds(ptx: &str) -> Result<String, String> {
    const PREFIX: &str = ".visible .global .align 4 .b8 __launch_bounds__";
    let mut bounds = Vec::new();
    let mut kept = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        let Some(rest) = line.strip_prefix(PREFIX) else {
            kept.push_str(line);
            continue;
        };
        let bad = || format!("unreadable line: {}", line.trim_end());
        let (name, rest) = rest.split_once("[8]").ok_or_else(bad)?;
        let list = rest.split_once('{').and_then(|(_, r)| r.split_once('}')).map(|(l, _)| l).ok_or_else(bad)?;
        let mut bytes = [0u8; 8];
        for (i, b) in list.split(',').enumerate() {
            *bytes.get_mut(i).ok_or_else(bad)? = b.trim().parse().map_err(|_| bad())?;
        }
        let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        bounds.push((name.to_string(), word(0), word(4)));
    }
    for (name, max, min) in bounds {
        let mut directives = format!(".maxntid {max}, 1, 1\n");
        if min > 0 {
            directives.push_str(&format!(".minnctapersm {min}\n"));
        }
        let mut found = 0;
        for entry in [name.clone(), format!("{name}__watched")] {
            let Some(start) = kept.find(&format!(".entry {entry}(\n")) else { continue };
            let body = start + kept[start..].find("\n)\n{").ok_or_else(|| format!("no body after .entry {entry}"))? + 3;
            kept.insert_str(body, &directives);
            found += 1;
        }
        if found == 0 {
            return Err(format!("no .entry {name} for its launch bounds"));
        }
    }
    // A marker this pass did not read (LLVM printed it another way) would
    // leave a kernel without the bounds its source declares.
    if let Some(line) = kept.lines().find(|l| l.contains("__launch_bounds__")) {
        return Err(format!("a marker was left unread, so its kernel would lose its bounds: {}", line.trim()));
    }
    Ok(kept)
}

/// Starts `cargo rustc` building this crate to PTX with `features`, into `target_dir`.
fn spawn(dir: &Path, target_dir: &Path, features: &[&str], arch: &str) -> std::io::Result<std::process::Child> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(dir)
        .args(["rustc", "--release", "--lib", "--crate-type", "cdylib", "--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
        .args(if features.is_empty() { Vec::new() } else { vec!["--features".to_string(), features.join(",")] })
        .arg("--target-dir")
        .arg(target_dir)
        .args(["--config", "profile.release.panic=\"abort\""])
        .args(["--config", "profile.release.lto=\"fat\""])
        .args(["--config", "profile.release.codegen-units=1"])
        .args(["--config", "profile.release.opt-level=3"])
        .args(["--config", "profile.release.incremental=false"])
        .args(["--", "--emit=asm", "-Zno-link"])
        .arg(format!("-Ctarget-cpu={arch}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET", "RUSTC_WORKSPACE_WRAPPER"] {
        cmd.env_remove(var);
    }
    cmd.spawn()
}

/// What `ptxas -v -arch=sm_75` says of the PTX (its registers per kernel),
/// or why it could not be asked.
fn ptxas_sm75(dir: &Path, ptx: &Path) -> Result<String, String> {
    let installed = dir.join("../target/ptxas-pkg/nvidia/cuda_nvcc/bin/ptxas");
    let ptxas = match std::env::var_os("PTXAS") {
        Some(p) => PathBuf::from(p),
        None if installed.exists() => installed,
        None => PathBuf::from("ptxas"),
    };
    let output = Command::new(&ptxas)
        .args(["-v", "-arch=sm_75", "-o", "/dev/null"])
        .arg(ptx)
        .output()
        .map_err(|e| format!("no ptxas ({}: {e}); `bash scripts/test.sh` installs one, or set PTXAS", ptxas.display()))?;
    if !output.status.success() {
        return Err(format!("ptxas failed: {}", String::from_utf8_lossy(&output.stderr).lines().next().unwrap_or("")));
    }
    Ok(String::from_utf8_lossy(&output.stderr).into_owned())
}

fn fail(what: &str, fix: &str) -> ! {
    eprintln!("error: {what}\n  to fix: {fix}");
    exit(1)
}
