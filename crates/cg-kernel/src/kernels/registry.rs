//! The kernels linked into the program, gathered by the linker: each
//! `#[kernel]` adds its [`KernelDef`] to [`REGISTERED`], and the kernels'
//! crate adds its PTX to [`PTX_MODULES`] and its launch constants to
//! [`CONSTANTS`]. This crate names no kernel; the host finds them by name,
//! with the types it launches them with checked ([`kernel`]).

use super::{Contract, KernelDef, Params};
use core::any::{Any, type_name};
use core::fmt;

#[doc(hidden)]
pub use linkme;

/// Every kernel `#[kernel]` declared in the crates linked into this program.
#[linkme::distributed_slice]
pub static REGISTERED: [Registered];

/// The PTX modules of the kernels' crate: one entry in a program that links it.
#[linkme::distributed_slice]
pub static PTX_MODULES: [Ptx];

/// Numbers the kernels' crate shares with the host (how many threads a
/// demo is launched with, say), by name.
#[linkme::distributed_slice]
pub static CONSTANTS: [(&'static str, u64)];

/// One kernel in [`REGISTERED`]: its definition, whatever its parameters.
pub struct Registered {
    name: &'static str,
    crate_name: &'static str,
    grid_sync: bool,
    cluster: bool,
    in_ptx: bool,
    def: &'static (dyn Any + Send + Sync),
    type_name: fn() -> &'static str,
}

impl Registered {
    /// The entry `#[kernel]` adds for `def`.
    #[doc(hidden)]
    pub const fn new<P: Params + 'static, C: Contract + 'static>(def: &'static KernelDef<P, C>) -> Self {
        Registered {
            name: def.name(),
            crate_name: def.crate_name(),
            grid_sync: C::GRID_SYNC,
            cluster: C::CLUSTER,
            in_ptx: def.in_ptx(),
            def,
            type_name: type_name::<KernelDef<P, C>>,
        }
    }

    /// The PTX entry name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Whether it is `#[kernel(cooperative)]`, so has a `name__watched` entry too.
    pub fn grid_sync(&self) -> bool {
        self.grid_sync
    }

    /// Whether it has a GPU entry (not `#[kernel(emulator)]`).
    pub fn in_ptx(&self) -> bool {
        self.in_ptx
    }

    /// Whether it is `#[kernel(cluster)]`, so only in the sm_90 module.
    pub fn cluster(&self) -> bool {
        self.cluster
    }
}

/// The PTX modules built from one kernel crate, and what `ptxas` said of them.
#[derive(Clone, Copy, Debug)]
pub struct Ptx {
    /// The kernel crate they were built from (its `CARGO_CRATE_NAME`): a
    /// kernel's definition names the same crate ([`KernelDef::crate_name`]),
    /// so a program that links several kernel crates loads each kernel from
    /// its own crate's module.
    pub crate_name: &'static str,
    /// The module the lesson runs (sm_70 and newer).
    pub plain: &'static str,
    /// The same kernels recording where and when each block ran (the lesson's `trace` command).
    pub traced: &'static str,
    /// Every kernel built for sm_90, the `#[kernel(cluster)]` ones included
    /// (their instructions need compute capability 9.0): loaded on 9.0+ only.
    pub sm90: &'static str,
    /// `plain` assembled by ptxas for sm_90 where ptxas was found at build
    /// time (empty where it was not): a device of compute capability 9.0
    /// loads it as it is, where `plain` would be JIT-compiled by the driver.
    pub cubin_sm90: &'static [u8],
    /// `ptxas -v -arch=sm_75` on `plain`, or why there is none: each
    /// kernel's registers, for the emulated T4's occupancy.
    pub ptxas_sm75: Result<&'static str, &'static str>,
}

impl Ptx {
    /// The registers per thread `ptxas -v -arch=sm_75` reports for entry
    /// `kernel`; `None` where ptxas was not found at build time or names no
    /// such entry.
    pub fn registers_sm75(&self, kernel: &str) -> Option<u32> {
        registers_in(self.ptxas_sm75.ok()?, kernel)
    }
}

/// `Used N registers` of entry `kernel` in `ptxas -v` output.
fn registers_in(ptxas: &str, kernel: &str) -> Option<u32> {
    let header = format!("Compiling entry function '{kernel}'");
    let mut lines = ptxas.lines().skip_while(|l| !l.contains(&header)).skip(1);
    lines.find_map(|l| {
        let (_, rest) = l.split_once("Used ")?;
        rest.split_once(" registers")?.0.trim().parse().ok()
    })
}

/// Why a kernel, a module or a constant was not found in the program.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotLinked {
    /// No kernels' crate is linked: the program needs `use my_kernels as _;` (the crate whose `build.rs` runs cg-builder).
    NoKernelsCrate,
    /// No `#[kernel]` of this name is linked.
    Kernel(String),
    /// The kernel is declared with other parameters or another contract.
    Type {
        /// The kernel's name.
        kernel: String,
        /// The definition's type, as `#[kernel]` declared it.
        declared: &'static str,
        /// The type it was asked for as.
        asked: &'static str,
    },
    /// No constant of this name is shared.
    Constant(String),
    /// Two `#[kernel]`s of one name are linked (two crates declared it):
    /// the PTX can hold only one entry of that name.
    Duplicate(String),
    /// Two kernels' crates registered PTX modules, and the one asked for
    /// ([`ptx`]) was "the" module: ask by crate ([`ptx_of`]).
    SecondPtxModule,
    /// No kernel crate of this name registered PTX.
    NoPtxOf(String),
}

impl fmt::Display for NotLinked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotLinked::NoKernelsCrate => {
                write!(f, "no kernels are linked into this program: add `use my_kernels as _;` to it, naming the crate that says `cg_kernel::ptx!()`")
            }
            NotLinked::Kernel(k) => write!(f, "no #[kernel] named `{k}` is linked into this program"),
            NotLinked::Type { kernel, declared, asked } => write!(f, "kernel `{kernel}` is declared as {declared}, but was asked for as {asked}"),
            NotLinked::Constant(c) => write!(f, "the kernels share no constant named `{c}`"),
            NotLinked::Duplicate(k) => write!(f, "two #[kernel]s named `{k}` are linked into this program: rename one"),
            NotLinked::SecondPtxModule => {
                write!(f, "several kernels' crates are linked into this program, each with its PTX: name the one you mean (cg_kernel::kernels::ptx_of)")
            }
            NotLinked::NoPtxOf(c) => {
                write!(
                    f,
                    "no PTX of a kernel crate named `{c}` is linked into this program: link it (`use {c} as _;`), and give it `cg_kernel::ptx!()`, or link the crate apart that builds its PTX (`cg_builder::Builder::kernels_of`)"
                )
            }
        }
    }
}

impl std::error::Error for NotLinked {}

/// Every kernel linked into this program, in no particular order.
pub fn registered() -> &'static [Registered] {
    &REGISTERED
}

/// The kernel named `name`, as the host launches it: its parameters `P` and
/// contract `C` must be the ones `#[kernel]` declared.
pub fn kernel<P: Params + 'static, C: Contract + 'static>(name: &str) -> Result<KernelDef<P, C>, NotLinked> {
    let r = one(REGISTERED.iter().filter(|r| r.name == name), name)?;
    r.def.downcast_ref::<KernelDef<P, C>>().copied().ok_or_else(|| NotLinked::Type {
        kernel: name.into(),
        declared: (r.type_name)(),
        asked: type_name::<KernelDef<P, C>>(),
    })
}

/// The only item `matches` yields, or why there is not exactly one kernel `name`.
fn one<T>(mut matches: impl Iterator<Item = T>, name: &str) -> Result<T, NotLinked> {
    let first = matches.next().ok_or_else(|| NotLinked::Kernel(name.into()))?;
    match matches.next() {
        Some(_) => Err(NotLinked::Duplicate(name.into())),
        None => Ok(first),
    }
}

/// The PTX modules of kernel crate `crate_name` (as `CARGO_CRATE_NAME`
/// spells it: `my_kernels` for the package `my-kernels`).
pub fn ptx_of(crate_name: &str) -> Result<&'static Ptx, NotLinked> {
    let mut of = PTX_MODULES.iter().filter(|p| p.crate_name == crate_name);
    match (of.next(), of.next()) {
        (Some(p), None) => Ok(p),
        (Some(_), Some(_)) => Err(NotLinked::Duplicate(format!("the PTX of {crate_name}"))),
        (None, _) if PTX_MODULES.is_empty() => Err(NotLinked::NoKernelsCrate),
        (None, _) => Err(NotLinked::NoPtxOf(crate_name.to_string())),
    }
}

/// The kernels' PTX modules, where the program links one kernel crate
/// ([`ptx_of`] names one of several).
pub fn ptx() -> Result<&'static Ptx, NotLinked> {
    match &PTX_MODULES[..] {
        [] => Err(NotLinked::NoKernelsCrate),
        [ptx] => Ok(ptx),
        _ => Err(NotLinked::SecondPtxModule),
    }
}

/// The first name two registered kernels share, if any (what [`kernel`]
/// refuses for that name).
pub fn duplicate_name() -> Option<&'static str> {
    repeated(REGISTERED.iter().map(|r| r.name)).first().copied()
}

/// The values `all` holds more than once, each once, in order.
fn repeated<T: Ord + Copy>(all: impl Iterator<Item = T>) -> Vec<T> {
    let mut all: Vec<T> = all.collect();
    all.sort_unstable();
    let mut repeated: Vec<T> = all.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
    repeated.dedup();
    repeated
}

/// Whether two kernels of crate `crate_name` (as `CARGO_CRATE_NAME` spells
/// it) with GPU entries (not `#[kernel(emulator)]`) are both named `name`:
/// two PTX entries of one name in one module,
/// which the GPU build of that crate refuses, while a build for the emulator
/// alone (no PTX) would run both. The launcher refuses to load either, so
/// the emulator says what the GPU build would. Two kernels of one name in
/// different modules of the crate are such a pair (`operator_kernels!`
/// twice with the same names, say); in different crates they are not.
pub fn shares_its_name(crate_name: &str, name: &str) -> bool {
    static SHARED: std::sync::OnceLock<Vec<(&'static str, &'static str)>> = std::sync::OnceLock::new();
    let shared = SHARED.get_or_init(|| repeated(REGISTERED.iter().filter(|r| r.in_ptx).map(|r| (r.crate_name, r.name))));
    shared.contains(&(crate_name, name))
}

/// The constant the kernels' crate shares as `name`.
pub fn constant(name: &str) -> Result<u64, NotLinked> {
    CONSTANTS.iter().find(|(n, _)| *n == name).map(|&(_, v)| v).ok_or_else(|| NotLinked::Constant(name.into()))
}

#[cfg(test)]
mod tests {
    use super::{NotLinked, one, registers_in};

    #[test]
    fn a_name_two_kernels_share_is_a_named_error_not_the_first_found() {
        assert_eq!(one([1].into_iter(), "k"), Ok(1));
        assert_eq!(one([1, 2].into_iter(), "k"), Err(NotLinked::Duplicate("k".into())));
        assert_eq!(one(std::iter::empty::<u32>(), "k"), Err(NotLinked::Kernel("k".into())));
        assert_eq!(NotLinked::Duplicate("k".into()).to_string(), "two #[kernel]s named `k` are linked into this program: rename one");
    }

    #[test]
    fn registers_are_read_per_entry_from_ptxas_output() {
        let out = "ptxas info    : Compiling entry function 'a' for 'sm_75'\nptxas info    : Function properties for a\n    0 bytes stack frame\nptxas info    : Used 8 registers, used 1 barriers, 360 bytes cmem[0]\nptxas info    : Compiling entry function 'b' for 'sm_75'\nptxas info    : Used 30 registers, 372 bytes cmem[0]\n";
        assert_eq!((registers_in(out, "a"), registers_in(out, "b"), registers_in(out, "c")), (Some(8), Some(30), None));
    }
}
