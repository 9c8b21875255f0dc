//! How this program is being run, so that every command it suggests runs as
//! written for the learner at hand: `cargo emulate ...` from the emulator's
//! build, `cargo run --release -p host -- ...` from the repository's GPU
//! build, `cg-lesson ...` once installed (`cargo install --path host`).

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

impl Runner {
    /// This process's: the emulator's build by its feature, the repository's
    /// by a binary under a `target` folder, else an installed one.
    pub fn current() -> Runner {
        if cfg!(feature = "emulator-only") {
            return Runner::CargoEmulate;
        }
        let in_target = std::env::current_exe().ok().is_some_and(|p| p.components().any(|c| c.as_os_str() == "target"));
        if in_target { Runner::CargoRun } else { Runner::Installed }
    }

    /// The command line that runs the program with `args` (the subcommand
    /// first, then its flags), on the emulated GPU if `emulated`.
    pub fn command(self, args: &str, emulated: bool) -> String {
        let args = args.trim();
        let join = |prefix: &str| if args.is_empty() { prefix.to_string() } else { format!("{prefix} {args}") };
        match (self, emulated) {
            (Runner::Installed, true) => join("cg-lesson --emulate"),
            (Runner::Installed, false) => join("cg-lesson"),
            (_, true) => join("cargo emulate"),
            (_, false) => join("cargo run --release -p host --"),
        }
    }
}

/// [`Runner::command`] for this process.
pub fn command(args: &str, emulated: bool) -> String {
    Runner::current().command(args, emulated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_runner_suggests_the_command_that_runs_it() {
        assert_eq!(Runner::CargoEmulate.command("conjugate-gradient", true), "cargo emulate conjugate-gradient");
        assert_eq!(Runner::CargoEmulate.command("bench", false), "cargo run --release -p host -- bench");
        assert_eq!(Runner::CargoRun.command("trace --gpu h200", true), "cargo emulate trace --gpu h200");
        assert_eq!(Runner::CargoRun.command("", false), "cargo run --release -p host --");
        assert_eq!(Runner::Installed.command("--gpu h200", true), "cg-lesson --emulate --gpu h200");
        assert_eq!(Runner::Installed.command("exercise", false), "cg-lesson exercise");
        // The test binary runs from target/.
        assert_eq!(Runner::current(), Runner::CargoRun);
    }
}
