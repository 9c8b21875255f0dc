//! What the emulator saw of a launch it stopped for want of progress: the
//! blocks still running, what each was doing, and where the others waited.

use crate::site::{Site, ThreadId, count, ranges};
use std::fmt;

/// A block that was running when the emulator stopped its launch: the
/// thread it last ran, and what that thread was doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Running {
    /// The thread its block last ran.
    pub thread: ThreadId,
    /// What it was doing when the block stopped.
    pub doing: Doing,
    /// Block barriers the block had completed since it started.
    pub barriers: u64,
    /// Where the block's last block barrier was.
    pub last_barrier: Option<Site>,
}

/// What a running block's thread was doing when the block stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Doing {
    /// The memory access it was making, at this site.
    Access(Site),
    /// Between two of its block's switches: where it last waited, or the
    /// call it is in (`None`: neither, or it had returned).
    Between(Option<Site>),
    /// Nothing yet: the block had just started.
    Starting,
    /// Polling element `index` of `word` at `site`: an atomic that kept
    /// returning the same value.
    Poll {
        /// Where it polls.
        site: Site,
        /// The buffer (the kernel's parameter).
        word: &'static str,
        /// The element.
        index: usize,
    },
}

impl fmt::Display for Running {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.doing {
            Doing::Access(site) => write!(f, "{} ran on at {site}", self.thread),
            Doing::Between(Some(site)) => write!(f, "{} ran on, last waiting at {site}", self.thread),
            Doing::Between(None) => write!(f, "block {} was running", self.thread.block),
            Doing::Starting => write!(f, "block {} had just started", self.thread.block),
            Doing::Poll { site, word, index } => write!(f, "{} polled {word}[{index}] at {}", self.thread, site.location),
        }
    }
}

/// What the emulator saw of a launch it stopped for want of progress
/// (`Fault::Timeout`, `Fault::BarrierLoop`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stall {
    /// The blocks that were running, each with the thread it last ran, by block.
    pub running: Vec<Running>,
    /// Blocks that did not stop when told to: one of their threads runs
    /// without touching memory or waiting, which nothing can interrupt.
    pub unstoppable: Vec<u32>,
    /// Blocks that had ended.
    pub ended: u32,
    /// Blocks waiting at the grid barrier.
    pub at_grid: u32,
    /// Blocks waiting at their cluster's barrier.
    pub at_cluster: u32,
    /// Blocks not yet started.
    pub unstarted: u32,
    /// Block barriers completed since the last block ended (or the launch began).
    pub block_barriers: u64,
    /// Cluster barriers completed since then.
    pub cluster_barriers: u64,
    /// Grid barriers completed since then.
    pub grid_barriers: u64,
    /// Where blocks last reached the grid barrier.
    pub grid_site: Option<Site>,
    /// Where blocks last reached a cluster barrier.
    pub cluster_site: Option<Site>,
    /// Only polls were made: atomics that kept returning the same values,
    /// with no other access of any block between them.
    pub polls_only: bool,
}

impl Stall {
    /// `thread 0 of block 0 (warp 0, lane 0) ran on at X, and block 3 did not stop ...`.
    pub(crate) fn threads(&self) -> String {
        let mut parts: Vec<String> = self.running.iter().map(Running::to_string).collect();
        if !self.unstoppable.is_empty() {
            let blocks = if self.unstoppable.len() == 1 { "block" } else { "blocks" };
            parts.push(format!(
                "{blocks} {} did not stop when told to (a thread that runs without touching memory or waiting, which nothing can interrupt)",
                ranges(self.unstoppable.iter().copied())
            ));
        }
        parts.join(", and ")
    }

    /// `(2 blocks had ended, 4 waited at grid.sync() at X, 10 had not started)`, after `open`; empty if none.
    pub(crate) fn tally(&self, open: &str) -> String {
        let mut parts = Vec::new();
        if self.ended > 0 {
            parts.push(format!("{} had ended", count(self.ended as usize, "block")));
        }
        if self.at_grid > 0 {
            let at = self.grid_site.map_or_else(|| "grid.sync()".to_string(), |s| s.to_string());
            parts.push(format!("{} waited at {at}", count(self.at_grid as usize, "block")));
        }
        if self.at_cluster > 0 {
            parts.push(format!("{} waited at their cluster's barrier", count(self.at_cluster as usize, "block")));
        }
        if self.unstarted > 0 {
            parts.push(format!("{} had not started", count(self.unstarted as usize, "block")));
        }
        if parts.is_empty() { String::new() } else { format!("{open}{})", parts.join(", ")) }
    }
}
