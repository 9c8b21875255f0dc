//! `docs/your-own-kernel.md`, followed literally: in a new folder outside
//! this repository (beside a link to it named `cg-lesson`, as the chapter
//! assumes), its shell commands are run in order and its files written where
//! their code blocks say (```` ```rust file=my-app/src/main.rs ````), then
//! the program runs on the emulator. The commands that need a GPU are the
//! ones without `--emulate`; they run only where a GPU is. Then the
//! chapter's "break it on purpose": without the first `grid.sync()`, the
//! emulator must name the race.

use std::path::{Path, PathBuf};
use std::process::Command;

const CHAPTER: &str = include_str!("../../docs/your-own-kernel.md");

/// One step of the chapter: a shell line, or a file and its text.
#[derive(Debug, PartialEq)]
enum Step {
    Shell(String),
    File(String, String),
}

/// The chapter's steps, in order: every line of a ```` ```sh ```` block, and
/// every block whose info string names a `file=`.
fn steps(doc: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else { continue };
        let body: Vec<&str> = lines.by_ref().take_while(|l| !l.starts_with("```")).collect();
        if info == "sh" {
            steps.extend(body.iter().map(|l| l.trim()).filter(|l| !l.is_empty()).map(|l| Step::Shell(l.to_string())));
        } else if let Some(path) = info.split_whitespace().find_map(|w| w.strip_prefix("file=")) {
            steps.push(Step::File(path.to_string(), body.join("\n") + "\n"));
        }
    }
    steps
}

/// `cargo` as the chapter's reader runs it: none of this test's own cargo
/// variables, which would point the build at this repository.
fn clean(cmd: &mut Command, target: &Path) {
    for (k, _) in std::env::vars() {
        if (k.starts_with("CARGO") && k != "CARGO_HOME") || k.starts_with("RUSTC") || k == "RUSTFLAGS" || k == "RUSTUP_TOOLCHAIN" {
            cmd.env_remove(k);
        }
    }
    // Shared between runs of this test, so that a second run does not
    // compile every dependency again; the build itself is the chapter's.
    cmd.env("CARGO_TARGET_DIR", target);
}

fn has_gpu() -> bool {
    ["/dev/nvidia0", "/dev/nvidiactl"].iter().any(|p| Path::new(p).exists())
}

struct Walk {
    dir: PathBuf,
    target: PathBuf,
}

impl Walk {
    /// Runs `line` in `cwd` (relative to the walk's folder); its output.
    fn shell(&self, cwd: &Path, line: &str) -> std::process::Output {
        let mut cmd = Command::new("bash");
        cmd.args(["-c", line]).current_dir(self.dir.join(cwd));
        clean(&mut cmd, &self.target);
        let out = cmd.output().unwrap_or_else(|e| panic!("{line}: {e}"));
        println!("$ {line}\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        out
    }
}

#[test]
fn the_chapter_reads_as_its_steps() {
    let s = steps(CHAPTER);
    assert_eq!(s[0], Step::Shell("cargo new --lib my-kernels".into()));
    let files: Vec<&str> = s.iter().filter_map(|s| if let Step::File(p, _) = s { Some(p.as_str()) } else { None }).collect();
    assert_eq!(
        files,
        ["rust-toolchain.toml", "my-kernels/Cargo.toml", "my-kernels/build.rs", "my-kernels/src/lib.rs", "my-app/Cargo.toml", "my-app/src/main.rs"]
    );
    assert!(s.contains(&Step::Shell("cargo run --release -- --emulate".into())));
}

#[test]
fn the_chapter_runs_from_cargo_new_to_a_grid_barrier_on_the_emulator() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().canonicalize().unwrap();
    let dir = std::env::temp_dir().join(format!("cg-your-own-kernel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&repo, dir.join("cg-lesson")).unwrap();
    let walk = Walk { dir: dir.clone(), target: repo.join("target/your-own-kernel") };
    let mut cwd = PathBuf::new();
    let mut ran_emulated = false;
    for step in steps(CHAPTER) {
        match step {
            Step::File(path, text) => std::fs::write(dir.join(&path), text).unwrap_or_else(|e| panic!("{path}: {e}")),
            Step::Shell(line) if line.starts_with("cd ") => cwd.push(line.trim_start_matches("cd ").trim()),
            Step::Shell(line) if line.starts_with("cargo run") && !line.contains("--emulate") && !has_gpu() => {
                println!("$ {line}\n(not run: no GPU here)");
            }
            Step::Shell(line) => {
                let out = walk.shell(&cwd, &line);
                assert!(out.status.success(), "`{line}` failed in {}", dir.join(&cwd).display());
                if line.contains("--emulate") {
                    let stdout = String::from_utf8_lossy(&out.stdout);
                    assert!(stdout.contains("160 blocks of 256") && stdout.contains("normalized 100000 floats"), "{stdout}");
                    for line in stdout.lines() {
                        assert!(CHAPTER.contains(line), "the chapter should show the program's output as it is now:\n{line}");
                    }
                    ran_emulated = true;
                }
            }
        }
    }
    assert!(ran_emulated, "the chapter ran nothing on the emulator");

    // Without ptxas the kernel crate's build warns, as the chapter quotes it:
    // PTXAS unset, no ptxas on PATH (where the machine has none elsewhere).
    let elsewhere = std::env::var_os("CUDA_PATH").is_some() || Path::new("/usr/local/cuda/bin/ptxas").exists();
    if !elsewhere {
        let path = std::env::var("PATH").unwrap_or_default();
        let without: Vec<&str> = path.split(':').filter(|d| !Path::new(d).join("ptxas").exists()).collect();
        let mut cmd = Command::new("cargo");
        cmd.args(["build", "--release"]).current_dir(dir.join("my-kernels"));
        clean(&mut cmd, &walk.target);
        let out = cmd.env_remove("PTXAS").env("PATH", without.join(":")).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let warning = stderr.lines().find(|l| l.contains("the PTX was not checked by ptxas")).unwrap_or_else(|| panic!("no warning without ptxas:\n{stderr}"));
        let (before, after) = ("warning: my-kernels@0.1.0: the PTX was not checked by ptxas: no ptxas found (tried ", "); set PTXAS to one");
        assert!(warning.starts_with(before) && warning.ends_with(after), "{warning}");
        let quoted = format!("{before}...{after}");
        let prose = CHAPTER.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(prose.contains(&quoted), "the chapter should quote the warning as it is now:\n{warning}");
    }

    // Break it on purpose, as the chapter says: the first grid.sync() deleted.
    let lib = dir.join("my-kernels/src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, text.replacen("    grid.sync();\n", "", 1)).unwrap();
    let out = walk.shell(Path::new("my-app"), "cargo run --release -- --emulate");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a race must fail the run");
    let race = stderr.lines().find(|l| l.starts_with("error: normalize on the emulated device: data race on warp_sums[")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        race.contains("my-kernels/src/lib.rs:42:40") && race.contains("my-kernels/src/lib.rs:33:28") && race.ends_with("with no barrier between"),
        "{race}"
    );
    let quoted = race.replace(&format!("{}/", dir.display()), ".../");
    assert!(CHAPTER.contains(&quoted), "the chapter should quote the emulator's line as it is now:\n{quoted}");
    std::fs::remove_dir_all(&dir).ok();
}
