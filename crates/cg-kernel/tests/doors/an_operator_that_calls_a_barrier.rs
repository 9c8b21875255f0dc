//! MA4: a user's operator runs inside the collectives' own barriers and
//! shuffles. An operator is a `const trait` impl, so its `combine` can only
//! compute: one that calls `block.sync()` does not compile, and an operator
//! that is not `impl const` is not taken by the collectives at all.
#![feature(const_trait_impl)]
use cg_kernel::cg::{ReduceOp, this_thread_block, tiled_partition};

#[derive(Clone, Copy)]
struct SyncingSum;

impl const ReduceOp<u32> for SyncingSum {
    fn combine(a: u32, b: u32) -> u32 {
        this_thread_block().sync(); // a barrier inside cg::reduce's shuffles
        a.wrapping_add(b)
    }
    fn identity() -> u32 {
        0
    }
}

#[derive(Clone, Copy)]
struct NotConst;

impl ReduceOp<u32> for NotConst {
    fn combine(a: u32, b: u32) -> u32 {
        this_thread_block().sync();
        a.wrapping_add(b)
    }
    fn identity() -> u32 {
        0
    }
}

pub fn tile_sums(v: u32) -> (u32, u32) {
    let block = this_thread_block();
    let tile = tiled_partition::<32>(&block);
    (tile.reduce(v, SyncingSum), tile.reduce(v, NotConst))
}

fn main() {}
