//! Who and where, the words every report of the emulator is made of: a
//! place in the source ([`Site`]), a thread ([`ThreadId`]), an access, the
//! sides of a race, and sets of numbers (lanes, blocks, a cluster's
//! blocks) written as ranges.

use std::collections::BTreeMap;
use std::fmt;
use std::panic::Location;

/// A place in a kernel's source, and the call made there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    /// The file, line and column.
    pub location: &'static Location<'static>,
    /// The cooperative-groups call (`"grid.sync()"`) or atomic
    /// (`"atomic_add()"`), or `""` for a plain access.
    pub call: &'static str,
}

impl Site {
    /// Whether the call is a grid collective (`grid.reduce::<f32, Plus>()`:
    /// a `grid.` call other than `grid.sync()`).
    pub fn is_grid_collective(&self) -> bool {
        self.call.starts_with("grid.") && self.call != "grid.sync()"
    }

    /// Whether threads at `self` and at `other` are at different barriers:
    /// different places in the source, except for two calls of one grid
    /// collective (its name carries its types, operator and sizes), which
    /// may be written in two branches that every thread chooses between.
    pub(crate) fn apart(&self, other: &Site) -> bool {
        if self.is_grid_collective() && other.is_grid_collective() { self.call != other.call } else { self.location != other.location }
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = self.location;
        if self.call.is_empty() {
            write!(f, "{}:{}:{}", l.file(), l.line(), l.column())
        } else {
            write!(f, "{} at {}:{}:{}", self.call, l.file(), l.line(), l.column())
        }
    }
}

/// One emulated GPU thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ThreadId {
    /// The block's index in the grid.
    pub block: u32,
    /// The thread's rank in its block.
    pub thread: u32,
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "thread {} of block {} (warp {}, lane {})", self.thread, self.block, self.thread / 32, self.thread % 32)
    }
}

/// A read, a write, or an atomic read-modify-write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A load.
    Read,
    /// A store.
    Write,
    /// An atomic (`atomic_add` and the rest): a write, except that atomics
    /// on one word never race with each other.
    Atomic,
}

impl Access {
    pub(crate) fn past(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "wrote",
            Access::Atomic => "atomically updated",
        }
    }
}

/// One side of a data race.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Touch {
    /// The thread that did it.
    pub thread: ThreadId,
    /// A read or a write.
    pub access: Access,
    /// Where in the kernel's source.
    pub site: Site,
}

impl fmt::Display for Touch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} it at {}", self.thread, self.access.past(), self.site)
    }
}

/// A warp-level barrier (`tile.sync()`, a warp collective) that lay between
/// two racing accesses but did not include the second thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartialBarrier {
    /// The warp it synchronized.
    pub warp: u32,
    /// The lanes it synchronized.
    pub mask: u32,
}

impl PartialBarrier {
    /// Why it did not order the access by `thread`, and what would.
    pub(crate) fn reaching(&self, thread: u32) -> String {
        let lanes = if self.mask == u32::MAX {
            format!("warp {}", self.warp)
        } else {
            format!("{} of warp {}", numbered("lane", (0..32).filter(|l| self.mask & (1 << l) != 0)), self.warp)
        };
        if thread / 32 != self.warp {
            format!(
                "the warp sync between them (tile.sync()?) covers {lanes} only, and thread {thread} is in warp {}: a tile is at most one warp, so threads of different warps need block.sync()",
                thread / 32
            )
        } else {
            format!("the warp sync between them covers {lanes} only, not lane {}: sync a tile that holds both lanes, or the block", thread % 32)
        }
    }
}

/// `0-15`, `2, 4, 8`, `0-3, 7`: a set of numbers as ranges.
pub(crate) fn ranges(items: impl IntoIterator<Item = u32>) -> String {
    let mut v: Vec<u32> = items.into_iter().collect();
    v.sort_unstable();
    v.dedup();
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if j > i + 1 {
            format!("{}-{}", v[i], v[j])
        } else if j == i + 1 {
            format!("{}, {}", v[i], v[j])
        } else {
            v[i].to_string()
        });
        i = j + 1;
    }
    out.join(", ")
}

/// `1 block`, `3 blocks`.
/// `lane 3` or `lanes 0-7, 9`: [`ranges`] after the noun, singular for one item.
pub(crate) fn numbered(what: &str, items: impl IntoIterator<Item = u32>) -> String {
    let items: Vec<u32> = items.into_iter().collect();
    let mut distinct = items.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() == 1 { format!("{what} {}", distinct[0]) } else { format!("{what}s {}", ranges(items)) }
}

pub(crate) fn count(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}

/// The `cluster.sync()` that some blocks reached and others did not, where
/// the launch has met cluster barriers at more than one place: the place
/// fewest blocks reached, named as a barrier in a branch.
pub(crate) fn branch_among(reached: &BTreeMap<String, std::collections::BTreeSet<u32>>, cluster: u32) -> String {
    let most = reached.values().map(|b| b.len()).max().unwrap_or(0);
    let Some((site, blocks)) = reached.iter().filter(|(_, b)| b.len() < most).min_by_key(|(_, b)| b.len()) else {
        return String::new();
    };
    let others: std::collections::BTreeSet<u32> = reached.values().flatten().copied().filter(|b| !blocks.contains(b)).collect();
    format!(
        "; {} reached {site} and {} never did, so that cluster.sync() is in a branch that some blocks of the cluster skip (a barrier reached from different places still completes, and the blocks part ways after it): take it out of the branch",
        blocks_of_clusters(blocks.iter().copied(), cluster),
        blocks_of_clusters(others.into_iter(), cluster)
    )
}

/// `blocks 0, 4`, or, folded where the list is long, `248 blocks (rank 0
/// of every cluster of 4: 0, 4, ..., 988)` or `496 blocks (0-3, 8-11, ..., 988-991)`.
pub(crate) fn blocks_of_clusters(blocks: impl Iterator<Item = u32>, cluster: u32) -> String {
    let mut v: Vec<u32> = blocks.collect();
    v.sort_unstable();
    v.dedup();
    let listed = ranges(v.iter().copied());
    if listed.matches(", ").count() < 8 {
        return numbered("block", v);
    }
    let k = cluster.max(1);
    let ranks: std::collections::BTreeSet<u32> = v.iter().map(|b| b % k).collect();
    // The same ranks of every cluster from the first block's to the last's.
    let pattern = (v[0] / k..=v[v.len() - 1] / k).flat_map(|c| ranks.iter().map(move |r| c * k + r));
    let every_cluster = k > 1 && pattern.eq(v.iter().copied());
    let parts: Vec<&str> = listed.split(", ").collect();
    let ends = format!("{}, {}, ..., {}", parts[0], parts[1], parts[parts.len() - 1]);
    if every_cluster {
        format!("{} ({} of every cluster of {cluster}: {ends})", count(v.len(), "block"), numbered("rank", ranks))
    } else {
        format!("{} ({ends})", count(v.len(), "block"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_compress_runs() {
        assert_eq!(ranges([0, 1, 2, 3]), "0-3");
        assert_eq!(ranges([2, 4, 8]), "2, 4, 8");
        assert_eq!(ranges([5, 0, 1, 7, 6, 9]), "0, 1, 5-7, 9");
        assert_eq!(ranges([]), "");
        assert_eq!(numbered("lane", [0]), "lane 0");
        assert_eq!(numbered("lane", [3, 3]), "lane 3");
        assert_eq!(numbered("lane", [0, 1, 2]), "lanes 0-2");
        assert_eq!(count(1, "block"), "1 block");
        assert_eq!(count(39, "block"), "39 blocks");
    }
}
