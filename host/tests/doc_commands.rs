//! Every command of this program that the README and `docs/` suggest runs as
//! written. Each one (`cargo emulate ...`, `cargo run --release -p host --
//! ...`, `cg-lesson ...`) is read the way the program reads its command line,
//! and must be taken; each that runs on the emulator (`cargo emulate`, or
//! `--emulate` written out) is run, in a folder of its own, and must succeed.

use host::cli::{self, Cli};
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One suggested command: where it was found, and the program's arguments.
#[derive(Debug, Clone, PartialEq)]
struct Suggested {
    doc: String,
    written: String,
    args: Vec<String>,
}

impl Suggested {
    fn emulated(&self) -> bool {
        self.args.iter().any(|a| a == "--emulate")
    }
}

/// The program's arguments in `line`, if it runs this program: `cargo
/// emulate ARGS` is `--emulate ARGS`; `cargo run --release -p host [--features
/// F] [-- ARGS]` and `cg-lesson ARGS` are `ARGS`. Leading `NAME=value`
/// settings and a trailing `&` are not the program's.
fn program_args(line: &str) -> Option<Vec<String>> {
    let words: Vec<&str> = line.split_whitespace().skip_while(|w| w.contains('=') && !w.starts_with('-')).filter(|w| *w != "&").collect();
    match words.as_slice() {
        ["cargo", "emulate", rest @ ..] => Some(std::iter::once("--emulate").chain(rest.iter().copied()).map(str::to_string).collect()),
        ["cg-lesson", rest @ ..] => Some(rest.iter().map(|w| w.to_string()).collect()),
        ["cargo", "run", "--release", "-p", "host", rest @ ..] => {
            let after = rest.iter().position(|w| *w == "--").map_or(&[][..], |k| &rest[k + 1..]);
            Some(after.iter().map(|w| w.to_string()).collect())
        }
        _ => None,
    }
}

/// The commands in `text`: each line of a block marked `sh`, `bash`,
/// `console` or nothing (comments cut; a `text` block is output), and
/// each command in backticks in the prose. A command with `...` or a
/// `SUBCOMMAND`-style placeholder in it stands for many, and is skipped.
fn commands(doc: &str, text: &str) -> Vec<Suggested> {
    let mut lines: Vec<String> = Vec::new();
    let (mut in_block, mut in_sh) = (false, false);
    for line in text.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            in_sh = in_block && ["```", "```sh", "```bash", "```console"].contains(&line.trim_end());
            continue;
        }
        if in_sh {
            lines.push(line.split(" #").next().unwrap().trim().to_string());
        }
    }
    let prose: String = text.split("```").step_by(2).collect::<Vec<_>>().join(" ").replace('\n', " ");
    for (k, part) in prose.split('`').enumerate() {
        if k % 2 == 1 {
            lines.push(part.trim().to_string());
        }
    }
    let mut found = Vec::new();
    for line in lines {
        let placeholder = line.contains("...")
            || line.split_whitespace().any(|w| w.chars().any(|c| c.is_ascii_uppercase()) && w.chars().all(|c| c.is_ascii_uppercase() || c == '-'));
        if placeholder {
            continue;
        }
        if let Some(args) = program_args(&line) {
            let s = Suggested { doc: doc.to_string(), written: line.clone(), args };
            if !found.contains(&s) {
                found.push(s);
            }
        }
    }
    found
}

fn every_suggested_command() -> Vec<Suggested> {
    let mut docs = vec![root().join("README.md")];
    let mut chapters: Vec<PathBuf> =
        std::fs::read_dir(root().join("docs")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
    chapters.sort();
    docs.extend(chapters);
    let mut all: Vec<Suggested> = Vec::new();
    for path in docs {
        let name = path.strip_prefix(root()).unwrap_or(&path).display().to_string();
        for c in commands(&name, &std::fs::read_to_string(&path).unwrap()) {
            if !all.iter().any(|a| a.args == c.args) {
                all.push(c);
            }
        }
    }
    all
}

/// The program's own reading of `args`: what it would refuse, in its words.
fn refusal(args: &[String]) -> Option<String> {
    let line: Vec<String> = std::iter::once("cg-lesson".to_string()).chain(args.iter().cloned()).collect();
    if let Some(why) = cli::explain_misuse(&line) {
        return Some(why);
    }
    match <Cli as clap::Parser>::try_parse_from(cli::flags_after_the_subcommand(line)) {
        Ok(_) => None,
        Err(e) if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) => None,
        Err(e) => Some(e.to_string()),
    }
}

#[test]
fn the_docs_suggest_the_commands_a_learner_starts_with() {
    let all = every_suggested_command();
    let written: Vec<&str> = all.iter().map(|c| c.written.as_str()).collect();
    for must in ["cargo emulate", "cargo run --release -p host", "cargo emulate exercise", "cargo emulate trace", "cargo run --release -p host -- bench"] {
        assert!(written.contains(&must), "{must} is not among {written:?}");
    }
}

#[test]
fn the_reading_of_a_doc_catches_a_command_the_program_refuses() {
    let text = "Run `cargo emulate frobnicate` or\n```sh\ncargo run --release -p host -- --nope   # comment\ncargo emulate SUBCOMMAND --help\n```\n";
    let found = commands("x.md", text);
    assert_eq!(found.len(), 2, "{found:?}");
    let refused = |word: &str| refusal(&found.iter().find(|c| c.written.contains(word)).unwrap().args).unwrap();
    assert!(refused("frobnicate").contains("unknown subcommand 'frobnicate'"));
    assert!(refused("--nope").contains("--nope"));
    assert_eq!(program_args("NCCL_SOCKET_IFNAME=eth0 cg-lesson multi-gpu --rank 0 &"), Some(vec!["multi-gpu".into(), "--rank".into(), "0".into()]));
}

#[test]
fn every_command_the_docs_suggest_is_one_the_program_takes() {
    for c in every_suggested_command() {
        assert_eq!(refusal(&c.args), None, "{}: `{}`", c.doc, c.written);
    }
}

/// The emulated ones, run as written: each must finish, and succeed (the
/// exercise as shipped may instead say, in its one line, that solve() is
/// not written yet).
#[test]
fn every_command_the_docs_suggest_for_the_emulator_runs() {
    let dir = std::env::temp_dir().join(format!("cg-lesson-doc-commands-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut ran = 0;
    for c in every_suggested_command().into_iter().filter(Suggested::emulated) {
        let started = std::time::Instant::now();
        let o = Command::new(env!("CARGO_BIN_EXE_cg-lesson")).args(&c.args).current_dir(&dir).output().unwrap();
        eprintln!("{:>6.1} s  {}: `{}`", started.elapsed().as_secs_f64(), c.doc, c.written);
        let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        let unwritten = c.args.iter().any(|a| a == "exercise") && err.contains("solve() is yours to write");
        assert!(o.status.success() || unwritten, "{}: `{}` exited {:?}:\n{out}\n{err}", c.doc, c.written, o.status.code());
        ran += 1;
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(ran >= 6, "only {ran} emulated commands found");
}
