//! Compiles a Rust kernel crate to PTX from its own `build.rs`, with rustc's
//! `nvptx64-nvidia-cuda` target: the job `cuda_builder` does for rust-cuda
//! and `nvcc` does for a `.cu` file, for kernels written with
//! [`cg-kernel`](https://docs.rs/cg-kernel).
//!
//! The kernel crate is built twice: for the host, as any crate (its kernels
//! are then functions the emulator runs, and definitions the launcher
//! launches through), and, from `build.rs`, for the GPU. This crate does the
//! second build: a nested `cargo rustc` of the same crate for
//! `nvptx64-nvidia-cuda` (`-Zbuild-std=core`, fat LTO, emitted as assembly,
//! not linked), which gives one self-contained PTX module. Then it
//! - applies each `#[kernel(launch_bounds(max, min))]` as `.maxntid` and
//!   `.minnctapersm`, where nvcc writes `__launch_bounds__`;
//! - optionally builds a traced module (the crate's feature `trace`) and an
//!   sm_90 module (for `#[kernel(cluster)]` kernels);
//! - runs `ptxas -v` on the module where `ptxas` is found (`PTXAS`, then
//!   `PATH`, then `$CUDA_PATH/bin`), which checks that it assembles and
//!   reports each kernel's registers for the emulator's occupancy; where
//!   none is found it says so in a build warning;
//! - with the same `ptxas`, at the same time, assembles the module for
//!   sm_90 (nvcc's `-gencode arch=compute_70,code=sm_90`), which the
//!   launcher loads on a device of compute capability 9.0 (an H100 or H200)
//!   instead of having the driver JIT-compile the PTX;
//! - writes the modules into `OUT_DIR`, and beside them one Rust file that
//!   is the whole `cg_kernel::kernels::Ptx` value (each module by
//!   `include_str!` of its path, and what `ptxas` said), whose path it hands
//!   the crate's compilation as `CG_KERNEL_PTX`: `cg_kernel::ptx!()` in the
//!   kernel crate is `include!(env!("CG_KERNEL_PTX"))`, so that the host
//!   side finds the PTX in the program. The file names are this crate's
//!   alone.
//!
//! A kernel crate's whole `build.rs` is `fn main()` with this one line in it:
//! ```no_run
//! cg_builder::Builder::new().build();
//! ```
//! and its `lib.rs` says `cg_kernel::ptx!();` once. A crate feature named
//! `emulator-only` makes the builder skip the GPU build (empty modules): the
//! emulator needs no PTX, and the edit loop is faster without it.
//!
//! Needs the nightly toolchain the kernels need (the crate's
//! `rust-toolchain.toml`, with the `rust-src` component for `-Zbuild-std`).
#![deny(missing_docs)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod cooperative;
mod launch_bounds;

pub use launch_bounds::with_launch_bounds;

/// The environment variable that holds, while the kernel crate compiles,
/// the path of the Rust file `cg_kernel::ptx!()` includes.
const PTX_ENV: &str = "CG_KERNEL_PTX";

/// The files the builder writes into `OUT_DIR`, by name: named here alone
/// (`cg_kernel::ptx!()` finds them through [`PTX_ENV`]).
mod files {
    /// The module loaded on every GPU: every kernel but the cluster ones.
    pub const PLAIN: &str = "cg_ptx_plain.ptx";
    /// The same kernels built with the crate's feature `trace` (empty unless asked for).
    pub const TRACED: &str = "cg_ptx_traced.ptx";
    /// Every kernel for sm_90, cluster kernels included (empty unless asked for).
    pub const SM90: &str = "cg_ptx_sm90.ptx";
    /// The plain module assembled by `ptxas` for sm_90, where ptxas is
    /// found: what an H100 or H200 loads instead of JIT-compiling the PTX.
    pub const CUBIN_SM90: &str = "cg_sm90.cubin";
    /// `Ptx { plain, traced, sm90, cubin_sm90, ptxas_sm75 }`, as Rust: the
    /// modules above by `include_str!` (`include_bytes!`) of their paths,
    /// and what `ptxas -v` said.
    pub const PTX_RS: &str = "cg_kernel_ptx.rs";
}

/// The PTX architecture of the plain module unless [`Builder::arch`] names
/// another: compute capability 7.0, the oldest with independent thread
/// scheduling, which cooperative groups' warp tiles assume.
pub const DEFAULT_ARCH: &str = "sm_70";
/// The architecture the plain module is assembled for where ptxas is found
/// (the H100's and the H200's compute capability).
pub const CUBIN_ARCH: &str = "sm_90";
/// The architecture `ptxas -v` is asked about (the emulator's default
/// device, a T4, is compute capability 7.5).
pub const REPORT_ARCH: &str = "sm_75";
const SM90: &str = "sm_90";

/// One GPU build of the calling crate, configured then run by [`Builder::build`].
#[derive(Clone, Debug)]
pub struct Builder {
    dir: PathBuf,
    out_dir: PathBuf,
    lib_name: String,
    arch: String,
    features: Vec<String>,
    traced: bool,
    sm90: bool,
    ptxas: Vec<PathBuf>,
    toolchain: Option<String>,
    watched: Vec<PathBuf>,
    no_grid_sync: Vec<String>,
    /// Set by [`Builder::kernels_of`]: the kernel crate is another than the calling one.
    apart: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

/// What a build made, for a `build.rs` that wants more than the files.
#[derive(Clone, Debug)]
pub struct Built {
    /// The plain module's path in `OUT_DIR`.
    pub plain: PathBuf,
    /// What `ptxas -v` reported, or why it was not run.
    pub ptxas: Result<String, String>,
}

/// Why a build failed: what went wrong, and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// What went wrong.
    pub what: String,
    /// What to do about it.
    pub fix: String,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\n  to fix: {}", self.what, self.fix)
    }
}

impl std::error::Error for Error {}

fn error(what: impl Into<String>, fix: impl Into<String>) -> Error {
    Error { what: what.into(), fix: fix.into() }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl Builder {
    /// A build of the crate whose `build.rs` is running (cargo's
    /// `CARGO_MANIFEST_DIR`, `OUT_DIR` and `CARGO_PKG_NAME`), for
    /// [`DEFAULT_ARCH`], the plain module only.
    ///
    /// # Panics
    /// Outside a build script, where cargo has not set those variables.
    pub fn new() -> Builder {
        let var = |name| env(name).unwrap_or_else(|| panic!("cg_builder::Builder::new() runs in a build script: cargo sets {name} there"));
        Builder {
            dir: PathBuf::from(var("CARGO_MANIFEST_DIR")),
            out_dir: PathBuf::from(var("OUT_DIR")),
            lib_name: var("CARGO_PKG_NAME").replace('-', "_"),
            arch: DEFAULT_ARCH.to_string(),
            features: Vec::new(),
            traced: false,
            sm90: false,
            ptxas: Vec::new(),
            toolchain: None,
            watched: Vec::new(),
            no_grid_sync: Vec::new(),
            apart: false,
        }
    }

    /// Builds the kernel crate `name` whose `Cargo.toml` is in `dir`
    /// (relative to the calling crate's) instead of the calling crate: for
    /// a crate apart whose `lib.rs` is only `cg_kernel::ptx!();`. The
    /// kernel crate then has no build script, so its host build starts at
    /// once and runs beside the GPU build instead of after it (the lesson's
    /// `gpu/ptx`: a kernel edit's GPU build no longer waits for both in
    /// turn). The modules are the kernel crate's ([`Ptx::crate_name`] is
    /// `name`), and a program must link the crate apart to launch them.
    ///
    /// [`Ptx::crate_name`]: https://docs.rs/cg-kernel/latest/cg_kernel/kernels/struct.Ptx.html#structfield.crate_name
    pub fn kernels_of(mut self, dir: impl AsRef<Path>, name: &str) -> Self {
        self.dir = self.dir.join(dir);
        self.lib_name = name.replace('-', "_");
        self.apart = true;
        self
    }

    /// The plain module's architecture (`sm_80`, say) instead of [`DEFAULT_ARCH`].
    pub fn arch(mut self, arch: impl Into<String>) -> Self {
        self.arch = arch.into();
        self
    }

    /// Passes the calling crate's feature `name` on to the GPU build when
    /// it is enabled for this build: for features that change the kernels.
    pub fn forward_feature(mut self, name: impl Into<String>) -> Self {
        self.features.push(name.into());
        self
    }

    /// Also builds the traced module (`Ptx::traced`), with the crate's
    /// feature `trace` (which turns on `cg-kernel/trace`): each block
    /// records its SM and its times.
    pub fn traced(mut self, yes: bool) -> Self {
        self.traced = yes;
        self
    }

    /// Also builds the sm_90 module (`Ptx::sm90`), every kernel for compute
    /// capability 9.0: the launcher loads `#[kernel(cluster)]` kernels from
    /// it alone.
    pub fn sm90(mut self, yes: bool) -> Self {
        self.sm90 = yes;
        self
    }

    /// A `ptxas` to try after `PTXAS` and before `PATH` (one a setup script installed, say).
    pub fn ptxas(mut self, path: impl Into<PathBuf>) -> Self {
        self.ptxas.push(path.into());
        self
    }

    /// Builds again when `path` changes, as well as the crate's `src`: for
    /// a kernel library used by path, whose changes cargo does not tell a
    /// build script about.
    pub fn watch(mut self, path: impl Into<PathBuf>) -> Self {
        self.watched.push(path.into());
        self
    }

    /// Names a kernel declared `#[kernel(cooperative)]` that never calls
    /// `grid.sync()` on purpose (a baseline of a launch's cost, a test's
    /// mutant): the build warns of every other such kernel.
    pub fn cooperative_without_grid_sync(mut self, name: impl Into<String>) -> Self {
        self.no_grid_sync.push(name.into());
        self
    }

    /// The toolchain to name in the fix when the GPU build fails for want of
    /// one (`nightly-2026-05-20`, say); the build itself runs with cargo's own.
    pub fn toolchain(mut self, name: impl Into<String>) -> Self {
        self.toolchain = Some(name.into());
        self
    }

    /// The crates a kernel crate's PTX is compiled from besides its own: the
    /// kernel language, its macros and the grid barrier's arithmetic.
    const KERNEL_LANGUAGE: [&str; 3] = ["cg-kernel", "cg-kernel-macros", "cg-barrier"];

    /// Runs the build, or prints what failed and what to do and exits the
    /// build script with status 1 (what a `build.rs` wants).
    pub fn build(self) -> Built {
        match self.try_build() {
            Ok(built) => built,
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1)
            }
        }
    }

    /// Runs the build: the GPU modules into `OUT_DIR`, the Rust file that
    /// holds them for `cg_kernel::ptx!()` and the `cargo:` line that names
    /// it (`CG_KERNEL_PTX`), and the `cargo:` lines that re-run the build
    /// when the crate's sources change.
    pub fn try_build(self) -> Result<Built, Error> {
        let plain = self.out_dir.join(files::PLAIN);
        // The nested build compiles this crate for the GPU, which runs its
        // build script again: there is nothing to do then.
        if env("CARGO_CFG_TARGET_ARCH").as_deref() == Some("nvptx64") {
            return Ok(Built { plain, ptxas: Err("the GPU build itself".into()) });
        }
        println!("cargo:rerun-if-changed={}", self.dir.join("src").display());
        // Its dependencies' features (which kernels of a dependency its PTX carries).
        println!("cargo:rerun-if-changed={}", self.dir.join("Cargo.toml").display());
        for path in &self.watched {
            println!("cargo:rerun-if-changed={}", path.display());
        }
        // The kernel language the PTX is compiled with, where it is source
        // beside this builder (a path dependency in this repository): an
        // edit of it changes every kernel crate's PTX, not only the crate's
        // own. A crate from a registry never changes, and is not watched.
        for language in Self::KERNEL_LANGUAGE {
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(language).join("src");
            if src.is_dir() {
                println!("cargo:rerun-if-changed={}", src.display());
            }
        }
        println!("cargo:rerun-if-env-changed=PTXAS");
        if !self.arch.starts_with("sm_") {
            return Err(error(format!("{} is not a PTX target", self.arch), "name an architecture such as sm_70, sm_80 or sm_90"));
        }
        if std::env::var_os("CARGO_FEATURE_EMULATOR_ONLY").is_some() {
            for name in [files::PLAIN, files::TRACED, files::SM90] {
                self.write(name, "")?;
            }
            let ptxas = Err("built for the emulator only (feature emulator-only): no PTX".to_string());
            self.write_ptx_rs(&ptxas, false)?;
            return Ok(Built { plain, ptxas });
        }
        let features: Vec<&str> = self
            .features
            .iter()
            .filter(|f| std::env::var_os(format!("CARGO_FEATURE_{}", f.to_uppercase().replace('-', "_"))).is_some())
            .map(String::as_str)
            .collect();
        // Each module builds at once, in a folder of its own (each compiling
        // `core` for the GPU once, then kept): a kernel edit waits for the
        // slowest, not for the three one after another.
        let traced: Vec<&str> = features.iter().copied().chain(["trace"]).collect();
        let plain_build = self.spawn("nvptx", &features, &self.arch);
        let traced_build = self.traced.then(|| self.spawn("nvptx-traced", &traced, &self.arch));
        let sm90_build = self.sm90.then(|| self.spawn("nvptx-sm90", &features, SM90));
        let built = [(Some(plain_build), "nvptx", files::PLAIN), (traced_build, "nvptx-traced", files::TRACED), (sm90_build, "nvptx-sm90", files::SM90)]
            .into_iter()
            .map(|(child, folder, name)| match child {
                Some(child) => self.finish(child, folder, name),
                None => self.write(name, "").map(|()| Ok(())),
            })
            .collect::<Result<Vec<_>, Error>>()?;
        // A kernel that does not compile: the crate's own compilation, which
        // comes next, shows the compiler's errors as the compiler's, with
        // their spans (the host build of the same source fails the same
        // way); `ptx!()` then stops it with one line on the GPU build, for an
        // error only the GPU build meets.
        if let Some(failed) = built.into_iter().find_map(Result::err) {
            println!("cargo:warning=the kernels did not compile for the GPU: the compiler's errors follow, from the crate's own build");
            self.write(files::PTX_RS, &format!("::core::compile_error!({failed:?})\n"))?;
            println!("cargo:rustc-env={PTX_ENV}={}", self.out_dir.join(files::PTX_RS).display());
            return Ok(Built { plain, ptxas: Err("the GPU build failed".into()) });
        }
        if let Ok(text) = std::fs::read_to_string(&plain) {
            for name in cooperative::cooperative_without_grid_sync(&text).into_iter().filter(|n| !self.no_grid_sync.contains(n)) {
                println!(
                    "cargo:warning=`{name}` is declared #[kernel(cooperative)] and never calls grid.sync(): its cooperative launch only limits its grid to what the GPU holds at once; drop `cooperative` for an ordinary launch"
                );
            }
        }
        let (ptxas, cubin) = self.report(&plain);
        if let Err(why) = &ptxas {
            println!("cargo:warning=the PTX was not checked by ptxas: {why}");
        }
        self.write_ptx_rs(&ptxas, cubin)?;
        Ok(Built { plain, ptxas })
    }

    /// Writes [`files::PTX_RS`], the `Ptx` value of the modules in `OUT_DIR`
    /// and `ptxas`, and hands its path to the crate's compilation as [`PTX_ENV`].
    fn write_ptx_rs(&self, ptxas: &Result<String, String>, cubin: bool) -> Result<(), Error> {
        let text = ptx_rs(&self.out_dir, ptxas, cubin, self.apart.then_some(self.lib_name.as_str()))?;
        self.write(files::PTX_RS, &text)?;
        println!("cargo:rustc-env={PTX_ENV}={}", self.out_dir.join(files::PTX_RS).display());
        Ok(())
    }

    fn write(&self, name: &str, text: &str) -> Result<(), Error> {
        let path = self.out_dir.join(name);
        std::fs::write(&path, text).map_err(|e| error(format!("could not write {}: {e}", path.display()), "check the build folder's permissions"))
    }

    /// Starts `cargo rustc` building the crate to PTX with `features`, into `OUT_DIR/folder`.
    fn spawn(&self, folder: &str, features: &[&str], arch: &str) -> std::io::Result<std::process::Child> {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(&self.dir)
            .args(["rustc", "--release", "--lib", "--crate-type", "cdylib", "--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
            .args(if features.is_empty() { Vec::new() } else { vec!["--features".to_string(), features.join(",")] })
            .arg("--target-dir")
            .arg(self.out_dir.join(folder))
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

    /// Waits for a GPU build, then writes its PTX, launch bounds applied, as
    /// `name`. `Ok(Err(message))` where the kernels did not compile: the
    /// message names the first error and the file that holds the whole output.
    fn finish(&self, child: std::io::Result<std::process::Child>, folder: &str, name: &str) -> Result<Result<(), String>, Error> {
        let output = child
            .and_then(|c| c.wait_with_output())
            .map_err(|e| error(format!("could not run cargo to build the kernels for the GPU: {e}"), "check that cargo is on PATH"))?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            let toolchain = self.toolchain.as_deref().unwrap_or("<the crate's nightly>");
            match toolchain_problem(&stderr) {
                Some(ToolchainProblem::NoRustSrc) => {
                    eprintln!("{stderr}");
                    return Err(error("building the kernels for nvptx64-nvidia-cuda failed", format!("rustup component add rust-src --toolchain {toolchain}")));
                }
                Some(ToolchainProblem::NotNightly) => {
                    eprintln!("{stderr}");
                    return Err(error(
                        "building the kernels for nvptx64-nvidia-cuda failed",
                        format!("rustup toolchain install {toolchain} --profile minimal --component rust-src"),
                    ));
                }
                None => {}
            }
            let log = self.out_dir.join(format!("{folder}-errors.txt"));
            let _ = std::fs::write(&log, stderr.as_bytes());
            let first = stderr.lines().find(|l| l.starts_with("error")).unwrap_or("an error").trim();
            return Ok(Err(format!(
                "the kernels did not compile for the GPU (nvptx64-nvidia-cuda, {folder}): {first}; the GPU build's whole output is in {}",
                log.display()
            )));
        }
        let ptx = self.out_dir.join(folder).join("nvptx64-nvidia-cuda/release/deps").join(format!("{}.s", self.lib_name));
        let text = std::fs::read_to_string(&ptx)
            .map_err(|e| error(format!("the GPU build left no PTX at {}: {e}", ptx.display()), "run `cargo clean` and build again"))?;
        let text = with_launch_bounds(&text)
            .map_err(|why| error(format!("launch bounds: {why}"), "report this: `#[kernel(launch_bounds(...))]` and cg-builder disagree"))?;
        self.write(name, &text).map(Ok)
    }

    /// What `ptxas -v -arch=sm_75` says of `ptx`, or why it could not be
    /// asked; and whether the same ptxas, run at the same time, wrote `ptx`
    /// assembled for sm_90 as [`files::CUBIN_SM90`].
    fn report(&self, ptx: &Path) -> (Result<String, String>, bool) {
        let mut tried = Vec::new();
        let cubin = self.out_dir.join(files::CUBIN_SM90);
        let _ = std::fs::remove_file(&cubin);
        for ptxas in self.ptxas_candidates() {
            let sm90 =
                Command::new(&ptxas).arg(format!("-arch={CUBIN_ARCH}")).arg("-o").arg(&cubin).arg(ptx).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
            let output = Command::new(&ptxas).args(["-v", &format!("-arch={REPORT_ARCH}"), "-o", "/dev/null"]).arg(ptx).output();
            let assembled = sm90.and_then(|mut child| child.wait()).is_ok_and(|status| status.success()) && cubin.exists();
            let output = match output {
                Ok(output) => output,
                Err(_) => {
                    tried.push(ptxas.display().to_string());
                    continue;
                }
            };
            if !output.status.success() {
                return (Err(format!("{} failed: {}", ptxas.display(), String::from_utf8_lossy(&output.stderr).lines().next().unwrap_or(""))), false);
            }
            return (Ok(String::from_utf8_lossy(&output.stderr).into_owned()), assembled);
        }
        (Err(format!("no ptxas found (tried {}); set PTXAS to one", tried.join(", "))), false)
    }

    fn ptxas_candidates(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = std::env::var_os("PTXAS").map(PathBuf::from).into_iter().collect();
        paths.extend(self.ptxas.iter().filter(|p| p.exists()).cloned());
        paths.push(PathBuf::from("ptxas"));
        if let Some(cuda) = std::env::var_os("CUDA_PATH") {
            paths.push(Path::new(&cuda).join("bin/ptxas"));
        }
        paths.push(PathBuf::from("/usr/local/cuda/bin/ptxas"));
        paths
    }
}

/// The text of [`files::PTX_RS`] for the modules in `out_dir`: an expression
/// of type `cg_kernel::kernels::Ptx`, written `Ptx { ... }` (`ptx!()` brings
/// the name into scope, by whatever path the crate has cg-kernel). The
/// kernel crate is the one that includes it, unless `apart` names another.
fn ptx_rs(out_dir: &Path, ptxas: &Result<String, String>, cubin: bool, apart: Option<&str>) -> Result<String, Error> {
    let include_as = |macro_name: &str, name: &str| {
        let path = out_dir.join(name);
        let path = path.to_str().ok_or_else(|| error(format!("{} is not UTF-8", path.display()), "build in a folder whose path is UTF-8"))?;
        Ok::<_, Error>(format!("{macro_name}!({path:?})"))
    };
    let include = |name: &str| include_as("include_str", name);
    let cubin = if cubin { include_as("include_bytes", files::CUBIN_SM90)? } else { "&[]".to_string() };
    let report = match ptxas {
        Ok(report) => format!("::core::result::Result::Ok({report:?})"),
        Err(why) => format!("::core::result::Result::Err({why:?})"),
    };
    let crate_name = match apart {
        Some(name) => format!("{name:?}"),
        None => "::core::env!(\"CARGO_CRATE_NAME\")".to_string(),
    };
    Ok(format!(
        "// Written by cg-builder: the PTX modules of a kernel crate, for `cg_kernel::ptx!()`.\nPtx {{\n    crate_name: {crate_name},\n    plain: {},\n    traced: {},\n    sm90: {},\n    cubin_sm90: {cubin},\n    ptxas_sm75: {report},\n}}\n",
        include(files::PLAIN)?,
        include(files::TRACED)?,
        include(files::SM90)?,
    ))
}

/// What the GPU build lacks in the toolchain, as cargo's own errors say it.
#[derive(Debug, PartialEq)]
enum ToolchainProblem {
    /// `-Zbuild-std` without the `rust-src` component.
    NoRustSrc,
    /// A stable (or beta) cargo, which refuses `-Z` flags.
    NotNightly,
}

/// The toolchain problem the GPU build's `stderr` names, if any; `None` for
/// a kernel that does not compile, whatever its messages mention (a macro's
/// note says "in Nightly builds, run with -Z macro-backtrace", and paths
/// into the toolchain name the nightly and `rust-src`'s folder).
fn toolchain_problem(stderr: &str) -> Option<ToolchainProblem> {
    if stderr.contains("rustup component add rust-src") || (stderr.contains("library/Cargo.lock") && stderr.contains("does not exist")) {
        Some(ToolchainProblem::NoRustSrc)
    } else if stderr.contains("is only accepted on the nightly channel") {
        Some(ToolchainProblem::NotNightly)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_error_is_not_read_as_a_toolchain_problem() {
        let missing_src = "error: \"/root/.rustup/toolchains/nightly-2026-05-20-x86_64-unknown-linux-gnu/lib/rustlib/src/rust/library/Cargo.lock\" does not exist, unable to build with the standard library, try:\n        rustup component add rust-src --toolchain nightly-2026-05-20-x86_64-unknown-linux-gnu\n";
        assert_eq!(toolchain_problem(missing_src), Some(ToolchainProblem::NoRustSrc));
        let stable = "error: the `-Z` flag is only accepted on the nightly channel of Cargo, but this is the `stable` channel\n";
        assert_eq!(toolchain_problem(stable), Some(ToolchainProblem::NotNightly));
        // A kernel's own error from inside a macro, which names -Z, the
        // nightly and the toolchain's library sources.
        let code = "error[E0308]: mismatched types\n  --> src/lib.rs:12:5\n   |\n  ::: /root/.rustup/toolchains/nightly-2026-05-20-x86_64-unknown-linux-gnu/lib/rustlib/src/rust/library/core/src/macros/mod.rs:44:9\n   = note: this error originates in the attribute macro `kernel` (in Nightly builds, run with -Z macro-backtrace for more info)\n";
        assert_eq!(toolchain_problem(code), None);
    }

    #[test]
    fn a_kernel_that_does_not_compile_is_left_to_the_crates_own_build_with_the_first_error_named() {
        let out = std::env::temp_dir().join(format!("cg-builder-test-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let builder = Builder {
            dir: out.clone(),
            out_dir: out.clone(),
            lib_name: "k".into(),
            arch: DEFAULT_ARCH.into(),
            features: Vec::new(),
            traced: false,
            sm90: false,
            ptxas: Vec::new(),
            toolchain: None,
            watched: Vec::new(),
            no_grid_sync: Vec::new(),
            apart: false,
        };
        let failing = Command::new("sh")
            .args(["-c", "echo '   Compiling k' >&2; echo 'error[E0277]: the trait bound is not satisfied' >&2; exit 101"])
            .stderr(Stdio::piped())
            .spawn();
        let message = builder.finish(failing, "nvptx", files::PLAIN).unwrap().unwrap_err();
        assert!(message.starts_with("the kernels did not compile for the GPU (nvptx64-nvidia-cuda, nvptx): error[E0277]: the trait bound"), "{message}");
        let log = out.join("nvptx-errors.txt");
        assert!(message.ends_with(&format!("whole output is in {}", log.display())), "{message}");
        assert!(std::fs::read_to_string(&log).unwrap().contains("error[E0277]"));
        // A missing toolchain component is not the crate's error: it stops the build script with the fix.
        let toolchain =
            Command::new("sh").args(["-c", "echo 'error: \"/t/library/Cargo.lock\" does not exist, unable to build with the standard library, try:' >&2; echo '  rustup component add rust-src --toolchain n' >&2; exit 101"]).stderr(Stdio::piped()).spawn();
        let err = builder.finish(toolchain, "nvptx", files::PLAIN).unwrap_err();
        assert!(err.fix.starts_with("rustup component add rust-src"), "{err}");
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn the_ptx_file_includes_each_module_by_its_path_and_holds_the_report_as_a_literal() {
        let out = Path::new("/build/out");
        let text = ptx_rs(out, &Ok("ptxas info    : Used 32 registers, \"quoted\"\n".into()), true, None).unwrap();
        assert!(text.contains(&format!("cubin_sm90: include_bytes!(\"/build/out/{}\"),", files::CUBIN_SM90)), "{text}");
        assert!(text.contains("crate_name: ::core::env!(\"CARGO_CRATE_NAME\"),"), "{text}");
        for name in [files::PLAIN, files::TRACED, files::SM90] {
            assert!(text.contains(&format!("include_str!(\"/build/out/{name}\")")), "{text}");
        }
        assert!(text.contains(r#"ptxas_sm75: ::core::result::Result::Ok("ptxas info    : Used 32 registers, \"quoted\"\n"),"#), "{text}");
        let text = ptx_rs(out, &Err("no ptxas found".into()), false, Some("gpu")).unwrap();
        assert!(text.contains("cubin_sm90: &[],"), "{text}");
        // Built from a crate apart, the modules are still the kernel crate's.
        assert!(text.contains("crate_name: \"gpu\","), "{text}");
        assert!(text.contains(r#"ptxas_sm75: ::core::result::Result::Err("no ptxas found"),"#), "{text}");
        assert!(text.trim_start_matches(|c| c != '\n').trim().starts_with("Ptx {"), "{text}");
    }
}
