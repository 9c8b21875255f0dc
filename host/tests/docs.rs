//! The README and the chapters under `docs/` point only at what exists: every
//! relative link, and every repository path written in backticks (a file, a
//! folder, a recorded run), names something in this repository.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The README, every Markdown chapter directly under `docs/`, and the
/// README of every record under `records/` (which says what its files are).
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    for entry in std::fs::read_dir(root().join("records")).unwrap() {
        let readme = entry.unwrap().path().join("README.md");
        if readme.exists() {
            docs.push(readme);
        }
    }
    docs
}

/// Targets of Markdown links `[text](target)` that point into the repository.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut rest = text;
    while let Some(k) = rest.find("](") {
        rest = &rest[k + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        let external = ["http://", "https://", "mailto:", "#"].iter().any(|p| target.starts_with(p));
        if !external && !target.contains(' ') {
            links.push(target.split('#').next().unwrap().to_string());
        }
    }
    links
}

/// Repository paths anywhere in the text, in backticks or not: a word that
/// starts with one of the repository's top folders (or leaves the
/// repository with `../`, or names the `shared/` beside it), with the call
/// written just before it when it reads `call() at path:line:column`. A word
/// with a placeholder in it (`{1,2,3}`, `*`, `<n>`) is not a path.
fn paths(text: &str) -> Vec<(String, Option<String>)> {
    const TOP: [&str; 9] = ["gpu/", "host/", "crates/", "examples/", "docs/", "scripts/", "records/", "../", "shared/"];
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./-:".contains(c);
    let bytes: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut k = 0;
    while k < bytes.len() {
        // A link's target is checked from the document's folder, as a link.
        let link_target = k >= 2 && bytes[k - 2] == ']' && bytes[k - 1] == '(';
        let starts_word = !link_target && (k == 0 || !(is_path_char(bytes[k - 1]) || bytes[k - 1] == '$'));
        let rest: String = bytes[k..bytes.len().min(k + 8)].iter().collect();
        if !(starts_word && TOP.iter().any(|t| rest.starts_with(t))) {
            k += 1;
            continue;
        }
        let mut end = k;
        while end < bytes.len() && is_path_char(bytes[end]) {
            end += 1;
        }
        let word: String = bytes[k..end].iter().collect::<String>().trim_end_matches(['.', ':', ',', '-']).to_string();
        let placeholder = end < bytes.len() && "{*<".contains(bytes[end]);
        // `--features host/traced` names a feature, not a path.
        let feature = bytes[k.saturating_sub(11)..k].iter().collect::<String>() == "--features ";
        if !placeholder && !feature && word.len() > 4 {
            let before: String = bytes[k.saturating_sub(40)..k].iter().collect();
            let call = before.strip_suffix(" at ").and_then(|b| b.rsplit(' ').next()).filter(|c| c.ends_with("()")).map(str::to_string);
            found.push((word, call));
        }
        k = end;
    }
    found
}

/// Whether `target` (a path, or `path:line[:column]`) names a file or
/// folder of the repository from `base`, and the line, if given, is in it
/// and holds `call` where the text says the call is there.
fn exists(base: &Path, target: &str, call: Option<&str>) -> bool {
    let mut parts = target.split(':');
    let path = parts.next().unwrap_or(target);
    let full = base.join(path);
    let inside = full.canonicalize().is_ok_and(|f| f.starts_with(root().canonicalize().unwrap()));
    if !inside {
        return false;
    }
    match parts.next().and_then(|l| l.parse::<usize>().ok()) {
        Some(line) => std::fs::read_to_string(&full).is_ok_and(|t| {
            let Some(text) = t.lines().nth(line.wrapping_sub(1)) else { return false };
            call.is_none_or(|c| text.contains(c.trim_start_matches("cg::")))
        }),
        None => true,
    }
}

#[test]
fn every_relative_link_and_repository_path_in_the_readme_and_docs_exists() {
    let mut missing = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let dir = doc.parent().unwrap();
        let name = doc.strip_prefix(root()).unwrap_or(&doc).display().to_string();
        for link in relative_links(&text) {
            if !exists(dir, &link, None) {
                missing.push(format!("{name}: link ({link})"));
            }
        }
        // Inside a fenced block a path:line is a transcript, often of an
        // edited file (a mistake made on purpose): only the file must exist.
        let prose: String = text.split("```").step_by(2).collect::<Vec<_>>().join("\n");
        // A block that is a file of another project (```` ```toml file=my-app/Cargo.toml ````,
        // your-own-kernel.md) holds that project's paths, not this repository's.
        let fenced: String =
            text.split("```").skip(1).step_by(2).filter(|block| !block.lines().next().unwrap_or("").contains("file=")).collect::<Vec<_>>().join("\n");
        let in_transcripts = paths(&fenced).into_iter().map(|(p, _)| (p.split(':').next().unwrap().to_string(), None));
        for (path, call) in paths(&prose).into_iter().chain(in_transcripts) {
            if !exists(&root(), &path, call.as_deref()) {
                missing.push(format!("{name}: {path}{}", call.map(|c| format!(" (said to hold {c})")).unwrap_or_default()));
            }
        }
    }
    assert!(missing.is_empty(), "these point at nothing in the repository:\n{}", missing.join("\n"));
}

#[test]
fn the_check_sees_a_missing_link_a_missing_path_a_wrong_line_and_a_path_outside() {
    let text = "see [the chapter](gone.md#part) and `docs/no-such-record/run.txt`, grid.sync() at gpu/src/lesson/lesson.rs:92:10, \
                [a site](https://example.com), `cargo run -p host`, records/runs{1,2}.txt, ../shared/peers/x.ptx";
    assert_eq!(relative_links(text), vec!["gone.md".to_string()]);
    let found = paths(text);
    let words: Vec<&str> = found.iter().map(|(w, _)| w.as_str()).collect();
    assert_eq!(words, vec!["docs/no-such-record/run.txt", "gpu/src/lesson/lesson.rs:92:10", "../shared/peers/x.ptx"]);
    assert_eq!(found[1].1.as_deref(), Some("grid.sync()"));
    assert!(!exists(&root().join("docs"), "gone.md", None));
    assert!(!exists(&root(), "docs/no-such-record/run.txt", None));
    assert!(exists(&root(), "gpu/src/lesson/lesson.rs:1", None), "a path with a line number is the file");
    assert!(!exists(&root(), "gpu/src/lesson/lesson.rs:100000", None), "a line past the file's end");
    assert!(!exists(&root(), "gpu/src/lesson/lesson.rs:1", Some("grid.sync()")), "a line that does not hold the call");
    assert!(!exists(&root(), "../shared/lesson.md", None), "outside the repository");
}

/// The README is the door, and the chapters hold the detail.
#[test]
fn the_readme_stays_within_300_lines() {
    let lines = std::fs::read_to_string(root().join("README.md")).unwrap().lines().count();
    assert!(lines <= 300, "README.md has {lines} lines, over 300: move detail into a chapter under docs/");
}

/// The times a paragraph of `text` gives in seconds (`14 s`, `1.6-1.9 s`,
/// `2 to 3 seconds`) without naming where they were measured (a record, a
/// script, a quoted run); a table may name it in the paragraph before it.
fn unsourced_times(text: &str) -> Vec<String> {
    let prose: String = text.split("```").step_by(2).collect::<Vec<_>>().join("\n");
    let sourced = |p: &str| ["records/", "scripts/", "output of:", "output in:"].iter().any(|s| p.contains(s));
    let mut found = Vec::new();
    let mut before = "";
    for paragraph in prose.split("\n\n") {
        let words: Vec<&str> = paragraph.split_whitespace().collect();
        let time = words.windows(2).enumerate().find_map(|(k, w)| {
            let number = w[0].trim_start_matches(['(', '`']);
            let is_number = !number.is_empty() && number.split(['-', '.']).all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
            let unit = w[1].trim_end_matches([',', '.', ';', ':', ')']);
            let range_to = k >= 2 && words[k - 1] == "to";
            (is_number && ["s", "seconds", "minutes"].contains(&unit))
                .then(|| if range_to { format!("{} to {} {unit}", words[k - 2], w[0]) } else { format!("{} {unit}", w[0]) })
        });
        let table_after_source = paragraph.trim_start().starts_with('|') && sourced(before);
        if let Some(time) = time.filter(|_| !sourced(paragraph) && !table_after_source) {
            found.push(time);
        }
        before = paragraph;
    }
    found
}

/// Every time the README and the exercise's chapter give was measured by a
/// script or a recorded run, which the paragraph names: a time typed by hand
/// goes stale as the code changes and says nothing of the machine's load.
#[test]
fn every_time_the_readme_and_the_exercise_give_names_its_source() {
    for doc in ["README.md", "docs/exercise.md"] {
        let times = unsourced_times(&std::fs::read_to_string(root().join(doc)).unwrap());
        assert!(times.is_empty(), "{doc}: {times:?} with no record or script in their paragraph");
    }
    assert_eq!(unsourced_times("an edit is back in 2\nto 3 seconds, most of them the run"), vec!["2 to 3 seconds"]);
    assert_eq!(unsourced_times("in 14 s on 2 cores (`records/x/ladder.txt`)"), Vec::<String>::new());
    assert_eq!(unsourced_times("measured (`scripts/measure-loop.sh`):\n\n| a | 87 s |"), Vec::<String>::new());
    assert_eq!(unsourced_times("| a | 87 s |"), vec!["87 s"]);
}
