//! Cooperative launches in flight together, each with its grid barrier under
//! stress (`mod concurrent_case;`): the case the concurrent-launch tests and
//! the diagnosing build's mutant test share.

#![allow(dead_code)] // each test binary uses part of it

use host::device::{Buffer, Gpu};
use host::error::Result;
use host::launch::prelude::*;
use std::time::Instant;

/// How the launches are queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// A stream each (`Gpu::in_parallel`).
    Streams,
    /// One graph whose cooperative nodes are parallel branches (`in_parallel`
    /// inside `Gpu::capture`), launched once.
    Graph,
}

/// What the launches found.
pub struct Together {
    /// Stale reads, per launch: a block that read a neighbour's slot after
    /// `grid.sync()` and found last round's value.
    pub stale: Vec<u64>,
    /// Seconds from queueing (the graph's launch, not its capture) to the end of the last.
    pub seconds: f64,
}

/// Queues `launches` launches of `grid_sync_stress`, each `blocks` x
/// `threads` with slots of its own, `rounds` rounds of two barriers each, so
/// that they are in flight together; waits for all of them. A launch that
/// never ran leaves its errors at `u32::MAX`, so it cannot pass.
pub fn stress_together(gpu: &Gpu, launches: usize, blocks: u32, threads: u32, rounds: u32, queue: Queue) -> Result<Together> {
    let kernel = gpu.cooperative_kernel(&host::kernels().grid_sync_stress)?;
    let launch = kernel.configure(blocks, threads)?;
    let buffers = || (0..launches).map(|_| gpu.zeros::<u32>(blocks as usize)).collect::<cg_launcher::error::Result<Vec<Buffer<u32>>>>();
    let (mut slots, mut errors) = (buffers()?, buffers()?);
    for e in &mut errors {
        gpu.fill(e, u32::MAX)?;
    }
    gpu.finish()?;
    let mut each = |b: usize| {
        let (s, e) = (&mut slots[b], &mut errors[b]);
        Ok(launch.stress(s.slice_mut(..), e.slice_mut(..), rounds, false)?)
    };
    let seconds = match queue {
        Queue::Streams => {
            let start = Instant::now();
            gpu.in_parallel(launches, &mut each)?;
            gpu.finish()?;
            start.elapsed().as_secs_f64()
        }
        Queue::Graph => {
            let graph = gpu.capture(&mut || gpu.in_parallel(launches, &mut each))?;
            assert_eq!(gpu.graph_cooperative_launches(&graph)?, vec![true; launches], "every node of the graph is a cooperative launch");
            let start = Instant::now();
            // SAFETY: the graph's buffers (slots, errors) live until after the finish below.
            unsafe { gpu.launch_graph(&graph)? };
            gpu.finish()?;
            start.elapsed().as_secs_f64()
        }
    };
    let stale = errors.iter().map(|e| Ok(gpu.read(e)?.iter().map(|&x| x as u64).sum())).collect::<Result<Vec<u64>>>()?;
    Ok(Together { stale, seconds })
}
