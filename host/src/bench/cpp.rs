//! The C++ side of the comparison: `host/cpp/bench.cu` (with `lesson.cu`)
//! built with `nvcc` and run on the same sizes, input formula, rotation and
//! timing.

use super::{BenchConfig, Case, Point, Variant};
use crate::reference;
use crate::timing::Stats;
use std::process::Command;

const LESSON: &str = include_str!("../../cpp/lesson.cu");
const BENCH: &str = include_str!("../../cpp/bench.cu");
const BARRIER: &str = include_str!("../../cpp/barrier.cu");
const CLUSTER: &str = include_str!("../../cpp/cluster.cu");
const CONJUGATE_GRADIENT: &str = include_str!("../../cpp/conjugate_gradient.cu");

/// A folder of sources written for nvcc and what it built there, removed
/// when dropped.
struct WorkDir(std::path::PathBuf);

impl Drop for WorkDir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// Checks that nvcc runs, then writes `sources` (name, text) into a new
/// folder named for `tag` and this process.
fn work_dir(tag: &str, sources: &[(&str, &str)]) -> Result<WorkDir, String> {
    if Command::new("nvcc").arg("--version").output().map(|o| !o.status.success()).unwrap_or(true) {
        return Err("nvcc is not on PATH".into());
    }
    let dir = std::env::temp_dir().join(format!("cg-bench-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dir = WorkDir(dir);
    for (name, text) in sources {
        std::fs::write(dir.0.join(name), text).map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(dir)
}

/// NVIDIA's barrier alone (`host/cpp/barrier.cu`), built to a cubin.
pub struct BarrierCubin {
    _dir: WorkDir,
    pub cubin: std::path::PathBuf,
}

/// Builds [`BarrierCubin`]; `Err` says why it could not be.
pub fn build_barrier() -> Result<BarrierCubin, String> {
    let dir = work_dir("barrier", &[("barrier.cu", BARRIER)])?;
    let cubin = dir.0.join("barrier.cubin");
    nvcc(&["-O3", "-std=c++17", "-arch=native", "-cubin"], &cubin, &dir.0.join("barrier.cu"))?;
    Ok(BarrierCubin { _dir: dir, cubin })
}

/// The C++ twin of the cluster sum (`host/cpp/cluster.cu`, with `lesson.cu`), built to a cubin for sm_90.
pub struct ClusterCubin {
    _dir: WorkDir,
    pub cubin: std::path::PathBuf,
}

/// The cluster sum's kernel in [`ClusterCubin`].
pub const CLUSTER_KERNEL: &str = "reduceClusterGrid";

/// Builds [`ClusterCubin`]; `Err` says why it could not be.
pub fn build_cluster() -> Result<ClusterCubin, String> {
    let dir = work_dir("cluster", &[("lesson.cu", LESSON), ("cluster.cu", CLUSTER)])?;
    let cubin = dir.0.join("cluster.cubin");
    nvcc(&["-O3", "-std=c++17", "-arch=native", "-cubin"], &cubin, &dir.0.join("cluster.cu"))?;
    Ok(ClusterCubin { _dir: dir, cubin })
}

/// The C++ twin of the persistent conjugate-gradient kernel
/// (`host/cpp/conjugate_gradient.cu`), built to a cubin for this machine's GPU.
pub struct ConjugateGradientCubin {
    _dir: WorkDir,
    pub cubin: std::path::PathBuf,
}

/// The twin's kernel in [`ConjugateGradientCubin`].
pub const CONJUGATE_GRADIENT_KERNEL: &str = "conjugateGradientPersistent";
/// The fused kernel's twin in [`ConjugateGradientCubin`].
pub const CONJUGATE_GRADIENT_FUSED_KERNEL: &str = "conjugateGradientFused";
/// The resident fused kernel's twin, `__launch_bounds__(256, 8)` as the Rust kernel's.
pub const CONJUGATE_GRADIENT_FUSED_RESIDENT_KERNEL: &str = "conjugateGradientFusedResident";

/// Builds [`ConjugateGradientCubin`], with `__launch_bounds__(max_threads,
/// min_blocks)` where the Rust kernel declares `bounds`; `Err` says why it could not be.
pub fn build_conjugate_gradient(bounds: Option<(u32, u32)>) -> Result<ConjugateGradientCubin, String> {
    let dir = work_dir("conjugate-gradient", &[("conjugate_gradient.cu", CONJUGATE_GRADIENT)])?;
    let cubin = dir.0.join("conjugate_gradient.cubin");
    let defines: Vec<String> = bounds.map_or(Vec::new(), |(max, min)| vec![format!("-DMAX_THREADS={max}"), format!("-DMIN_BLOCKS={min}")]);
    let flags: Vec<&str> = ["-O3", "-std=c++17", "-arch=native", "-cubin"].into_iter().chain(defines.iter().map(String::as_str)).collect();
    nvcc(&flags, &cubin, &dir.0.join("conjugate_gradient.cu"))?;
    Ok(ConjugateGradientCubin { _dir: dir, cubin })
}

/// The C++ kernels' names in the cubin: stage 1, stage 2, cooperative.
pub const KERNELS: [&str; 3] = ["reduceBlocksToPartials", "reducePartialsToTotal", "reduceCooperativeGrid"];

/// One `RESULT` line of the C++ program.
#[derive(Clone, Debug, PartialEq)]
pub struct CppResult {
    pub variant: String,
    pub method: String,
    pub n: u64,
    pub rotate: usize,
    pub stats: Stats,
    pub blocks: u32,
    pub min_total: f32,
    pub max_total: f32,
    pub nan_totals: u32,
}

/// Parses the program's `RESULT` lines; other lines are ignored.
pub fn parse(stdout: &str) -> Result<Vec<CppResult>, String> {
    stdout
        .lines()
        .filter(|l| l.starts_with("RESULT "))
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let bad = || format!("unreadable C++ result line: {line}");
            if f.len() != 14 {
                return Err(bad());
            }
            let num = |i: usize| f[i].parse::<f64>().map_err(|_| bad());
            Ok(CppResult {
                variant: f[1].to_string(),
                method: f[2].to_string(),
                n: f[3].parse().map_err(|_| bad())?,
                rotate: f[4].parse().map_err(|_| bad())?,
                stats: Stats { median_ms: num(5)?, min_ms: num(6)?, max_ms: num(7)?, mean_ms: num(8)?, runs: f[9].parse().map_err(|_| bad())? },
                blocks: f[10].parse().map_err(|_| bad())?,
                min_total: f[11].parse().map_err(|_| bad())?,
                max_total: f[12].parse().map_err(|_| bad())?,
                nan_totals: f[13].parse().map_err(|_| bad())?,
            })
        })
        .collect()
}

/// The C++ side, built: the benchmark program, and a cubin of the lesson's
/// kernels that `bench` also launches itself.
pub struct Build {
    _dir: WorkDir,
    exe: std::path::PathBuf,
    pub cubin: std::path::PathBuf,
}

fn nvcc(args: &[&str], out: &std::path::Path, src: &std::path::Path) -> Result<(), String> {
    let build = Command::new("nvcc").args(args).arg("-o").arg(out).arg(src).output().map_err(|e| format!("nvcc: {e}"))?;
    if !build.status.success() {
        return Err(format!("nvcc failed: {}", String::from_utf8_lossy(&build.stderr).lines().take(5).collect::<Vec<_>>().join(" / ")));
    }
    Ok(())
}

/// Builds the C++ benchmark and the lesson's cubin; `Err` says why it could not.
pub fn build() -> Result<Build, String> {
    let dir = work_dir("cpp", &[("lesson.cu", LESSON), ("bench.cu", BENCH)])?;
    let (exe, cubin) = (dir.0.join("bench_cpp"), dir.0.join("lesson.cubin"));
    nvcc(&["-O3", "-std=c++17", "-arch=native"], &exe, &dir.0.join("bench.cu"))?;
    nvcc(&["-O3", "-std=c++17", "-arch=native", "-cubin"], &cubin, &dir.0.join("lesson.cu"))?;
    Ok(Build { _dir: dir, exe, cubin })
}

/// Parses the program's `LAUNCH` lines.
pub fn parse_launch_costs(stdout: &str) -> Result<Vec<super::launch_cost::LaunchCost>, String> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("LAUNCH "))
        .map(|line| {
            let bad = || format!("unreadable C++ launch line: {line}");
            // The call's name has spaces; the seven numbers are the last fields.
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 9 {
                return Err(bad());
            }
            let k = f.len() - 7;
            Ok(super::launch_cost::LaunchCost {
                path: f[..k].join(" "),
                cooperative: f[k] == "1",
                blocks: f[k + 1].parse().map_err(|_| bad())?,
                launches: f[k + 2].parse().map_err(|_| bad())?,
                submit_us: f[k + 3].parse().map_err(|_| bad())?,
                total_us: f[k + 4].parse().map_err(|_| bad())?,
                held_us: f[k + 5].parse().map_err(|_| bad())?,
                gpu_us: f[k + 6].parse().map_err(|_| bad())?,
            })
        })
        .collect()
}

/// The C++ program's launch costs; `Err` says why they could not be measured.
pub fn launch_costs(build: &Build, threads_per_block: u32) -> Result<Vec<super::launch_cost::LaunchCost>, String> {
    let out = Command::new(&build.exe)
        .args(["launch-cost", &super::launch_cost::LAUNCHES.to_string(), &threads_per_block.to_string()])
        .output()
        .map_err(|e| format!("{}: {e}", build.exe.display()))?;
    if !out.status.success() {
        return Err(format!("the C++ launch cost failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    parse_launch_costs(&String::from_utf8_lossy(&out.stdout))
}

/// Runs the C++ benchmark; `Err` says why it could not.
pub(crate) fn run(build: &Build, cfg: &BenchConfig, cases: &[Case]) -> Result<Vec<Point>, String> {
    let exe = &build.exe;
    let out = Command::new(exe)
        .arg(cfg.runs.to_string())
        .arg(cfg.warmups.to_string())
        .arg(cfg.threads_per_block.to_string())
        .args(cases.iter().map(|c| format!("{}:{}", c.n, c.rotate)))
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!("the C++ benchmark failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let results = parse(&String::from_utf8_lossy(&out.stdout))?;
    let mut points = Vec::new();
    for &Case { n, sum, abs, .. } in cases {
        for (name, variant) in [
            ("cpp-two-launches", Variant::CppTwoLaunches),
            ("cpp-cooperative", Variant::CppCooperative),
            ("cpp-two-launches-graph", Variant::CppTwoLaunchesGraph),
            ("cpp-cooperative-graph", Variant::CppCooperativeGraph),
            ("cub-device-reduce", Variant::Cub),
        ] {
            let find = |method: &str| results.iter().find(|r| r.n == n && r.variant == name && r.method == method);
            let (Some(q), Some(w)) = (find("queued"), find("waited")) else { continue };
            // CUB's order of additions is its own: bound it as any order of summation.
            let chain = if q.blocks == 0 { n.max(1) } else { reference::longest_chain(n as usize, q.blocks, cfg.threads_per_block, 32) };
            let bound = reference::error_bound(chain, abs);
            let ok = q.nan_totals == 0 && [q.min_total, q.max_total].iter().all(|&t| reference::check(t, sum, bound).pass);
            points.push(Point::new(variant, n, q.rotate, q.blocks, cfg.threads_per_block, q.stats, w.stats, Some(ok)));
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_parse_and_other_lines_are_ignored() {
        let out = "building\nRESULT cpp-cooperative queued 1024 256 0.007900 0.007000 0.009000 0.008000 20 4 1023.5 1023.5 0\nnoise\n";
        let r = parse(out).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].variant.as_str(), r[0].method.as_str(), r[0].n, r[0].rotate, r[0].blocks), ("cpp-cooperative", "queued", 1024, 256, 4));
        assert_eq!((r[0].stats.median_ms, r[0].stats.runs, r[0].min_total, r[0].nan_totals), (0.0079, 20, 1023.5, 0));
    }

    #[test]
    fn launch_lines_parse_with_spaces_in_the_call() {
        let r =
            parse_launch_costs("LAUNCH cpp: <<<>>> 0 1056 10000 2.1000 2.3000 1.2000 0.9\nLAUNCH cpp: cudaLaunchKernelEx 1 1 10000 2.5 2.6 nan 1.0\n").unwrap();
        assert_eq!((r[0].path.as_str(), r[0].cooperative, r[0].blocks, r[0].submit_us, r[0].held_us, r[0].gpu_us), ("cpp: <<<>>>", false, 1056, 2.1, 1.2, 0.9));
        assert!(r[1].held_us.is_nan());
        assert_eq!((r[1].path.as_str(), r[1].cooperative), ("cpp: cudaLaunchKernelEx", true));
    }

    #[test]
    fn a_malformed_result_line_is_an_error_naming_it() {
        let err = parse("RESULT cpp-cooperative 1024 oops").unwrap_err();
        assert!(err.contains("RESULT cpp-cooperative 1024 oops"));
    }

    #[test]
    fn the_cpp_sources_are_embedded_and_the_kernels_named_as_the_cubin_names_them() {
        assert!(BENCH.contains("cub::DeviceReduce::Sum") && BENCH.contains("cudaLaunchAttributeCooperative"));
        for k in KERNELS {
            assert!(LESSON.contains(&format!("extern \"C\" __global__ void {k}(")), "{k}");
        }
        assert!(CONJUGATE_GRADIENT.contains(&format!("extern \"C\" __global__ void BOUNDS {CONJUGATE_GRADIENT_KERNEL}(")));
        assert!(CONJUGATE_GRADIENT.contains(&format!("extern \"C\" __global__ void {CONJUGATE_GRADIENT_FUSED_KERNEL}(")));
        // The twin's launch bounds are the Rust kernel's.
        let (max, min) = crate::kernels().conjugate_gradient_fused_resident.launch_bounds().expect("declared");
        assert!(CONJUGATE_GRADIENT.contains(&format!("__launch_bounds__({max}, {min}) {CONJUGATE_GRADIENT_FUSED_RESIDENT_KERNEL}(")));
    }
}
