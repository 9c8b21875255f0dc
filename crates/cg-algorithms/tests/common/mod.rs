//! Every algorithm on one device, against references on the CPU, for a
//! list of sizes: what the emulator's and the GPU's tests run.

use cg_algorithms::{Algorithms, Element, Level, Op, Rule, Sample};
use cg_launcher::device::{Buffer, Gpu};

/// A small generator, so that the inputs are the same on every run.
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407))
    }
    pub fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

/// An element type with small integer values, whose sums are exact in
/// every order (for `f32`, below 2^24), so that every check is equality.
pub trait Testable: Element {
    fn small(r: u32) -> Self;
    fn combine(op: Op, a: Self, b: Self) -> Self;
}

impl Testable for f32 {
    fn small(r: u32) -> f32 {
        (r % 17) as f32 - 8.0
    }
    fn combine(op: Op, a: f32, b: f32) -> f32 {
        match op {
            Op::Sum => a + b,
            Op::Min => a.min(b),
            Op::Max => a.max(b),
        }
    }
}
impl Testable for i32 {
    fn small(r: u32) -> i32 {
        (r % 2001) as i32 - 1000
    }
    fn combine(op: Op, a: i32, b: i32) -> i32 {
        match op {
            Op::Sum => a.wrapping_add(b),
            Op::Min => a.min(b),
            Op::Max => a.max(b),
        }
    }
}
impl Testable for u32 {
    fn small(r: u32) -> u32 {
        // Large enough that sums wrap on the longer inputs.
        r.wrapping_mul(2654435761)
    }
    fn combine(op: Op, a: u32, b: u32) -> u32 {
        match op {
            Op::Sum => a.wrapping_add(b),
            Op::Min => a.min(b),
            Op::Max => a.max(b),
        }
    }
}

/// Both scans of `xs` (uploaded as `x`) by `op` into `y`; panics naming
/// the first element that differs from the reference.
pub fn check_scans<T: Testable>(alg: &mut Algorithms<'_>, xs: &[T], x: &Buffer<T>, y: &mut Buffer<T>, op: Op) {
    let (gpu, n) = (alg.gpu(), xs.len());
    alg.inclusive_scan(x, y, op).unwrap_or_else(|e| panic!("{e}"));
    let got = gpu.read(y).unwrap();
    let mut acc = T::identity(op);
    for (i, &v) in xs.iter().enumerate() {
        acc = T::combine(op, acc, v);
        assert_eq!(got[i], acc, "inclusive scan {op:?} of {n} {} at {i}", std::any::type_name::<T>());
    }

    alg.exclusive_scan(x, y, op).unwrap();
    let got = gpu.read(y).unwrap();
    let mut acc = T::identity(op);
    for (i, &v) in xs.iter().enumerate() {
        assert_eq!(got[i], acc, "exclusive scan {op:?} of {n} {} at {i}", std::any::type_name::<T>());
        acc = T::combine(op, acc, v);
    }
}

/// Reduce, both scans and both selections of `T` at size `n`; panics
/// naming the first that differs from the reference.
pub fn check_element<T: Testable>(alg: &mut Algorithms<'_>, n: usize, seed: u64) {
    let gpu = alg.gpu();
    let mut r = Lcg::new(seed);
    let xs: Vec<T> = (0..n).map(|_| T::small(r.next())).collect();
    let x = gpu.upload(&xs).unwrap();
    let mut y = gpu.zeros::<T>(n.max(1)).unwrap();
    for op in [Op::Sum, Op::Min, Op::Max] {
        let want = xs.iter().fold(T::identity(op), |a, &b| T::combine(op, a, b));
        assert_eq!(alg.reduce(&x, op).unwrap(), want, "reduce {op:?} of {n} {}", std::any::type_name::<T>());

        check_scans(alg, &xs, &x, &mut y, op);
    }

    let pivot = T::small(r.next());
    for rule in [Rule::Greater(pivot), Rule::Less(pivot), Rule::Equal(pivot), Rule::NotEqual(pivot)] {
        let want: Vec<T> = xs.iter().copied().filter(|&v| rule.keeps(v)).collect();
        let kept = alg.select_if(&x, &mut y, rule).unwrap();
        assert_eq!(kept, want.len(), "select_if {rule:?} count of {n}");
        assert_eq!(gpu.read(&y).unwrap()[..kept], want[..], "select_if {rule:?} of {n}");
    }
    check_runs(alg, &xs, "random");
    // Runs of 1 to 40, a run crossing each tile's edge somewhere.
    let long: Vec<T> = (0..n).map(|i| T::small((i as u32 / (1 + (i as u32 / 97) % 40)).wrapping_mul(2_654_435_761) >> 20)).collect();
    check_runs(alg, &long, "runs of up to 40");
    check_runs(alg, &vec![T::small(3); n], "one run");
    let flag_bytes: Vec<u8> = (0..n).map(|_| if r.next().is_multiple_of(3) { (r.next() % 255 + 1) as u8 } else { 0 }).collect();
    let flags = gpu.upload(&flag_bytes).unwrap();
    let want: Vec<T> = xs.iter().zip(&flag_bytes).filter(|&(_, &f)| f != 0).map(|(&v, _)| v).collect();
    let kept = alg.select_flagged(&x, &flags, &mut y).unwrap();
    assert_eq!(kept, want.len(), "select_flagged count of {n}");
    assert_eq!(gpu.read(&y).unwrap()[..kept], want[..], "select_flagged of {n}");
}

/// The run-length encoding of `xs`: the count of runs, each run's value
/// and length equal to the CPU's, and `unique` and `lengths` left as they
/// were past the count.
pub fn check_runs<T: Testable>(alg: &mut Algorithms<'_>, xs: &[T], what: &str) {
    let gpu = alg.gpu();
    let n = xs.len();
    let x = gpu.upload(xs).unwrap();
    let mut unique = gpu.upload(&vec![T::small(7); n.max(1)]).unwrap();
    let mut lengths = gpu.upload(&vec![u32::MAX; n.max(1)]).unwrap();
    let runs = alg.run_length_encode(&x, &mut unique, &mut lengths).unwrap_or_else(|e| panic!("{e}"));
    let mut want: Vec<(T, u32)> = Vec::new();
    for &v in xs {
        match want.last_mut() {
            Some((u, len)) if *u == v => *len += 1,
            _ => want.push((v, 1)),
        }
    }
    let (u, l) = (gpu.read(&unique).unwrap(), gpu.read(&lengths).unwrap());
    assert_eq!(runs, want.len(), "run_length_encode of {n} {} ({what}): runs", std::any::type_name::<T>());
    for (r, &(v, len)) in want.iter().enumerate() {
        assert!(u[r] == v && l[r] == len, "run_length_encode of {n} ({what}): run {r} is {:?} x {}, the CPU's {v:?} x {len}", u[r], l[r]);
    }
    assert!(l[runs..].iter().all(|&x| x == u32::MAX), "run_length_encode of {n} ({what}): wrote past the runs");
}

/// The histogram of `samples` in `bins` even bins over `[lower, upper)`,
/// against the reference's count of the same bins.
pub fn check_histogram<S: Sample>(alg: &mut Algorithms<'_>, samples: &[S], bins: usize, lower: Level<S>, upper: Level<S>) {
    let gpu = alg.gpu();
    let x = gpu.upload(samples).unwrap();
    let mut b = gpu.upload(&vec![7u32; bins]).unwrap(); // overwritten, not added to
    alg.histogram_even(&x, &mut b, lower, upper).unwrap();
    let mut want = vec![0u32; bins];
    for &s in samples {
        if let Some(bin) = <S as cg_algorithms_kernels::histogram::Sample>::bin(s, lower, upper, bins as u32) {
            want[bin as usize] += 1;
        }
    }
    assert_eq!(gpu.read(&b).unwrap(), want, "histogram of {} {} in {bins} bins over [{lower:?}, {upper:?})", samples.len(), std::any::type_name::<S>());
}

/// Every algorithm, every type, at each of `sizes`.
pub fn check_all(gpu: &Gpu, sizes: &[usize]) {
    let mut alg = Algorithms::new(gpu);
    for (k, &n) in sizes.iter().enumerate() {
        check_element::<f32>(&mut alg, n, k as u64);
        check_element::<i32>(&mut alg, n, k as u64 + 100);
        check_element::<u32>(&mut alg, n, k as u64 + 200);
        let mut r = Lcg::new(k as u64 + 300);
        let bytes: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
        check_histogram(&mut alg, &bytes, 256, 0, 256);
        check_histogram(&mut alg, &bytes, 7, 10, 200);
        let ints: Vec<i32> = (0..n).map(|_| r.next() as i32 >> 8).collect();
        let wide: Vec<u16> = (0..n).map(|_| r.next() as u16).collect();
        check_histogram(&mut alg, &wide, 1000, 100, 60000);
        check_histogram(&mut alg, &ints, 3, i64::MIN, i64::MAX); // a range wider than 2^32
        check_histogram(&mut alg, &ints, 5000, -1 << 22, 1 << 22); // more bins than shared memory holds
        let floats: Vec<f32> = (0..n).map(|_| (r.next() % 10_000) as f32 / 100.0 - 10.0).collect();
        check_histogram(&mut alg, &floats, 64, -5.0f32, 80.0f32);
    }
}
