// NVIDIA's grid barrier on its own, for `cg-lesson bench`'s barrier table:
// the C++ twin of gpu/src/kernels/timing.rs's grid_sync_loop, built to a
// cubin with nvcc and launched (cooperatively) through the Rust program's
// own launch path, so the two barriers differ only in their code.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

extern "C" __global__ void gridSyncLoop(unsigned long long barriers) {
    cg::grid_group grid = cg::this_grid();
    for (unsigned long long k = 0; k < barriers; ++k) grid.sync();
}
