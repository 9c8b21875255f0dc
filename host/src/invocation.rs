//! How this program is being run, so that every command it suggests runs as
//! written for the learner at hand: `cargo emulate ...` from the emulator's
//! build, `cargo run --release -p host -- ...` from the repository's build
//! (GPU and emulator alike), `cg-lesson ...` once installed (`cargo install
//! --path host`). A hint that repeats the learner's command (run it on the
//! emulator, run it on a GPU) repeats it as they typed it, with what the
//! change needs added or taken away, and names no flag they did not type.

use std::sync::OnceLock;

/// Where this program was started from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runner {
    /// The emulator's build (`cargo emulate`: no PTX, `--emulate` implied).
    CargoEmulate,
    /// The repository's build (`cargo run --release -p host`), GPU and emulator.
    CargoRun,
    /// An installed `cg-lesson`.
    Installed,
}

/// The flags that describe the emulated GPU, and take a value: they mean
/// nothing on a GPU.
pub const EMULATOR_FLAGS: [&str; 5] = ["--gpu", "--sms", "--threads-per-sm", "--blocks-per-sm", "--seed"];

impl Runner {
    /// This process's: the emulator's build by its feature; the
    /// repository's where cargo started it (`cargo run` and `cargo test` set
    /// `CARGO_MANIFEST_DIR` for what they run, wherever `CARGO_TARGET_DIR`
    /// puts the binary) or where the binary lies under a `target` folder;
    /// else an installed one.
    pub fn current() -> Runner {
        if cfg!(feature = "emulator-only") {
            return Runner::CargoEmulate;
        }
        let by_cargo = std::env::var_os("CARGO_MANIFEST_DIR").is_some();
        let in_target = std::env::current_exe().ok().is_some_and(|p| p.components().any(|c| c.as_os_str() == "target"));
        if by_cargo || in_target { Runner::CargoRun } else { Runner::Installed }
    }

    /// The command line that runs the program with `args` (the subcommand
    /// first, then its flags), on the emulated GPU if `emulated`, spelled as
    /// this runner is: `cargo emulate`, `cargo run --release -p host --
    /// --emulate` or `cg-lesson --emulate` for the emulator.
    pub fn command(self, args: &str, emulated: bool) -> String {
        let args = args.trim();
        let join = |prefix: &str| if args.is_empty() { prefix.to_string() } else { format!("{prefix} {args}") };
        match (self, emulated) {
            (Runner::Installed, true) => join("cg-lesson --emulate"),
            (Runner::Installed, false) => join("cg-lesson"),
            (Runner::CargoEmulate, true) => join("cargo emulate"),
            (Runner::CargoRun, true) => join("cargo run --release -p host -- --emulate"),
            (_, false) => join("cargo run --release -p host --"),
        }
    }

    /// Whether this runner puts `--emulate` on the command line itself
    /// (`cargo emulate` does: the learner never typed it).
    pub fn adds_emulate(self) -> bool {
        self == Runner::CargoEmulate
    }

    /// The words the learner typed, from the program's arguments (`args`,
    /// without the program's name): all of them, but for the `--emulate`
    /// that `cargo emulate` puts first.
    pub fn typed(self, args: &[String]) -> Vec<String> {
        match args {
            [first, rest @ ..] if self.adds_emulate() && first == "--emulate" => rest.to_vec(),
            _ => args.to_vec(),
        }
    }

    /// The learner's command again (`typed`: their words), on the emulated
    /// GPU if `emulated`, else on a GPU: `--emulate` and the flags of the
    /// other kind of device taken out, and the runner's spelling put in.
    pub fn again(self, typed: &[String], emulated: bool) -> String {
        let dropped: &[&str] = if emulated { &["--device"] } else { &EMULATOR_FLAGS };
        let mut words = Vec::new();
        let mut k = 0;
        while k < typed.len() {
            let word = &typed[k];
            let name = word.split('=').next().unwrap_or(word);
            k += 1;
            if word == "--emulate" || word == "--" {
                continue;
            }
            if dropped.contains(&name) {
                // Its value too, unless written `--flag=value`.
                if !word.contains('=') {
                    k += 1;
                }
                continue;
            }
            words.push(word.as_str());
        }
        self.command(&words.join(" "), emulated)
    }
}

/// The program's arguments as this process was started with them (without
/// the program's name), once `main` has [`record`]ed them.
static ARGS: OnceLock<Vec<String>> = OnceLock::new();

/// Keeps the program's arguments (`args`, starting with the program's name),
/// for the hints that repeat the learner's command.
pub fn record(args: &[String]) {
    let _ = ARGS.set(args.iter().skip(1).cloned().collect());
}

/// The words the learner typed after the runner's own ([`Runner::typed`]).
pub fn typed() -> Vec<String> {
    Runner::current().typed(ARGS.get().map_or(&[][..], Vec::as_slice))
}

/// [`Runner::command`] for this process.
pub fn command(args: &str, emulated: bool) -> String {
    Runner::current().command(args, emulated)
}

/// The learner's command again, on the emulated GPU ([`Runner::again`]).
pub fn again_emulated() -> String {
    Runner::current().again(&typed(), true)
}

/// The learner's command again, on a GPU ([`Runner::again`]).
pub fn again_on_a_gpu() -> String {
    Runner::current().again(&typed(), false)
}

/// The learner's command again on the same device, with `extra` words
/// added (`--variant reference`).
pub fn again_with(extra: &str) -> String {
    let runner = Runner::current();
    let typed = typed();
    let emulated = runner.adds_emulate() || typed.iter().any(|a| a == "--emulate");
    let words: Vec<String> = typed.into_iter().chain(extra.split_whitespace().map(String::from)).collect();
    runner.again(&words, emulated)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn each_runner_suggests_the_command_that_runs_it() {
        assert_eq!(Runner::CargoEmulate.command("conjugate-gradient", true), "cargo emulate conjugate-gradient");
        assert_eq!(Runner::CargoEmulate.command("bench", false), "cargo run --release -p host -- bench");
        // `cargo run --release -p host -- --emulate` is answered in its own words, not `cargo emulate`'s.
        assert_eq!(Runner::CargoRun.command("trace --gpu h200", true), "cargo run --release -p host -- --emulate trace --gpu h200");
        assert_eq!(Runner::CargoRun.command("", false), "cargo run --release -p host --");
        assert_eq!(Runner::Installed.command("--gpu h200", true), "cg-lesson --emulate --gpu h200");
        assert_eq!(Runner::Installed.command("exercise", false), "cg-lesson exercise");
        // The test binary runs from target/.
        assert_eq!(Runner::current(), Runner::CargoRun);
    }

    #[test]
    fn the_learners_command_is_repeated_as_typed_for_the_other_device() {
        // `cargo emulate` puts --emulate first; the learner typed the rest.
        assert_eq!(Runner::CargoEmulate.typed(&words("--emulate conjugate-gradient --bench")), words("conjugate-gradient --bench"));
        assert_eq!(Runner::CargoRun.typed(&words("--emulate exercise")), words("--emulate exercise"));
        let gpu = Runner::CargoEmulate.again(&words("conjugate-gradient --bench --gpu h200 --seed=3"), false);
        assert_eq!(gpu, "cargo run --release -p host -- conjugate-gradient --bench");
        let emulated = Runner::CargoRun.again(&words("exercise --device 1 --variant reference"), true);
        assert_eq!(emulated, "cargo run --release -p host -- --emulate exercise --variant reference");
        assert_eq!(Runner::Installed.again(&words("--emulate --n 5"), false), "cg-lesson --n 5");
        assert_eq!(Runner::CargoRun.again(&[], true), "cargo run --release -p host -- --emulate");
    }
}
