//! Plain identifiers and units shared by every part of the core.
//!
//! Invariants: a [`PageId`] names one page of one tablespace for the life of
//! a database; a [`FrameId`] indexes the buffer pool's frame array and is
//! always `< frame_count`; an [`Lsn`] is a byte offset into the endless redo
//! stream and never decreases; times are microseconds since an origin chosen
//! by the shell ([`TimeUs`]), never read from a clock by the core.

use std::fmt;

/// Microseconds since an origin chosen by the shell (simulated or real).
pub type TimeUs = u64;

/// One microsecond-denominated second, the page cleaner's nominal period.
pub const SECOND_US: TimeUs = 1_000_000;

/// A page of a tablespace: `space` selects the file, `page_no` the page in it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
pub struct PageId {
    pub space: u32,
    pub page_no: u32,
}

impl PageId {
    pub const fn new(space: u32, page_no: u32) -> Self {
        Self { space, page_no }
    }

    /// Packs the id into one integer (space in the high half), e.g. for traces.
    pub const fn as_u64(self) -> u64 {
        ((self.space as u64) << 32) | self.page_no as u64
    }

    pub const fn from_u64(raw: u64) -> Self {
        Self {
            space: (raw >> 32) as u32,
            page_no: raw as u32,
        }
    }
}

impl fmt::Display for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.space, self.page_no)
    }
}

/// Index of a frame (a page-sized slot) in the buffer pool.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct FrameId(pub u32);

impl FrameId {
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for FrameId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "frame#{}", self.0)
    }
}

/// Log sequence number: a byte position in the endless redo stream.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
pub struct Lsn(pub u64);

impl Lsn {
    pub const ZERO: Lsn = Lsn(0);
    pub const MAX: Lsn = Lsn(u64::MAX);

    /// Bytes from `older` to `self`; zero if `older` is not older.
    pub const fn bytes_since(self, older: Lsn) -> u64 {
        self.0.saturating_sub(older.0)
    }

    pub const fn advance(self, bytes: u64) -> Lsn {
        Lsn(self.0 + bytes)
    }
}

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
