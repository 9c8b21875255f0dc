use clap::FromArgMatches;
use host::cli::{BenchArgs, Cli, Command, MultiArgs, TargetArgs};
use host::device::Gpu;
use host::error::{Error, Result};
use host::exercise::{self, Variant};
use host::lesson::{self, LessonConfig};
use host::progress::Progress;
use host::{bench, json, report};
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

// The kernels, which the host library reaches through `host::kernels()`.
use cg_launcher::error::Error as L;
use gpu as _;
use gpu_ptx as _;

/// The learner's `solve()`: compiled into this program, not the library, so
/// that an edit to it rebuilds only this small crate.
#[path = "../../exercise/solve.rs"]
mod solve;

fn main() -> ExitCode {
    // `cargo emulate trace --gpu h200` runs `cg-lesson --emulate trace --gpu h200`:
    // flags may come before the subcommand too.
    let typed: Vec<String> = std::env::args().collect();
    host::invocation::record(&typed);
    if let Some(why) = host::cli::explain_misuse(&typed) {
        eprintln!("error: {why}");
        return ExitCode::from(2);
    }
    let runner = host::invocation::Runner::current();
    let parsed = host::cli::command_for(runner).try_get_matches_from(host::cli::flags_after_the_subcommand(typed));
    let cli = match parsed.and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(cli) => cli,
        // Help and --version print as clap writes them; a mistake is one line.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            eprintln!("{}", host::cli::one_line_as(runner, &e.to_string()));
            return ExitCode::from(2);
        }
    };
    // A #[kernel] edited to disagree with how this program launches it.
    if let Err(e) = host::kernels::check() {
        eprintln!("error: {}", host::kernels::explain(&e));
        return ExitCode::FAILURE;
    }
    // The lesson and the exercise print the seed in their headings; the
    // other subcommands print here the one `--seed random` drew.
    let seed = match &cli.command {
        Some(Command::Trace { target, .. } | Command::Occupancy { target }) => target.emulation.seed,
        Some(Command::ConjugateGradient(args)) => args.target.emulation.seed,
        Some(Command::MultiGpu(args)) => args.emulation.seed,
        None | Some(Command::Exercise { .. } | Command::Bench(_)) => None,
    };
    if let Some(seed) = seed.filter(|_| host::invocation::typed().iter().any(|a| a == "random" || a == "--seed=random")) {
        eprintln!("--seed random drew {seed}: --seed {seed} repeats this run");
    }
    let result = match cli.command {
        None => run_lesson(&cli),
        Some(Command::Exercise { variant, ref target }) => run_exercise(variant, target),
        Some(Command::Bench(ref args)) => run_bench(args),
        Some(Command::Trace { ref out, ref target }) => run_trace(out, target),
        Some(Command::Occupancy { ref target }) => run_occupancy(target),
        Some(Command::ConjugateGradient(ref args)) => run_conjugate_gradient(args),
        Some(Command::MultiGpu(ref args)) => run_multi(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = std::io::stdout().flush();
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn open(target: &TargetArgs) -> Result<Gpu> {
    let timeout = Duration::from_secs_f64(target.timeout_s);
    let e = &target.emulation;
    if e.emulate {
        let options = cg_emulator::Options { seed: e.seed, timeout, ..Default::default() };
        return Ok(Gpu::emulated(e.device(), options));
    }
    let gpu = Gpu::open(target.device)?;
    gpu.set_timeout(timeout);
    Ok(gpu)
}

/// Prints `text` now (the output appears as it is computed).
fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Writes `text` to `name` in `dir`, making `dir` if it is missing: the path written.
fn save(dir: &std::path::Path, name: &str, text: &str) -> Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir).map_err(|error| Error::Io { path: dir.display().to_string(), error })?;
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|error| Error::Io { path: path.display().to_string(), error })?;
    Ok(path)
}

fn run_lesson(cli: &Cli) -> Result<()> {
    let gpu = open(&cli.target)?;
    let emulated = gpu.info.emulated;
    let l = &cli.lesson;
    let cfg = LessonConfig {
        n: l.n,
        threads_per_block: l.threads_per_block,
        runs: l.runs.unwrap_or(if emulated { 0 } else { 10 }) as usize,
        warmups: l.warmups.unwrap_or(if emulated { 0 } else { 3 }) as usize,
    };
    let json = cli.target.json;
    let progress = Progress::new(json);
    let mut step = None;
    let r = lesson::run(&gpu, cfg, &mut |r, section| {
        step = None;
        if !json {
            emit(&report::section(r, section));
        }
        step = Some(progress.spinner(match section {
            lesson::Section::Device => "asking the device how big a cooperative grid fits",
            lesson::Section::Capacity => "probing this_grid() under each launch",
            lesson::Section::Probes => "filling the input and summing it both ways",
            lesson::Section::Sums => "running coalesced_threads()",
            lesson::Section::Coalesced => "timing both sums",
            lesson::Section::Timing => "the cluster level",
            lesson::Section::Clusters | lesson::Section::Checks => "",
        }));
    })?;
    drop(step);
    if json {
        emit(&(json::to_string(&r) + "\n"));
    }
    r.verdict()
}

fn run_exercise(variant: Variant, target: &TargetArgs) -> Result<()> {
    let gpu = open(target)?;
    // A device that cannot run the exercise's block at all is one error, not nine.
    gpu.cooperative_kernel(&host::kernels().exercise_sum)?.limits(256)?;
    let mut r = exercise_ladder(&gpu, variant, &exercise::LADDER, target.json, None)?;
    if let Some(n) = r.stuck.filter(|_| exercise::needs_larger_device(&gpu).unwrap_or(false)) {
        // A kernel that does not finish would wait out a timeout there too.
        if !target.json {
            emit(&format!("\nNot run on the larger emulated GPU either, since the kernel did not finish at n = {n}\n"));
        }
    } else if exercise::needs_larger_device(&gpu)? {
        let options = cg_emulator::Options { seed: target.emulation.seed, timeout: Duration::from_secs_f64(target.timeout_s), ..Default::default() };
        let larger = Gpu::emulated(exercise::LARGER_DEVICE, options);
        if !target.json {
            emit(&exercise::larger_device_header_on(&larger, &r)?);
        }
        r.larger_device = Some(Box::new(exercise_ladder(&larger, variant, &exercise::LARGER_DEVICE_SIZES, target.json, Some(&r))?));
        r.status = host::checks::Status::of(r.verdict().is_ok());
    }
    if let Some(counts) = exercise::counts_to_submit(&r)
        && !target.json
    {
        emit(&counts);
    }
    if target.json {
        emit(&(json::to_string(&r) + "\n"));
    }
    r.verdict()
}

/// The exercise's `sizes` on `gpu`, each row printed as it is judged.
fn exercise_ladder(gpu: &Gpu, variant: Variant, sizes: &[u64], json: bool, earlier: Option<&exercise::ExerciseReport>) -> Result<exercise::ExerciseReport> {
    let progress = Progress::new(json);
    let bar = progress.bar(sizes.len() as u64, "cases");
    // The header waits for the first case: an unwritten solve() stops the
    // ladder before it, with one line.
    let mut first = true;
    // On the emulator the ladder's largest sizes take seconds each: once a
    // size has failed (here, or on the first device), they are left out.
    let skip = match gpu.info.emulated {
        true => exercise::Skip { failed: earlier.and_then(|e| e.smallest_failure), ..exercise::Skip::ON_THE_EMULATOR },
        false => exercise::Skip::NEVER,
    };
    let r = exercise::run_sizes_skipping(gpu, variant, solve::solve, sizes, skip, &mut |case| {
        bar.advance(format!("n = {}", case.n));
        if !json {
            if std::mem::take(&mut first) {
                emit(&exercise::header(&gpu.info.name, variant, gpu.info.seed));
            }
            emit(&exercise::row(case));
        }
    })?;
    drop(bar);
    if !json {
        emit(&exercise::footer(&r, earlier));
    }
    Ok(r)
}

fn run_trace(out: &std::path::Path, target: &TargetArgs) -> Result<()> {
    let n = 4_194_915;
    let e = &target.emulation;
    let r = if e.emulate {
        let options = cg_emulator::Options { seed: e.seed, timeout: Duration::from_secs_f64(target.timeout_s), ..Default::default() };
        let gpu = Gpu::emulated_traced(e.device(), options);
        host::trace::run(&gpu, None, Some((e.device(), options)), n, out)?
    } else {
        let gpu = Gpu::open_traced(target.device, host::observe::Tracing::Read)?;
        gpu.set_timeout(Duration::from_secs_f64(target.timeout_s));
        let plain = Gpu::open(target.device)?;
        let unread = Gpu::open_traced(target.device, host::observe::Tracing::Unread)?;
        host::trace::run(&gpu, Some((&plain, &unread)), None, n, out)?
    };
    emit(&host::trace::render(&r));
    Ok(())
}

fn run_conjugate_gradient(args: &host::cli::ConjugateGradientArgs) -> Result<()> {
    use host::conjugate_gradient as solver;
    let gpu = open(&args.target)?;
    let emulated = gpu.info.emulated;
    let settings = match args.poisson {
        Some(m) => solver::Settings {
            problem: solver::Problem::Poisson,
            n: m.saturating_mul(m),
            tolerance: args.tolerance.unwrap_or(solver::POISSON_RELATIVE_TOLERANCE * m as f64),
            max_iterations: args.max_iterations,
            seed: args.matrix_seed,
        },
        None => solver::Settings {
            problem: solver::Problem::Tridiagonal,
            n: args.n.unwrap_or(if emulated { 4096 } else { solver::DEFAULT_N }),
            tolerance: args.tolerance.unwrap_or(1e-5),
            max_iterations: args.max_iterations,
            seed: args.matrix_seed,
        },
    };
    if !args.bench {
        let r = solver::run(&gpu, settings, &solver::Path::for_problem(settings.problem), &[], None)?;
        emit(&if args.target.json { json::to_string(&r) + "\n" } else { solver::render(&r) });
        return r.verdict();
    }
    if emulated {
        return Err(Error::Launch(L::NotOnEmulator("timing the conjugate-gradient paths")));
    }
    let sizes: Vec<usize> = match settings.problem {
        // Grids of 128 x 128 (N = 2^14) doubling up to the one asked for.
        solver::Problem::Poisson => (7..=11).map(|k| 1usize << k).filter(|&m| m * m <= settings.n).map(|m| m * m).collect(),
        solver::Problem::Tridiagonal => (10..=args.max_log2).map(|k| 1usize << k).collect(),
    };
    let twin = if args.no_cpp { Err("--no-cpp".to_string()) } else { solver::Twin::build(&gpu)? };
    if let Err(why) = &twin {
        eprintln!("note: the C++ twin is left out: {why}");
    }
    let rows = solver::bench(&gpu, &sizes, args.rounds as usize, settings, twin.as_ref().ok(), &mut |r| {
        if !args.target.json {
            eprintln!("N = {}: done", r.n);
        }
    })?;
    let report = solver::BenchReport {
        device: gpu.info.name.clone(),
        driver: gpu.info.driver_version.clone(),
        rounds: args.rounds,
        threads_per_block: solver::THREADS_PER_BLOCK,
        tolerance: settings.tolerance,
        max_iterations: settings.max_iterations,
        matrix_seed: settings.seed,
        cpp_twin_left_out: twin.as_ref().err().cloned(),
        rows,
    };
    let body = json::to_string(&report);
    save(&args.out, "conjugate-gradient.json", &body)?;
    solver::svg(&gpu.info.name, &report.rows, &args.out.join("conjugate-gradient.svg"))?;
    emit(&if args.target.json { body + "\n" } else { solver::render_bench(&gpu.info.name, &report.rows) });
    Ok(())
}

fn run_occupancy(target: &TargetArgs) -> Result<()> {
    let gpu = open(target)?;
    let rows = host::occupancy::run(&gpu)?;
    emit(&if target.json {
        json::to_string(&rows) + "\n"
    } else {
        host::occupancy::render(&gpu.info.name, &rows, gpu.info.emulated.then(|| host::kernels().ptx.ptxas_sm75.map(|_| ())))
    });
    Ok(())
}

/// `bench --only-clusters`: the cluster sum against its C++ twin, into clusters.json.
fn run_cluster_bench(gpu: &Gpu, args: &BenchArgs) -> Result<()> {
    if !gpu.info.clusters {
        return Err(Error::Launch(L::ClustersNeedSm90 {
            kernel: host::kernels().reduce_cluster_grid.name(),
            major: gpu.info.compute_capability.map_or(0, |c| c.0),
            minor: gpu.info.compute_capability.map_or(0, |c| c.1),
        }));
    }
    let progress = Progress::new(args.json);
    let c = {
        let _step = progress.spinner("the sum with a cluster stage against its C++ twin");
        bench::clusters::run(gpu, args.threads_per_block, args.max_log2, args.rounds.max(1) as usize, args.round_runs as usize)?
    };
    let text = json::to_string(&c) + "\n";
    let saved = save(&args.out, "clusters.json", &text)?;
    emit(&if args.json { text } else { bench::clusters::render(&c) });
    eprintln!("results written to {}", saved.display());
    Ok(())
}

fn run_bench(args: &BenchArgs) -> Result<()> {
    let gpu = Gpu::open(args.device).map_err(|e| match Error::from(e) {
        Error::Launch(L::NoDriver) => Error::BenchNeedsGpu,
        e => e,
    })?;
    gpu.set_timeout(Duration::from_secs_f64(args.timeout_s));
    if args.only_clusters {
        return run_cluster_bench(&gpu, args);
    }
    let only = args.only_barrier;
    let cfg = bench::BenchConfig {
        sizes: if only { Vec::new() } else { bench::default_sizes(args.min_log2, args.max_log2) },
        runs: args.runs as usize,
        warmups: args.warmups as usize,
        rotate: (args.rotate > 0).then_some(args.rotate as usize),
        threads_per_block: args.threads_per_block,
        cpp: !args.no_cpp && !only,
        sweeps: !args.no_sweeps && !only,
        oxide: args.oxide.clone(),
        rounds: if only { 0 } else { args.rounds as usize },
        round_runs: args.round_runs as usize,
        round_warmups: 3,
        clusters: !only,
    };
    let progress = Progress::new(args.json);
    let r = bench::run(&gpu, &cfg, &progress)?;
    let text = json::to_string(&r) + "\n";
    let saved = save(&args.out, "bench.json", &text)?;
    let svg = args.out.join("bench.svg");
    let title = format!("Sum of n floats on {} (median of {} runs)", gpu.info.name, cfg.runs);
    if !r.points.is_empty() {
        bench::plot::svg(&r.points, &title, &svg)?;
    }
    emit(&if args.json { text } else { bench::render(&r) });
    if r.points.is_empty() {
        eprintln!("results written to {}", saved.display());
    } else {
        eprintln!("plot written to {}, results to {}", svg.display(), saved.display());
    }
    Ok(())
}

fn run_multi(a: &MultiArgs) -> Result<()> {
    use host::multi::{self, MultiConfig, NcclMode};
    // Before any thread starts: NCCL reads its environment on each rank's thread.
    // SAFETY: no other thread exists yet.
    unsafe { host::nccl::keep_multicast_off() };
    let e = &a.emulation;
    let timeout = Duration::from_secs_f64(a.timeout_s);
    let nccl = match (a.rank, a.ranks, &a.nccl_id) {
        (Some(rank), Some(ranks), Some(id_file)) if rank < ranks => NcclMode::Process { rank, ranks, id_file: id_file.clone() },
        (Some(rank), Some(ranks), _) => return Err(Error::RankOutOfRange { flag: "--rank", rank, ranks }),
        _ if a.no_nccl => NcclMode::Off,
        _ => NcclMode::InProcess,
    };
    let process = matches!(nccl, NcclMode::Process { .. });
    let count = if e.emulate { None } else { Some(host::device::cuda_device_count()? as u32) };
    let gpus = match (count, a.gpus) {
        _ if process => 1,
        (None, g) => g.unwrap_or(2),
        (Some(0), _) => return Err(Error::Launch(L::NoDevice { requested: 0, count: 0 })),
        (Some(count), Some(g)) if g > count => return Err(Error::TooManyGpus { requested: g, count }),
        (Some(count), g) => g.unwrap_or(count),
    };
    let cfg = MultiConfig {
        n: a.n,
        threads_per_block: a.threads_per_block,
        warmups: a.warmups.unwrap_or(if e.emulate { 0 } else { 3 }) as usize,
        runs: a.runs.unwrap_or(if e.emulate { 1 } else { 10 }) as usize,
        nccl,
        sweep: match (a.no_sweep, a.max_log2, e.emulate) {
            (true, _, _) | (false, None, true) => None,
            (false, hi, _) => Some((a.min_log2, hi.unwrap_or(36))),
        },
        never_launch: a.never_launch,
        without_barrier_across: false,
        timeout,
        emulated: e.emulate,
    };
    if let Some((lo, hi)) = cfg.sweep.filter(|(lo, hi)| lo > hi) {
        return Err(Error::BadSweep { lo, hi });
    }
    if gpus == 1 && !process && !a.json {
        let why = match count {
            Some(1) => "only one GPU here (the driver reports 1)".to_string(),
            Some(_) => "one GPU asked for (--gpus 1)".to_string(),
            None => "one emulated GPU (--gpus 1)".to_string(),
        };
        emit(&format!("{why}: everything runs on it alone (the barrier across GPUs meets only itself), and there is no sweep\n\n"));
    }
    let device = |rank: u32| match (a.device, count) {
        (Some(d), _) => d,
        (None, Some(c)) if process => rank as usize % c.max(1) as usize,
        _ => rank as usize,
    };
    let open = |local: u32| -> Result<Gpu> {
        if e.emulate {
            let options = cg_emulator::Options { seed: e.seed, timeout, ..Default::default() };
            return Ok(Gpu::emulated(e.device(), options));
        }
        let rank = a.rank.unwrap_or(local);
        let gpu = Gpu::open(if process { device(rank) } else { local as usize })?;
        gpu.set_timeout(timeout);
        Ok(gpu)
    };
    let progress = Progress::new(a.json);
    let spinner = progress.spinner("opening the GPUs");
    let r = multi::run(&cfg, gpus, &open, &|what| spinner.say(what))?;
    drop(spinner);
    emit(&if a.json { json::to_string(&r) + "\n" } else { multi::render::render(&r) });
    r.verdict()
}
