use clap::Parser;
use host::cli::{Cli, Command};
use host::device::Gpu;
use host::error::Result;
use host::{exercise, lesson, report};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> Result<()> {
    let gpu = Gpu::open(cli.device)?;
    gpu.set_timeout(std::time::Duration::from_secs_f64(cli.timeout_s));
    match cli.command {
        None => {
            let l = &cli.lesson;
            let cfg = lesson::LessonConfig { n: l.n, threads: l.block, runs: l.runs as usize, warmups: l.warmups as usize };
            let r = lesson::run(&gpu, cfg)?;
            print!("{}", if cli.json { report::json(&r) + "\n" } else { report::lesson(&r) });
            r.verdict()
        }
        Some(Command::Exercise { variant }) => {
            let r = exercise::run(&gpu, variant)?;
            print!("{}", if cli.json { report::json(&r) + "\n" } else { exercise::render(&r) });
            r.verdict()
        }
    }
}
