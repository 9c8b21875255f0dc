//! What a call can fail with.

use std::fmt;

/// Why a call failed: a launcher's error (a buffer too short, the device,
/// the kernel), or an argument these algorithms refuse.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The launcher's error: a device, memory or launch failure, or a
    /// buffer shorter than the call needs (`BufferTooShort` names it).
    Launcher(cg_launcher::error::Error),
    /// More elements than the kernels count (they count in `u32`).
    TooLong {
        /// Elements asked for.
        n: usize,
        /// The most they take.
        most: usize,
    },
    /// A histogram with no bins.
    NoBins,
    /// A histogram whose range `[lower, upper)` is empty, or not a range (NaN).
    EmptyRange {
        /// The lower level, as written.
        lower: String,
        /// The upper level, as written.
        upper: String,
    },
    /// An `f32` histogram whose range is wider than `f32` counts:
    /// `upper - lower` is infinite, or the bins' scale over it below the
    /// normal floats, so every sample would fall in one bin.
    RangeTooWide {
        /// The lower level, as written.
        lower: String,
        /// The upper level, as written.
        upper: String,
    },
    /// A sort's bit range that is empty or inverted, or that ends past the
    /// key's bits.
    BitRange {
        /// The first bit asked for.
        begin: u32,
        /// The bit after the last asked for.
        end: u32,
        /// The key's bits.
        key_bits: u32,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Launcher(e) => e.fmt(f),
            Error::TooLong { n, most } => write!(f, "{n} elements: these kernels count in u32 and take at most {most}"),
            Error::NoBins => write!(f, "a histogram needs at least one bin: the bins buffer is empty"),
            Error::EmptyRange { lower, upper } => {
                write!(f, "a histogram's levels must satisfy lower < upper; got lower {lower}, upper {upper}")
            }
            Error::BitRange { begin, end, key_bits } => write!(
                f,
                "a sort's bit range {begin}..{end} is empty or past the key's {key_bits} bits: give begin < end <= {key_bits}, or no range to sort by every bit"
            ),
            Error::RangeTooWide { lower, upper } => write!(
                f,
                "a histogram's range from {lower} to {upper} is wider than f32 counts (upper - lower, or bins over it, is out of f32's normal range, so every sample would fall in one bin): split it, or shift and scale the samples first"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Launcher(e) => Some(e),
            _ => None,
        }
    }
}

/// A call's error as the launcher's, for a program whose errors are
/// cg-launcher's (a closure `Gpu::time_queued` runs, say): the launcher's
/// own error comes back as itself, the others as its `Caller`.
impl From<Error> for cg_launcher::error::Error {
    fn from(e: Error) -> cg_launcher::error::Error {
        match e {
            Error::Launcher(e) => e,
            other => cg_launcher::error::Error::Caller(Box::new(other)),
        }
    }
}

impl From<cg_launcher::error::Error> for Error {
    fn from(e: cg_launcher::error::Error) -> Error {
        Error::Launcher(e)
    }
}
