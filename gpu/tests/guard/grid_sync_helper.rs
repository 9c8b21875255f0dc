//! `grid.sync()` in helpers: one that takes the grid (`&GridGroup`, the grid
//! of a cooperative kernel), one generic over the launch, and one that makes
//! its own grid; each called from a kernel declared without `cooperative`.
use gpu::cg::{CanSync, GridGroup, this_grid};
use gpu::kernel;

fn takes_the_grid(grid: &GridGroup) {
    grid.sync();
}

fn generic<L: CanSync>(grid: &GridGroup<L>) {
    grid.sync();
}

fn makes_its_own() {
    this_grid().sync();
}

/// # Safety
/// None needed.
#[kernel]
pub unsafe fn calls_helpers() {
    let grid = this_grid();
    takes_the_grid(&grid);
    generic(&grid);
    makes_its_own();
}

fn main() {}
