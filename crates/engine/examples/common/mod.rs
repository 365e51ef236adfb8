//! Pieces the engine's measurement examples share (`hit_bench`,
//! `page_miss_iops`, `raw_iops`): each example is its own crate and uses
//! what it needs, hence the allowance below.
#![allow(dead_code)]

use flushwise_core::{Lsn, PageId};
use flushwise_engine::page::{self, PageType};
use flushwise_engine::storage::{AlignedBuf, Tablespace};

/// xorshift64*: a fast, seedable generator; quality is ample for offsets
/// and page picks.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Grows `ts` to `pages` sealed leaf pages of space `space`, their payload
/// incompressible (pages already there are kept), then syncs it.
pub fn prepare_pages(ts: &Tablespace, space: u32, pages: u32) -> Result<(), String> {
    if ts.page_count() >= pages {
        return Ok(());
    }
    let first = ts.page_count();
    ts.extend(pages - first).map_err(|e| e.to_string())?;
    let mut buf = AlignedBuf::zeroed(ts.page_size().bytes());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for p in first..pages {
        page::init(&mut buf, PageId::new(space, p), PageType::BTreeLeaf, Lsn(1));
        for word in page::payload_mut(&mut buf).chunks_exact_mut(8) {
            word.copy_from_slice(&rng.next().to_le_bytes());
        }
        ts.write_page(p, &mut buf).map_err(|e| e.to_string())?;
    }
    ts.sync().map_err(|e| e.to_string())
}
