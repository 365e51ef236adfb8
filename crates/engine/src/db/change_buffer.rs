//! The change buffer (InnoDB's insert buffer, paper `004`): inserts into a
//! non-unique secondary index whose target leaf is not in the buffer pool
//! are recorded in a separate B+tree instead of reading the leaf, and
//! merged into the leaf when it is next latched.
//!
//! (Options and statistics; the mechanism follows in this module.)

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// Where secondary-index inserts go when their leaf is not in the pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChangeBufferMode {
    /// Every insert reads its leaf (InnoDB `innodb_change_buffering=none`).
    #[default]
    Off,
    /// Buffered in a B+tree in the data file (InnoDB's system tablespace).
    On,
    /// Buffered in a B+tree in a file of its own, on another device
    /// (`004` §3: the insert buffer on a ramdisk).
    SeparateDevice,
}

impl ChangeBufferMode {
    pub const NAMES: [&'static str; 3] = ["off", "on", "separate-device"];

    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::On => "on",
            Self::SeparateDevice => "separate-device",
        }
    }
}

impl fmt::Display for ChangeBufferMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ChangeBufferMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(Self::Off),
            "on" => Ok(Self::On),
            "separate-device" => Ok(Self::SeparateDevice),
            other => Err(format!(
                "unknown change-buffer mode {other:?}: expected one of {}",
                Self::NAMES.join(", ")
            )),
        }
    }
}

/// Default largest size of the change buffer, percent of the buffer pool
/// (`innodb_change_buffer_max_size`, MySQL 5.6+ default 25).
pub const DEFAULT_MAX_PCT: u8 = 25;
/// Largest accepted `max_pct` (InnoDB's limit is 50).
pub const MAX_MAX_PCT: u8 = 50;

/// The change buffer's options (part of `DbOptions`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeBufferOptions {
    pub mode: ChangeBufferMode,
    /// Largest size, percent of the buffer pool (1..=50).
    pub max_pct: u8,
    /// `SeparateDevice`: the directory of the change buffer's own file
    /// (`flushwise.ibuf`); `None`: beside the data file. Point it at a
    /// RAM-backed file system (`/dev/shm`) for `004`'s ramdisk.
    pub dir: Option<PathBuf>,
}

impl Default for ChangeBufferOptions {
    fn default() -> Self {
        Self {
            mode: ChangeBufferMode::Off,
            max_pct: DEFAULT_MAX_PCT,
            dir: None,
        }
    }
}

/// Cumulative counters and gauges of the change buffer since open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChangeBufferStats {
    /// Inserts recorded in the change buffer instead of their leaf.
    pub buffered_inserts: u64,
    /// Inserts that wanted buffering but went to their leaf (leaf free
    /// space unknown or short, buffer full).
    pub buffer_refused: u64,
    /// Buffered entries applied to their leaf.
    pub merged_entries: u64,
    /// Merges done when a user latched a leaf with buffered entries.
    pub merges_on_access: u64,
    /// Merges done by the background merger (leaves it read for that).
    pub merges_background: u64,
    /// Leaves with buffered entries now.
    pub pending_pages: u64,
    /// Bytes of buffered entries now.
    pub pending_bytes: u64,
}
