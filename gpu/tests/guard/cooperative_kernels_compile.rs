//! The same forms in kernels declared `#[kernel(cooperative)]` compile, so the
//! failures beside this file are about the declaration alone.
use gpu::cg::{self, CanSync, GridGroup, this_grid};
use gpu::kernel;

fn takes_the_grid(grid: &GridGroup) {
    grid.sync();
}

fn generic<L: CanSync>(grid: &GridGroup<L>) {
    grid.sync();
}

/// A function of the same name that is not this project's: the macro leaves it alone.
mod my {
    pub fn this_grid() -> u32 {
        7
    }
}

/// # Safety
/// None needed.
#[kernel(cooperative)]
pub unsafe fn every_form() {
    let grid = this_grid();
    grid.sync();
    this_grid().sync();
    cg::this_grid().sync();
    // The full path is the declared grid too.
    gpu::cg::this_grid().sync();
    ::gpu::cg::this_grid().sync();
    let g = grid;
    takes_the_grid(&g);
    generic(&g);
    let seven: u32 = my::this_grid();
    let _ = seven;
}

fn main() {
    let _ = EVERY_FORM;
}
