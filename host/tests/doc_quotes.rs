//! Quoted output is tested output. Every output block in the README and the
//! chapters under `docs/`, and every quote marked as output in their prose,
//! says where it comes from in an HTML comment (invisible on GitHub), and
//! this test checks it there:
//!
//! ````text
//! <!-- output of: cargo emulate exercise --variant zero-grid -->
//! ```text
//! ...the lines the command prints...
//! ```
//! `launch of exercise_sum with 0 blocks refused: ...`<!-- output of: cargo emulate exercise --variant zero-grid -->
//! ````
//!
//! - `output of: COMMAND` runs it: `cargo emulate ...` on the emulator's
//!   build of the program (`--features host/emulator-only`, built by this
//!   test from a copy of the repository, as `cargo emulate` builds it),
//!   `cargo run --release -p host -- --emulate ...` on the repository's
//!   build (this test's binary), `cg-lesson --emulate ...` on that binary
//!   installed outside `target/`. Leading `NAME=value` words set the
//!   environment (`CG_NO_DRIVER=1`, a machine without the NVIDIA driver). A
//!   command that needs a GPU cannot run here: its quote cites a record.
//! - `after: FILE: `FROM` -> `TO`` (in the same comment, on a line of its
//!   own or not: a table's row is one line) is a learner's edit, made to the copy before `cargo emulate` builds and runs it: the
//!   first `FROM` in `FILE` becomes `TO` (`\n` in either is a line break). `after: FILE = OTHER` replaces
//!   `FILE` with the repository's `OTHER` (a written `solve()`). The output
//!   is then the build's (a compile error) and the run's.
//! - `output in: FILE` checks the quote against a file of the repository: a
//!   recorded GPU run under `records/`, or the expected output a compile-fail
//!   test holds.
//! - `output checked by: TEST` names the test that checks that block itself
//!   (`host/tests/your_own_kernel.rs` runs its chapter in a project of its
//!   own); `not output: WHY` marks a `text` block that quotes no output.
//!
//! A block's lines must be the output's, one after another (`...` alone on a
//! line stands for any lines); a quote in prose must be in one line of it.
//! In both, `...` stands for any text, and runs of spaces are one space in a
//! prose quote, which Markdown wraps. Every ```` ```text ```` block must be
//! marked, so that a new one cannot go unchecked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Where a quote comes from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Source {
    /// A command, after the learner's edits.
    Run { command: String, edits: Vec<Edit> },
    /// A file of the repository.
    File(String),
    /// A test that checks the block itself.
    CheckedBy(String),
    /// A block that quotes no output.
    NotOutput,
}

/// A learner's edit of one file of the copy.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Edit {
    Replace { file: String, from: String, to: String },
    CopyOf { file: String, other: String },
}

/// One quote: where it is, what it says, and where it comes from.
#[derive(Clone, Debug)]
struct Quote {
    doc: String,
    line: usize,
    text: String,
    block: bool,
    source: Source,
}

/// The comment's source and edits: `output of: ...`, `output in: ...`,
/// `output checked by: ...`, `not output: ...`, then `after: ...` lines.
fn source(comment: &str) -> Result<Source, String> {
    // The edits follow the source, each from its `after:`, on lines of their
    // own or on one line (as a table's row needs).
    let mut parts = comment.split("after:").map(str::trim);
    let first = parts.next().unwrap_or_default();
    let source = if let Some(command) = first.strip_prefix("output of:") {
        Source::Run { command: command.trim().to_string(), edits: Vec::new() }
    } else if let Some(file) = first.strip_prefix("output in:") {
        Source::File(file.trim().to_string())
    } else if let Some(test) = first.strip_prefix("output checked by:") {
        Source::CheckedBy(test.trim().to_string())
    } else if first.starts_with("not output:") {
        Source::NotOutput
    } else {
        return Err(format!("a marker that says no source: `{first}`"));
    };
    let mut edits = Vec::new();
    for after in parts {
        if let Some((file, other)) = after.split_once(" = ").filter(|_| !after.contains(" -> ")) {
            edits.push(Edit::CopyOf { file: file.trim().to_string(), other: other.trim().to_string() });
            continue;
        }
        let (file, change) = after.split_once(": ").ok_or_else(|| format!("an edit without its file: `{after}`"))?;
        let (from, to) = change.split_once(" -> ").ok_or_else(|| format!("an edit without ` -> `: `{after}`"))?;
        // The code in backticks; `\n` in it is a line break.
        let code = |s: &str| s.trim().strip_prefix('`').and_then(|s| s.strip_suffix('`')).map(|s| s.replace("\\n", "\n"));
        let (Some(from), Some(to)) = (code(from), code(to)) else { return Err(format!("an edit whose code is not in backticks: `{after}`")) };
        edits.push(Edit::Replace { file: file.trim().to_string(), from, to });
    }
    match source {
        Source::Run { command, .. } => Ok(Source::Run { command, edits }),
        other if edits.is_empty() => Ok(other),
        _ => Err("edits belong to `output of:` alone".to_string()),
    }
}

/// The backtick span that ends `before` (its text, spaces and line breaks
/// collapsed), if `before` ends with one.
fn span_before(before: &str) -> Option<String> {
    let ticks = before.len() - before.trim_end_matches('`').len();
    if ticks == 0 {
        return None;
    }
    let fence = &before[before.len() - ticks..];
    let inner = &before[..before.len() - ticks];
    let start = inner.rfind(fence)?;
    Some(inner[start + ticks..].split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The quotes of `text` (the document `doc`), and the problems of its
/// markers: a ```` ```text ```` block without one, a marker with nothing to mark.
fn quotes(doc: &str, text: &str) -> (Vec<Quote>, Vec<String>) {
    let (mut found, mut problems) = (Vec::new(), Vec::new());
    let line_of = |at: usize| text[..at].matches('\n').count() + 1;
    // The fenced blocks: where each starts, its info string and its body.
    let mut blocks: Vec<(usize, usize, String, String)> = Vec::new();
    let mut offset = 0;
    let mut open: Option<(usize, String, String)> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_end();
        match (&mut open, trimmed.strip_prefix("```")) {
            (None, Some(info)) => open = Some((offset, info.to_string(), String::new())),
            (Some(_), Some("")) => {
                let (start, info, body) = open.take().unwrap();
                blocks.push((start, offset + line.len(), info, body));
            }
            (Some((_, _, body)), _) => body.push_str(line),
            (None, None) => {}
        }
        offset += line.len();
    }
    let in_block = |at: usize| blocks.iter().any(|(s, e, _, _)| (*s..*e).contains(&at));
    let mut marked_blocks = Vec::new();
    let mut at = 0;
    while let Some(k) = text[at..].find("<!--") {
        let start = at + k;
        let Some(len) = text[start..].find("-->") else { break };
        let end = start + len + 3;
        at = end;
        if in_block(start) {
            continue;
        }
        let comment = &text[start + 4..end - 3];
        let is_marker = ["output of:", "output in:", "output checked by:", "not output:"].iter().any(|p| comment.trim_start().starts_with(p));
        if !is_marker {
            continue;
        }
        let line = line_of(start);
        let source = match source(comment) {
            Ok(s) => s,
            Err(why) => {
                problems.push(format!("{doc}:{line}: {why}"));
                continue;
            }
        };
        // A block: the fence after the comment, with only blank lines between.
        let rest = &text[end..];
        let gap = rest.len() - rest.trim_start().len();
        if let Some(block) = blocks.iter().find(|(s, _, _, _)| *s == end + gap && rest[..gap].chars().all(char::is_whitespace)) {
            marked_blocks.push(block.0);
            found.push(Quote { doc: doc.to_string(), line: line_of(block.0), text: block.3.clone(), block: true, source });
            continue;
        }
        match span_before(&text[..start]) {
            Some(quote) if source != Source::NotOutput => found.push(Quote { doc: doc.to_string(), line, text: quote, block: false, source }),
            _ => problems.push(format!("{doc}:{line}: a marker neither before a fenced block nor right after a quote in backticks")),
        }
    }
    for (start, _, info, _) in &blocks {
        if info.trim() == "text" && !marked_blocks.contains(start) {
            problems.push(format!(
                "{doc}:{}: a ```text block with no marker: say where its output comes from (`<!-- output of: COMMAND -->`, `<!-- output in: FILE -->`) or `<!-- not output: WHY -->`",
                line_of(*start)
            ));
        }
    }
    (found, problems)
}

/// `line` matches `pattern`, whose `...` stand for any text: all of it
/// (`whole`), or within it.
fn matches(pattern: &str, line: &str, whole: bool) -> bool {
    let pieces: Vec<&str> = pattern.split("...").collect();
    let mut rest = line;
    for (k, piece) in pieces.iter().enumerate() {
        let (first, last) = (k == 0, k == pieces.len() - 1);
        if first && whole {
            let Some(r) = rest.strip_prefix(piece) else { return false };
            rest = r;
            if last {
                return rest.is_empty();
            }
            continue;
        }
        if last && whole {
            return rest.len() >= piece.len() && rest.ends_with(piece);
        }
        match rest.find(piece) {
            Some(i) => rest = &rest[i + piece.len()..],
            None => return false,
        }
    }
    true
}

/// Whether `quote` is in `output`: a block's lines one after another (a
/// line of `...` alone skips any), a prose quote within one line.
fn quoted_in(quote: &Quote, output: &str) -> bool {
    let lines: Vec<&str> = output.lines().map(str::trim_end).collect();
    if !quote.block {
        let collapse = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let q = collapse(&quote.text);
        return lines.iter().any(|l| matches(&q, &collapse(l), false));
    }
    let wanted: Vec<&str> = quote.text.lines().map(str::trim_end).collect();
    fn from(wanted: &[&str], lines: &[&str]) -> bool {
        match wanted.split_first() {
            None => true,
            Some((w, rest)) if w.trim() == "..." => (0..=lines.len()).any(|k| from(rest, &lines[k..])),
            Some((w, rest)) => lines.first().is_some_and(|l| matches(w, l, true)) && from(rest, &lines[1..]),
        }
    }
    (0..lines.len()).any(|k| from(&wanted, &lines[k..]))
}

/// The README and every chapter under `docs/`.
fn documents() -> Vec<(String, String)> {
    let mut paths = vec![root().join("README.md")];
    let mut chapters: Vec<PathBuf> =
        std::fs::read_dir(root().join("docs")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
    chapters.sort();
    paths.extend(chapters);
    paths.into_iter().map(|p| (p.strip_prefix(root()).unwrap().display().to_string(), std::fs::read_to_string(&p).unwrap())).collect()
}

/// A command's environment settings, the runner, and the program's arguments.
type Parsed = (Vec<(String, String)>, &'static str, Vec<String>);

/// `command`'s environment settings, and the program's arguments with the
/// runner that takes them: `cargo emulate` (the emulator's build), `cargo
/// run` (the repository's) or `cg-lesson` (installed).
fn parse_command(command: &str) -> Result<Parsed, String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let settings = words.iter().take_while(|w| w.contains('=') && !w.starts_with('-')).count();
    let env: Vec<(String, String)> = words[..settings].iter().map(|w| w.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())).unwrap()).collect();
    let owned = |ws: &[&str]| ws.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let (runner, args) = match &words[settings..] {
        ["cargo", "emulate", rest @ ..] => ("cargo emulate", [vec!["--emulate".to_string()], owned(rest)].concat()),
        ["cargo", "run", "--release", "-p", "host", "--", rest @ ..] => ("cargo run", owned(rest)),
        ["cargo", "run", "--release", "-p", "host"] => ("cargo run", Vec::new()),
        ["cg-lesson", rest @ ..] => ("cg-lesson", owned(rest)),
        _ => return Err(format!("`{command}` runs no form of this program")),
    };
    let gpu_free = runner == "cargo emulate" || args.iter().any(|a| a == "--emulate") || env.iter().any(|(k, _)| k == "CG_NO_DRIVER");
    if !gpu_free {
        return Err(format!("`{command}` needs a GPU, which this test does not have: quote a recorded run (`output in: records/...`)"));
    }
    Ok((env, runner, args))
}

/// Runs `cmd` to its end, or for at most `limit`: its stdout and stderr.
fn output_of(cmd: &mut Command, limit: Duration) -> String {
    let dir = std::env::temp_dir().join(format!("cg-doc-quotes-out-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    let (out, err) = (dir.join("out"), dir.join("err"));
    let mut child = cmd
        .stdout(Stdio::from(std::fs::File::create(&out).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&err).unwrap()))
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let text = std::fs::read_to_string(&out).unwrap_or_default() + &std::fs::read_to_string(&err).unwrap_or_default();
    std::fs::remove_dir_all(&dir).ok();
    text
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}

/// A copy of the repository's sources, kept under `target/doc-quotes/` from
/// run to run (only changed files are written, so its build is incremental),
/// built there as `cargo emulate` builds it, into a target folder of its own.
struct Copy {
    dir: PathBuf,
    target: PathBuf,
}

impl Copy {
    const PARTS: [&str; 10] = ["Cargo.toml", "Cargo.lock", "rust-toolchain.toml", ".cargo", "crates", "gpu", "host", "examples", "exercise", "tools"];

    /// Files the copy takes from elsewhere in the repository: the learner's
    /// `solve()` as shipped, unwritten, whatever `exercise/solve.rs` holds
    /// now. The docs quote the exercise as shipped, and a learner who has
    /// written `solve()` must still pass this test.
    const AS_SHIPPED: [(&str, &str); 1] = [("exercise/solve.rs", "host/tests/shipped_solve/solve.rs")];

    fn new() -> Copy {
        let base = root().join("target/doc-quotes");
        Copy::of(&root(), base)
    }

    /// The copy of the repository at `root`, in `base`.
    fn of(root: &Path, base: PathBuf) -> Copy {
        let copy = Copy { dir: base.join("repo"), target: base.join("target") };
        for part in Self::PARTS {
            copy.sync(root, &root.join(part), &copy.dir.join(part));
        }
        copy
    }

    fn sync(&self, root: &Path, from: &Path, to: &Path) {
        if from.is_dir() {
            if from.file_name().is_some_and(|n| n == "target") {
                return;
            }
            std::fs::create_dir_all(to).unwrap();
            for entry in std::fs::read_dir(from).unwrap() {
                let entry = entry.unwrap();
                self.sync(root, &entry.path(), &to.join(entry.file_name()));
            }
            return;
        }
        let shipped = Self::AS_SHIPPED.iter().find(|(file, _)| root.join(file) == from).map(|(_, shipped)| root.join(shipped));
        let from = shipped.as_deref().unwrap_or(from);
        if std::fs::read(from).ok() != std::fs::read(to).ok() {
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::write(to, std::fs::read(from).unwrap()).unwrap();
        }
    }

    /// Builds the copy with `edits` made, runs `args` on the emulator's
    /// build, and puts the copy back: the build's output and the run's.
    fn run(&self, edits: &[Edit], env: &[(String, String)], args: &[String]) -> Result<String, String> {
        let mut originals: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        let mut result = Ok(String::new());
        for edit in edits {
            let (file, new) = match edit {
                Edit::Replace { file, from, to } => {
                    let path = self.dir.join(file);
                    let text = std::fs::read_to_string(&path).map_err(|e| format!("{file}: {e}"))?;
                    if !text.contains(from.as_str()) {
                        result = Err(format!("the edit's `{from}` is not in {file}"));
                        break;
                    }
                    (file, text.replacen(from.as_str(), to, 1))
                }
                Edit::CopyOf { file, other } => (file, std::fs::read_to_string(root().join(other)).map_err(|e| format!("{other}: {e}"))?),
            };
            let path = self.dir.join(file);
            if !originals.iter().any(|(p, _)| *p == path) {
                originals.push((path.clone(), std::fs::read(&path).unwrap()));
            }
            std::fs::write(&path, new).unwrap();
        }
        if result.is_ok() {
            let mut build = Command::new("cargo");
            build.args(["build", "--release", "-p", "host", "--features", "host/emulator-only"]).current_dir(&self.dir);
            clean(&mut build);
            build.env("CARGO_TARGET_DIR", &self.target).env("CARGO_TERM_COLOR", "never");
            let started = Instant::now();
            let built = build.output().unwrap();
            eprintln!("{:>6.1} s  build of the copy ({} edits)", started.elapsed().as_secs_f64(), edits.len());
            let mut text = String::from_utf8_lossy(&built.stderr).into_owned();
            if built.status.success() {
                let dir = std::env::temp_dir().join(format!("cg-doc-quotes-run-{}-{}", std::process::id(), rand_suffix()));
                std::fs::create_dir_all(&dir).unwrap();
                let mut cmd = Command::new(self.target.join("release/cg-lesson"));
                cmd.args(args).current_dir(&dir).env_remove("RUST_BACKTRACE").envs(env.iter().cloned());
                text += &output_of(&mut cmd, Duration::from_secs(300)).replace(&format!("{}/", dir.display()), ".../");
                std::fs::remove_dir_all(&dir).ok();
            }
            result = Ok(text);
        }
        for (path, bytes) in originals {
            std::fs::write(path, bytes).unwrap();
        }
        result
    }
}

/// `cargo` as a learner runs it: none of this test's own cargo variables.
fn clean(cmd: &mut Command) {
    for (k, _) in std::env::vars() {
        if (k.starts_with("CARGO") && k != "CARGO_HOME") || k.starts_with("RUSTC") || k == "RUSTFLAGS" || k == "RUSTUP_TOOLCHAIN" {
            cmd.env_remove(k);
        }
    }
}

/// The repository's build of the program, as this test's binary: `cg-lesson`
/// runs it from a folder outside `target/`, as installed.
fn run_repository_build(runner: &str, env: &[(String, String)], args: &[String]) -> String {
    let dir = std::env::temp_dir().join(format!("cg-doc-quotes-run-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    let built = PathBuf::from(env!("CARGO_BIN_EXE_cg-lesson"));
    let program = if runner == "cg-lesson" {
        let installed = dir.join("bin/cg-lesson");
        std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
        std::fs::copy(&built, &installed).unwrap();
        installed
    } else {
        built
    };
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(&dir).env_remove("RUST_BACKTRACE").envs(env.iter().cloned());
    let text = output_of(&mut cmd, Duration::from_secs(300)).replace(&format!("{}/", dir.display()), ".../");
    std::fs::remove_dir_all(&dir).ok();
    text
}

#[test]
fn every_output_block_and_marked_quote_in_the_docs_is_what_its_source_prints() {
    let mut all = Vec::new();
    let mut problems = Vec::new();
    for (doc, text) in documents() {
        let (q, p) = quotes(&doc, &text);
        all.extend(q);
        problems.extend(p);
    }
    // Each source once: the runs in the order the docs first ask for them.
    let mut outputs: BTreeMap<Source, Result<String, String>> = BTreeMap::new();
    let mut copy: Option<Copy> = None;
    let (mut ran, mut in_files, mut elsewhere) = (0, 0, 0);
    for q in &all {
        if outputs.contains_key(&q.source) {
            continue;
        }
        let started = Instant::now();
        let output = match &q.source {
            Source::Run { command, edits } => parse_command(command).and_then(|(env, runner, args)| {
                ran += 1;
                if runner == "cargo emulate" {
                    copy.get_or_insert_with(Copy::new).run(edits, &env, &args)
                } else if edits.is_empty() {
                    Ok(run_repository_build(runner, &env, &args))
                } else {
                    Err(format!("`{command}`: a learner's edit is made to the copy, which `cargo emulate` runs"))
                }
            }),
            Source::File(file) => {
                in_files += 1;
                std::fs::read_to_string(root().join(file)).map_err(|e| format!("{file}: {e}"))
            }
            Source::CheckedBy(test) => {
                elsewhere += 1;
                match root().join(test).exists() {
                    true => Ok(String::new()),
                    false => Err(format!("no test {test}")),
                }
            }
            Source::NotOutput => Ok(String::new()),
        };
        if let Source::Run { command, edits } = &q.source {
            eprintln!(
                "{:>6.1} s  {command}{}",
                started.elapsed().as_secs_f64(),
                if edits.is_empty() { String::new() } else { format!(" after {} edits", edits.len()) }
            );
        }
        outputs.insert(q.source.clone(), output);
    }
    let mut checked = 0;
    for q in &all {
        if matches!(q.source, Source::CheckedBy(_) | Source::NotOutput) {
            continue;
        }
        checked += 1;
        match &outputs[&q.source] {
            Err(why) => problems.push(format!("{}:{}: {why}", q.doc, q.line)),
            Ok(output) if !quoted_in(q, output) => {
                let what = match &q.source {
                    Source::Run { command, edits } if edits.is_empty() => format!("`{command}`"),
                    Source::Run { command, .. } => format!("`{command}` after the edits"),
                    Source::File(f) => f.clone(),
                    _ => unreachable!(),
                };
                problems.push(format!(
                    "{}:{}: {what} does not print this quote as written:\n{}\n--- it prints:\n{}",
                    q.doc,
                    q.line,
                    q.text.trim_end(),
                    output.trim_end()
                ));
            }
            Ok(_) => {}
        }
    }
    let sources = if elsewhere == 1 { "source" } else { "sources" };
    eprintln!("{checked} quotes checked against {ran} runs and {in_files} files; {elsewhere} more {sources} named, each checked by a test of its own");
    assert!(problems.is_empty(), "{} stale or unmarked quotes:\n\n{}", problems.len(), problems.join("\n\n"));
    assert!(checked >= 30, "only {checked} quotes are marked");
}

#[test]
fn a_learners_written_solve_is_not_what_the_copy_builds_the_shipped_one_is() {
    let base = std::env::temp_dir().join(format!("cg-doc-quotes-solved-{}-{}", std::process::id(), rand_suffix()));
    let repo = base.join("learner");
    for (file, text) in [
        ("exercise/solve.rs", "pub fn solve() { /* written */ }\n"),
        ("host/tests/shipped_solve/solve.rs", "pub fn solve() { unwritten() }\n"),
        ("gpu/src/lib.rs", "// kernels\n"),
    ] {
        std::fs::create_dir_all(repo.join(file).parent().unwrap()).unwrap();
        std::fs::write(repo.join(file), text).unwrap();
    }
    let copy = Copy::of(&repo, base.join("copy"));
    let read = |file: &str| std::fs::read_to_string(copy.dir.join(file)).unwrap();
    assert_eq!(read("exercise/solve.rs"), "pub fn solve() { unwritten() }\n", "the copy builds the exercise as shipped");
    assert_eq!(read("gpu/src/lib.rs"), "// kernels\n");
    // The learner's file is theirs: the copy never writes back.
    assert_eq!(std::fs::read_to_string(repo.join("exercise/solve.rs")).unwrap(), "pub fn solve() { /* written */ }\n");
    std::fs::remove_dir_all(&base).ok();
}

#[test]
fn the_reading_of_markers_finds_blocks_quotes_and_edits_and_refuses_an_unmarked_block() {
    let doc = "Run it:\n\n<!-- output of: cargo emulate exercise\n     after: gpu/src/lesson/exercise.rs: `grid.sync();` -> `` -->\n```text\nerror: ...\n```\n\n\
               It says `blocks of 48 threads:\n use a multiple of 32`<!-- output in: records/x.txt --> and ``a `b` c``<!-- output of: cargo emulate --> too.\n\n\
               ```text\nunmarked\n```\n<!-- not output: code -->\n```text\nint x;\n```\n";
    let (q, problems) = quotes("x.md", doc);
    assert_eq!(q.len(), 4, "{q:#?}");
    assert!(q[0].block && q[0].text == "error: ...\n");
    assert_eq!(
        q[0].source,
        Source::Run {
            command: "cargo emulate exercise".into(),
            edits: vec![Edit::Replace { file: "gpu/src/lesson/exercise.rs".into(), from: "grid.sync();".into(), to: String::new() }]
        }
    );
    assert_eq!((q[1].text.as_str(), &q[1].source), ("blocks of 48 threads: use a multiple of 32", &Source::File("records/x.txt".into())));
    assert_eq!(q[2].text, "a `b` c");
    assert_eq!(q[3].source, Source::NotOutput);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with("x.md:12: a ```text block with no marker"), "{problems:?}");
    assert_eq!(
        source("output of: cargo emulate\nafter: exercise/solve.rs = host/tests/written_solve/solve.rs").unwrap(),
        Source::Run {
            command: "cargo emulate".into(),
            edits: vec![Edit::CopyOf { file: "exercise/solve.rs".into(), other: "host/tests/written_solve/solve.rs".into() }]
        }
    );
    // On one line, as a table's row has it.
    let one_line = source("output of: cargo emulate exercise after: a.rs: `x` -> `y` after: b.rs: `p\\nq` -> ``").unwrap();
    let Source::Run { edits, .. } = one_line else { panic!() };
    assert_eq!(edits[1], Edit::Replace { file: "b.rs".into(), from: "p\nq".into(), to: String::new() });
    assert!(parse_command("cargo run --release -p host -- bench").unwrap_err().contains("needs a GPU"));
    assert_eq!(parse_command("CG_NO_DRIVER=1 cargo run --release -p host -- exercise").unwrap().1, "cargo run");
}

#[test]
fn a_quote_matches_its_output_with_wildcards_and_a_stale_one_does_not() {
    let output =
        "GPU: emulated\nrow 1\nrow 2\nrow 3\nall 17 checks passed\nerror: thread 128 wrote memory[8] at gpu/src/lesson/sum.rs:29:30 (4-byte elements)\n";
    let block = |text: &str| Quote { doc: String::new(), line: 0, text: text.into(), block: true, source: Source::NotOutput };
    let prose = |text: &str| Quote { block: false, ..block(text) };
    assert!(quoted_in(&block("GPU: emulated\nrow 1\n   ...\nall 17 checks passed\n"), output));
    assert!(!quoted_in(&block("GPU: emulated\nrow 2\n"), output), "lines one after another");
    assert!(!quoted_in(&block("all 16 checks passed\n"), output));
    assert!(quoted_in(&prose("thread 128 wrote ... at gpu/src/lesson/sum.rs:29:30"), output));
    // The stale quote of docs/kernels.md, before this test.
    assert!(!quoted_in(&prose("thread 128 wrote ... at gpu/src/lesson/sum.rs:25:30"), output));
    assert!(!quoted_in(&block("row ...1\n"), "row 1x\n"), "a block's line is the whole line");
    assert!(quoted_in(&prose("row  2"), output), "spaces are one in prose");
}
