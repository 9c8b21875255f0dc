//! Cooperative launches in flight together: each has grid-barrier memory of
//! its own (the driver's workspace for the single word, memory the launch
//! brings for the watched barrier), as NVIDIA's `grid.sync()` has, so two or
//! four of them at once, on streams or as parallel graph nodes, on either
//! barrier, beside ordinary launches, never meet.

use gpu_ptx as _;
use host::device::Gpu;
use host::error::Error;

mod concurrent_case;
use cg_launcher::error::Error as L;
use concurrent_case::{Queue, stress_together};
use host::launch::prelude::*;

/// Blocks per launch for `launches` launches of `threads` that share
/// `fraction` of the device's cooperative ceiling.
fn blocks_each(gpu: &Gpu, launches: u32, threads: u32, fraction: f64) -> u32 {
    let kernel = gpu.cooperative_kernel(&host::kernels().grid_sync_stress).unwrap();
    (kernel.limits(threads).unwrap().capacity() as f64 * fraction / launches as f64) as u32
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn two_and_four_cooperative_launches_in_flight_together_find_no_stale_read_on_streams_or_in_a_graph_on_either_barrier() {
    let gpu = Gpu::open(0).unwrap();
    const ROUNDS: u32 = 100_000;
    // The GPU decides whether launches that fit together run together. On an
    // H200 (2026-12-02, host/cpp/abi_host.cu): blocks of 32 did even at the
    // whole ceiling (2 x 2,112, 4 x 1,056 of 4,224), blocks of 256 at 2 x 400
    // of 1,056 but one after the other from 2 x 480. So: 3/8 of the ceiling
    // for the single word (blocks of 256), all of it for the watched barrier
    // (blocks of 32, each launch above 960 blocks).
    for (threads, fraction, watched) in [(256, 0.375, false), (32, 1.0, true)] {
        for launches in [2u32, 4] {
            let blocks = blocks_each(&gpu, launches, threads, fraction);
            if gpu::cg::barrier::is_watched(blocks) != watched {
                println!("{launches} x {blocks} blocks of {threads} do not take the barrier this case is for on this GPU: skipped");
                continue;
            }
            let alone = stress_together(&gpu, 1, blocks, threads, ROUNDS, Queue::Streams).unwrap();
            assert_eq!(alone.stale, vec![0]);
            for queue in [Queue::Streams, Queue::Graph] {
                let t = stress_together(&gpu, launches as usize, blocks, threads, ROUNDS, queue).unwrap();
                println!(
                    "{launches} x {blocks} blocks of {threads} ({}), {queue:?}: {} barriers each, stale reads {:?}, {:.3} s together, {:.3} s for one alone",
                    if watched { "watched" } else { "single word" },
                    2 * ROUNDS,
                    t.stale,
                    t.seconds,
                    alone.seconds
                );
                assert!(t.stale.iter().all(|&s| s == 0), "{:?}", t.stale);
                // In flight together: one after another would take `launches` times as long.
                assert!(
                    t.seconds < 0.9 * launches as f64 * alone.seconds,
                    "{:.3} s for {launches}, {:.3} s for one: they ran one after another",
                    t.seconds,
                    alone.seconds
                );
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_cooperative_launch_beside_an_ordinary_one_finds_no_stale_read() {
    let gpu = Gpu::open(0).unwrap();
    let (threads, rounds) = (32, 50_000);
    // Half the cooperative ceiling: the ordinary kernel (hold_for, one block)
    // and the watched launch fit on the device together.
    let blocks = blocks_each(&gpu, 2, threads, 1.0);
    let kernel = gpu.cooperative_kernel(&host::kernels().grid_sync_stress).unwrap();
    let launch = kernel.configure(blocks, threads).unwrap();
    let (mut slots, mut errors) = (gpu.zeros::<u32>(blocks as usize).unwrap(), gpu.zeros::<u32>(blocks as usize).unwrap());
    gpu.fill(&mut errors, u32::MAX).unwrap();
    let start = std::time::Instant::now();
    gpu.in_parallel(2, &mut |b| match b {
        0 => host::timing::hold(&gpu, std::time::Duration::from_millis(200)).map_err(Into::into),
        _ => Ok(launch.stress(slots.slice_mut(..), errors.slice_mut(..), rounds, false)?),
    })
    .unwrap();
    gpu.finish().unwrap();
    let stale: u64 = gpu.read(&errors).unwrap().iter().map(|&e| e as u64).sum();
    println!("{blocks} blocks of {threads} beside a 200 ms ordinary kernel: {stale} stale reads, {:.3} s", start.elapsed().as_secs_f64());
    assert_eq!(stale, 0);
}

/// On the emulator the branches run one after another, each launch with its
/// own barrier state: the same answers, on both barriers.
#[test]
fn on_the_emulator_launches_in_parallel_and_a_graph_of_parallel_cooperative_nodes_find_no_stale_read() {
    for (name, device, threads) in [("T4", cg_emulator::Device::T4, 256), ("H200", cg_emulator::Device::H200, 32)] {
        let gpu = Gpu::emulated(device, cg_emulator::Options::default());
        let blocks = blocks_each(&gpu, 2, threads, 1.0);
        let watched = gpu::cg::barrier::is_watched(blocks);
        assert_eq!(watched, threads == 32, "{blocks} blocks of {threads}");
        for queue in [Queue::Streams, Queue::Graph] {
            let t = stress_together(&gpu, 2, blocks, threads, 3, queue).unwrap();
            assert_eq!(t.stale, vec![0, 0], "{name}, {queue:?}");
        }
    }
}

#[test]
fn branches_do_not_nest_and_a_capture_does_not_begin_in_a_branch() {
    let gpu = Gpu::emulated(cg_emulator::Device::T4, cg_emulator::Options::default());
    let nested = gpu.in_parallel(2, &mut |_| gpu.in_parallel(2, &mut |_| Ok(()))).unwrap_err();
    assert!(matches!(nested, cg_launcher::error::Error::NestedStreams { .. }), "{nested}");
    assert!(nested.to_string().contains("cannot begin inside a branch of in_parallel"), "{nested}");
    let capture = gpu.in_parallel(2, &mut |_| gpu.capture(&mut || Ok(())).map(drop)).unwrap_err();
    assert!(capture.to_string().starts_with("a graph capture cannot begin inside a branch"), "{capture}");
    // The flag is cleared: a later call works.
    gpu.in_parallel(3, &mut |_| Ok(())).unwrap();
}

/// `host/cpp/abi_host.cu` (a C++ host on the driver API alone) built by
/// nvcc, once per process, and this project's PTX beside it; `None` where
/// nvcc cannot be run.
fn built_cpp_host() -> Option<&'static (std::path::PathBuf, std::path::PathBuf)> {
    static BUILT: std::sync::OnceLock<Option<(std::path::PathBuf, std::path::PathBuf)>> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = std::env::temp_dir().join(format!("cg-abi-host-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let (source, binary, ptx) = (dir.join("abi_host.cu"), dir.join("abi_host"), dir.join("gpu.ptx"));
            std::fs::write(&source, include_str!("../cpp/abi_host.cu")).unwrap();
            std::fs::write(&ptx, host::kernels().ptx.plain).unwrap();
            match std::process::Command::new("nvcc").args(["-O2", "-std=c++17", "-o"]).arg(&binary).arg(&source).arg("-lcuda").output() {
                Err(e) => {
                    println!("nvcc could not be run ({e}): the C++ host is not built, so this test checks nothing here");
                    None
                }
                Ok(o) => {
                    assert!(o.status.success(), "nvcc: {}", String::from_utf8_lossy(&o.stderr));
                    Some((binary, ptx))
                }
            }
        })
        .as_ref()
}

/// Runs the C++ host on this project's PTX with `args`: its one output line.
fn cpp_host(args: &[&str]) -> Option<String> {
    let (binary, ptx) = built_cpp_host()?;
    let run = std::process::Command::new(binary).arg(ptx).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&run.stdout).trim().to_string();
    println!("abi_host {}: {text} {}", args.join(" "), String::from_utf8_lossy(&run.stderr).trim());
    Some(text)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_cpp_host_launching_our_ptx_by_its_documented_abi_runs_watched_launches_at_once_and_hangs_by_name_when_they_share_memory() {
    // Each launch with barrier memory of its own, as docs/abi.md asks.
    for launches in ["2", "4"] {
        let Some(line) = cpp_host(&["--launches", launches, "--threads", "32", "--rounds", "100000"]) else { return };
        assert!(line.starts_with("RESULT") && line.contains("entry=grid_sync_stress__watched"), "{line}");
        let stale = line.split("stale=").nth(1).and_then(|s| s.split(' ').next()).unwrap();
        assert!(stale.split(',').all(|s| s == "0"), "{line}");
    }
    // The bug the ABI forbids, made on purpose: one block of memory for both.
    let Some(line) = cpp_host(&["--launches", "2", "--threads", "32", "--rounds", "100000", "--share", "--timeout", "10"]) else { return };
    let caught = line.starts_with("HANG") || line.split("stale=").nth(1).is_some_and(|s| !s.starts_with("0,0 "));
    assert!(caught, "launches sharing barrier memory passed: {line}");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_grid_of_2_to_the_32_threads_from_another_host_traps_instead_of_wrapping_a_rank() {
    // 4,194,303 blocks of 1,024 is the last grid below 2^32 threads: it runs.
    let Some(below) = cpp_host(&["--probe", "4194303", "--threads", "1024"]) else { return };
    assert!(below.contains("status=CUDA_SUCCESS num_blocks=4194303"), "{below}");
    // One block more: this_grid() traps, where 32-bit ranks would have wrapped.
    let Some(at) = cpp_host(&["--probe", "4194304", "--threads", "1024"]) else { return };
    assert!(at.starts_with("PROBE") && !at.contains("CUDA_SUCCESS"), "{at}");
}

mod branch_memory_case;

/// The logic on the emulator: buffers made, used and dropped in branches
/// give the right sums (the GPU test runs the same 1,000 times).
#[test]
fn on_the_emulator_buffers_made_and_dropped_in_branches_give_right_sums() {
    let gpu = Gpu::emulated(cg_emulator::Device::T4, cg_emulator::Options::default());
    for out_in_branch in [false, true] {
        let missed = branch_memory_case::sums_with_buffers_made_in_branches(&gpu, 4096, 2, out_in_branch).unwrap();
        assert!(missed.wrong.is_empty(), "out in branch {out_in_branch}: {:?} (expected {})", missed.wrong, missed.expected);
    }
}

#[test]
fn a_buffer_made_in_one_branch_is_refused_by_name_in_another_and_serves_after_the_join() {
    let gpu = Gpu::emulated(cg_emulator::Device::T4, cg_emulator::Options::default());
    let kernel = gpu.cooperative_kernel(&host::kernels().reduce_cooperative_grid).unwrap();
    let launch = kernel.configure(4, 256).unwrap();
    let input = host::launch::DeviceInput::upload(&gpu, &[1.0f32; 1000]).unwrap();
    let mut out = gpu.zeros::<f32>(1).unwrap();
    let mut kept = None;
    // The launch error passes through the launcher as the program's own, and comes back as itself.
    let err = gpu
        .in_parallel(2, &mut |b| {
            if b == 0 {
                kept = Some(gpu.zeros::<f32>(4)?);
                return Ok(());
            }
            Ok(launch.sum(&input, kept.as_mut().expect("made in branch 0").slice_mut(..), out.slice_mut(..))?)
        })
        .map_err(host::error::Error::from)
        .unwrap_err();
    assert!(matches!(err, host::error::Error::Launch(cg_launcher::error::Error::OtherBranch { made_in: 0, used_in: 1 })), "{err}");
    assert!(err.to_string().contains("allocate it before in_parallel, or in the branch that uses it"), "{err}");
    let mut kept = kept.unwrap();
    launch.sum(&input, kept.slice_mut(..), out.slice_mut(..)).unwrap();
    assert_eq!(gpu.read(&out).unwrap(), [1000.0]);
}

#[test]
fn memory_is_not_touched_during_a_capture() {
    let gpu = Gpu::emulated(cg_emulator::Device::T4, cg_emulator::Options::default());
    let mut b = gpu.zeros::<f32>(4).unwrap();
    for err in [
        gpu.capture(&mut || gpu.zeros::<f32>(4).map(drop)).err().unwrap(),
        gpu.capture(&mut || gpu.fill(&mut b, 1.0)).err().unwrap(),
        gpu.capture(&mut || gpu.read(&b).map(drop)).err().unwrap(),
    ] {
        assert!(matches!(err, cg_launcher::error::Error::MemoryInCapture { .. }), "{err}");
        assert!(err.to_string().contains("while a graph is captured"), "{err}");
    }
}

#[test]
fn a_buffer_of_another_device_is_refused_by_name_at_launch_and_in_a_copy() {
    let (a, b) = (Gpu::emulated(cg_emulator::Device::T4, Default::default()), Gpu::emulated(cg_emulator::Device::T4, Default::default()));
    let kernel = b.cooperative_kernel(&host::kernels().reduce_cooperative_grid).unwrap();
    let launch = kernel.configure(4, 256).unwrap();
    let input = host::launch::DeviceInput::upload(&a, &[1.0f32; 1000]).unwrap();
    let (mut partials, mut out) = (b.zeros::<f32>(4).unwrap(), b.zeros::<f32>(1).unwrap());
    let err = launch.sum(&input, partials.slice_mut(..), out.slice_mut(..)).unwrap_err();
    assert!(matches!(err, Error::Launch(L::OtherDevice { what: "a buffer" })), "{err}");
    let on_a = a.upload(&[1.0f32; 4]).unwrap();
    assert!(matches!(b.read(&on_a), Err(cg_launcher::error::Error::OtherDevice { .. })));
    assert!(matches!(b.copy(&on_a.slice(..), &mut partials), Err(cg_launcher::error::Error::OtherDevice { .. })));
    let mut on_a = a.zeros::<f32>(1).unwrap();
    assert!(matches!(b.fill(&mut on_a, 0.0), Err(cg_launcher::error::Error::OtherDevice { .. })));
}

/// The program of issue 47, 1,000 times, and the variant whose branches
/// can overlap: every sum right. `tests/branch_memory_mutant.rs` shows the
/// same check failing without the ordering.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn buffers_made_and_dropped_in_branches_give_right_sums_1000_times() {
    let gpu = Gpu::open(0).unwrap();
    for out_in_branch in [false, true] {
        let missed = branch_memory_case::sums_with_buffers_made_in_branches(&gpu, 1 << 22, 1000, out_in_branch).unwrap();
        println!("out in branch {out_in_branch}: {} of 2000 sums wrong", missed.wrong.len());
        assert!(missed.wrong.is_empty(), "out in branch {out_in_branch}: {:?} (expected {})", missed.wrong, missed.expected);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_gpus_buffer_is_refused_by_the_emulator_and_the_emulators_by_the_gpu() {
    let (cuda, emulated) = (Gpu::open(0).unwrap(), Gpu::emulated(cg_emulator::Device::T4, Default::default()));
    for (on, from) in [(&cuda, &emulated), (&emulated, &cuda)] {
        let kernel = on.cooperative_kernel(&host::kernels().reduce_cooperative_grid).unwrap();
        let launch = kernel.configure(4, 256).unwrap();
        let input = host::launch::DeviceInput::upload(from, &[1.0f32; 1000]).unwrap();
        let (mut partials, mut out) = (on.zeros::<f32>(4).unwrap(), on.zeros::<f32>(1).unwrap());
        let err = launch.sum(&input, partials.slice_mut(..), out.slice_mut(..)).unwrap_err();
        assert!(matches!(err, Error::Launch(L::OtherDevice { what: "a buffer" })), "{err}");
        let theirs = from.zeros::<f32>(4).unwrap();
        assert!(matches!(on.read(&theirs), Err(cg_launcher::error::Error::OtherDevice { .. })));
    }
}

/// Branches of `in_parallel` run on streams ordered against nothing but the
/// fork and the join, so a buffer made before the fork that one branch
/// writes and another reads or writes could race: the launcher refuses the
/// second use by name (it did not before 2026-12-04). Reads of the same
/// bytes in several branches, and writes to disjoint parts, are fine.
#[test]
fn a_buffer_written_in_one_branch_and_used_in_another_is_refused_by_name() {
    let gpu = Gpu::emulated(cg_emulator::Device::T4, cg_emulator::Options::default());
    let kernel = gpu.cooperative_kernel(&host::kernels().reduce_cooperative_grid).unwrap();
    let launch = kernel.configure(4, 256).unwrap();
    let input = host::launch::DeviceInput::upload(&gpu, &[1.0f32; 1000]).unwrap();
    let mut partials = [gpu.zeros::<f32>(4).unwrap(), gpu.zeros::<f32>(4).unwrap()];
    let mut out = gpu.zeros::<f32>(2).unwrap();
    let race = |e: &Error| matches!(e, Error::Launch(L::RaceBetweenBranches { first: 0, second: 1, .. }));

    // A kernel writes `out` in branch 0; branch 1 reads it back.
    let err = gpu
        .in_parallel(2, &mut |b| match b {
            0 => Ok(launch.sum(&input, partials[0].slice_mut(..), out.slice_mut(0..1))?),
            _ => gpu.read(&out).map(drop),
        })
        .map_err(Error::from)
        .unwrap_err();
    assert!(race(&err), "{err}");
    // Each use named (issue 63, item 6: the error named neither).
    assert!(
        err.to_string()
            .contains("a buffer written in branch 0 of in_parallel (as reduce_cooperative_grid's `out`) was given to a read in branch 1 (as gpu.read)"),
        "{err}"
    );

    // The host writes `out` in branch 0 (a safe `gpu.write`) while a kernel writes it in branch 1.
    let err = gpu
        .in_parallel(2, &mut |b| match b {
            0 => gpu.write(&mut out, 0, &[2.0]),
            _ => Ok(launch.sum(&input, partials[1].slice_mut(..), out.slice_mut(0..1))?),
        })
        .map_err(Error::from)
        .unwrap_err();
    assert!(race(&err), "{err}");
    assert!(err.to_string().contains("(as gpu.write) was given to a write in branch 1 (as reduce_cooperative_grid's `out`)"), "{err}");

    // Two kernels writing one buffer's same element.
    let err = gpu
        .in_parallel(2, &mut |b| {
            let (p, rest) = partials.split_at_mut(1);
            let mine = if b == 0 { &mut p[0] } else { &mut rest[0] };
            Ok(launch.sum(&input, mine.slice_mut(..), out.slice_mut(0..1))?)
        })
        .map_err(Error::from)
        .unwrap_err();
    assert!(race(&err), "{err}");

    // Fine: both branches read the input; each writes its own element of `out`.
    gpu.in_parallel(2, &mut |b| {
        let (p, rest) = partials.split_at_mut(1);
        let mine = if b == 0 { &mut p[0] } else { &mut rest[0] };
        Ok(launch.sum(&input, mine.slice_mut(..), out.slice_mut(b..b + 1))?)
    })
    .unwrap();
    assert_eq!(gpu.read(&out).unwrap(), [1000.0, 1000.0]);
    // And after the join, anything goes again.
    gpu.write(&mut out, 0, &[0.0, 0.0]).unwrap();
}
