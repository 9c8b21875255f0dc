use clap::Parser;
use host::cli::{Cli, Command};
use host::device::Gpu;
use host::error::Result;
use host::{bench, exercise, lesson, report};
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
    let gpu = if cli.emulation.emulate { Gpu::emulated(cli.emulation.device()) } else { Gpu::open(cli.device)? };
    gpu.set_timeout(std::time::Duration::from_secs_f64(cli.timeout_s));
    match cli.command {
        None => {
            let l = &cli.lesson;
            let cfg = lesson::LessonConfig { n: l.n, threads: l.block, runs: l.runs as usize, warmups: l.warmups as usize };
            let r = lesson::run(&gpu, cfg)?;
            print!("{}", if cli.json { report::json(&r) + "\n" } else { report::lesson(&r) });
            r.verdict()
        }
        Some(Command::Bench { .. }) if gpu.info.emulated => Err(host::error::Error::NotOnEmulator("bench")),
        Some(Command::Bench { runs, warmups, rotate, max_log2, block, ref plot, no_cpp, no_sweeps }) => {
            let cfg = bench::BenchConfig {
                sizes: bench::default_sizes(max_log2),
                runs: runs as usize,
                warmups: warmups as usize,
                rotate: (rotate > 0).then_some(rotate as usize),
                threads: block,
                plot: plot.clone(),
                cpp: !no_cpp,
                sweeps: !no_sweeps,
            };
            let r = bench::run(&gpu, &cfg)?;
            let json = report::json(&r) + "\n";
            let saved = cfg.plot.with_extension("json");
            std::fs::write(&saved, &json).map_err(|e| host::error::Error::Plot(format!("{}: {e}", saved.display())))?;
            print!("{}", if cli.json { json } else { bench::render(&r) });
            eprintln!("plot written to {}, results to {}", r.plot, saved.display());
            Ok(())
        }
        Some(Command::Exercise { variant }) => {
            let r = exercise::run(&gpu, variant)?;
            print!("{}", if cli.json { report::json(&r) + "\n" } else { exercise::render(&r) });
            r.verdict()
        }
    }
}
