//! The C++ side of the comparison: `host/cpp/bench.cu` built with `nvcc` and
//! run on the same sizes, input formula, rotation and timing.

use super::{BenchConfig, Case, Point};
use crate::reference;
use crate::timing::Stats;
use std::process::Command;

const SOURCE: &str = include_str!("../../cpp/bench.cu");

/// One `RESULT` line of the C++ program.
#[derive(Clone, Debug, PartialEq)]
pub struct CppResult {
    pub variant: String,
    pub n: u64,
    pub rotate: usize,
    pub stats: Stats,
    pub blocks: u64,
    pub sum: f32,
}

/// Parses the program's `RESULT` lines; other lines are ignored.
pub fn parse(stdout: &str) -> Result<Vec<CppResult>, String> {
    stdout
        .lines()
        .filter(|l| l.starts_with("RESULT "))
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let bad = || format!("unreadable C++ result line: {line}");
            if f.len() != 11 {
                return Err(bad());
            }
            let num = |i: usize| f[i].parse::<f64>().map_err(|_| bad());
            Ok(CppResult {
                variant: f[1].to_string(),
                n: f[2].parse().map_err(|_| bad())?,
                rotate: f[3].parse().map_err(|_| bad())?,
                stats: Stats { median_ms: num(4)?, min_ms: num(5)?, max_ms: num(6)?, mean_ms: num(7)?, runs: f[8].parse().map_err(|_| bad())? },
                blocks: f[9].parse().map_err(|_| bad())?,
                sum: f[10].parse().map_err(|_| bad())?,
            })
        })
        .collect()
}

/// The C++ side, built: the benchmark program, and a cubin of the same file
/// whose kernels `host bench` also launches itself.
pub struct Build {
    dir: std::path::PathBuf,
    exe: std::path::PathBuf,
    pub cubin: std::path::PathBuf,
}

impl Drop for Build {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// The C++ kernels' names in the cubin: stage 1, stage 2, cooperative.
pub const KERNELS: [&str; 3] = ["blocksToPartials", "partialsToTotal", "cooperativeSum"];

fn nvcc(args: &[&str], out: &std::path::Path, src: &std::path::Path) -> Result<(), String> {
    let build = Command::new("nvcc").args(args).arg("-o").arg(out).arg(src).output().map_err(|e| format!("nvcc: {e}"))?;
    if !build.status.success() {
        return Err(format!("nvcc failed: {}", String::from_utf8_lossy(&build.stderr).lines().take(5).collect::<Vec<_>>().join(" / ")));
    }
    Ok(())
}

/// Builds the C++ benchmark and its cubin; `Err` says why it could not.
pub fn build() -> Result<Build, String> {
    if Command::new("nvcc").arg("--version").output().map(|o| !o.status.success()).unwrap_or(true) {
        return Err("nvcc is not on PATH".into());
    }
    let dir = std::env::temp_dir().join(format!("cg-bench-cpp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let src = dir.join("bench.cu");
    std::fs::write(&src, SOURCE).map_err(|e| format!("{}: {e}", src.display()))?;
    let b = Build { exe: dir.join("bench_cpp"), cubin: dir.join("bench.cubin"), dir };
    eprintln!("bench: building the C++ comparison with nvcc");
    nvcc(&["-O3", "-std=c++17", "-arch=native"], &b.exe, &src)?;
    nvcc(&["-O3", "-std=c++17", "-arch=native", "-cubin"], &b.cubin, &src)?;
    Ok(b)
}

/// Runs the C++ benchmark; `Err` says why it could not.
pub(crate) fn run(build: &Build, cfg: &BenchConfig, cases: &[Case]) -> Result<Vec<Point>, String> {
    eprintln!("bench: running the C++ comparison");
    let exe = &build.exe;
    let out = Command::new(exe)
        .arg(cfg.runs.to_string())
        .arg(cfg.warmups.to_string())
        .arg(cfg.threads.to_string())
        .args(cases.iter().map(|c| format!("{}:{}", c.n, c.rotate)))
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!("the C++ benchmark failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let results = parse(&String::from_utf8_lossy(&out.stdout))?;
    let mut points = Vec::new();
    for &Case { n, want, abs, .. } in cases {
        for r in results.iter().filter(|r| r.n == n) {
            // CUB's reduction order is its own: bound it as any order of summation.
            let chain = if r.blocks == 0 { n.max(1) } else { reference::longest_chain(n, r.blocks, cfg.threads) };
            let ok = reference::check(r.sum, want, reference::error_bound(chain, abs)).pass;
            points.push(Point::new(&r.variant, n, r.rotate, r.blocks, cfg.threads, r.stats, Some(ok)));
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_parse_and_other_lines_are_ignored() {
        let out = "building\nRESULT cpp-cooperative 1024 256 0.007900 0.007000 0.009000 0.008000 20 4 1023.500000\nnoise\n";
        let r = parse(out).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].variant.as_str(), r[0].n, r[0].rotate, r[0].blocks), ("cpp-cooperative", 1024, 256, 4));
        assert_eq!(r[0].stats.median_ms, 0.0079);
        assert_eq!(r[0].stats.runs, 20);
        assert_eq!(r[0].sum, 1023.5);
    }

    #[test]
    fn a_malformed_result_line_is_an_error_naming_it() {
        let err = parse("RESULT cpp-cooperative 1024 oops").unwrap_err();
        assert!(err.contains("RESULT cpp-cooperative 1024 oops"));
    }

    #[test]
    fn the_cpp_source_is_embedded() {
        assert!(SOURCE.contains("cudaLaunchAttributeCooperative") && SOURCE.contains("cub::DeviceReduce::Sum"));
    }
}
