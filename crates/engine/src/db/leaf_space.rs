//! Free space and entry count of the non-unique indexes' leaves, as last
//! seen: what the change buffer needs to know to buffer an insert or a
//! delete without reading its leaf. InnoDB keeps the free space on disk in
//! its insert-buffer bitmap pages (`ibuf0ibuf.cc` `IBUF_BITMAP_FREE`) and
//! has no entry count: it buffers a delete (`IBUF_OP_DELETE`, a purge)
//! only when the operations already buffered for the page prove two
//! records remain (`ibuf_insert_low`, `min_n_recs < 2` refuses); knowing
//! the count lets this engine buffer deletes for leaves with nothing
//! buffered yet.
//!
//! One word per data page: bit 63 = the change buffer has entries for the
//! page (or a thread is deciding to buffer one), bits 32..63 = entries + 1,
//! bits 0..32 = free bytes + 1 (both 0 = unknown; they are known or
//! unknown together). Learned from every latch and every commit of a leaf
//! through a secondary index's store, and from the bulk loader's leaves.
//!
//! **Invariant:** a known value is exactly the leaf's free space and entry
//! count when no one holds the leaf and nothing is buffered for it (it is
//! written after the change it describes, under the page's latch, or from
//! a committed image); anything uncertain is unknown.
//!
//! **Kept across a clean close.** [`LeafSpace::save`] writes the known
//! values (not the pending bits: the change buffer's tree has those) with
//! the checkpoint LSN of the close; [`LeafSpace::take_saved`] at the next
//! open reads and deletes the file, and the values are used only if the
//! log holds nothing after that checkpoint (a clean close): after a crash
//! the redo may have changed any leaf, so everything starts unknown.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use flushwise_core::Lsn;
use parking_lot::RwLock;

/// A page's word: the change buffer has entries for it.
pub(crate) const PENDING: u64 = 1 << 63;
/// A page's word: free bytes + 1 (bits 0..32) and entries + 1 (bits
/// 32..63); 0 = unknown.
pub(crate) const FILL_MASK: u64 = PENDING - 1;
const ENTRIES_SHIFT: u32 = 32;
/// File name, in the data directory.
pub const FILE_NAME: &str = "flushwise.leafspace";
/// `02`: entry counts beside free space (a `01` file is ignored: derived
/// data, relearned).
const MAGIC: &[u8; 8] = b"FWLEAF02";

/// What is known of a leaf: its free bytes and how many entries it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LeafFill {
    pub free_bytes: u32,
    pub entries: u32,
}

impl LeafFill {
    fn encode(self) -> u64 {
        let free = u64::from(self.free_bytes.min(u32::MAX - 1)) + 1;
        let entries = u64::from(self.entries.min((1 << 30) - 1)) + 1;
        (entries << ENTRIES_SHIFT) | free
    }

    fn decode(word: u64) -> Option<Self> {
        let word = word & FILL_MASK;
        let free = (word & u64::from(u32::MAX)).checked_sub(1)?;
        let entries = (word >> ENTRIES_SHIFT).checked_sub(1)?;
        Some(Self {
            free_bytes: free as u32,
            entries: entries as u32,
        })
    }
}

/// The saved file of a database whose data file is in `data_dir`.
pub fn path_in(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE_NAME)
}

/// See the module doc.
#[derive(Default)]
pub(crate) struct LeafSpace {
    pages: RwLock<Vec<AtomicU64>>,
    pending_pages: AtomicU64,
}

impl LeafSpace {
    /// Runs `f` on the page's word, growing the table if needed.
    fn with_entry<T>(&self, page_no: u32, f: impl FnOnce(&AtomicU64) -> T) -> T {
        {
            let pages = self.pages.read();
            if let Some(e) = pages.get(page_no as usize) {
                return f(e);
            }
        }
        let mut pages = self.pages.write();
        let want = (page_no as usize + 1).max(pages.len() * 2);
        if pages.len() < want {
            pages.resize_with(want, || AtomicU64::new(0));
        }
        f(&pages[page_no as usize])
    }

    pub(crate) fn set_pending(&self, page_no: u32) {
        let before = self.with_entry(page_no, |e| e.fetch_or(PENDING, Ordering::SeqCst));
        if before & PENDING == 0 {
            self.pending_pages.fetch_add(1, Ordering::SeqCst);
        }
    }

    pub(crate) fn clear_pending(&self, page_no: u32) {
        let before = self.with_entry(page_no, |e| e.fetch_and(FILL_MASK, Ordering::SeqCst));
        if before & PENDING != 0 {
            self.pending_pages.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// True if the page has buffered entries (or a thread is deciding to
    /// buffer one): whoever latches it must merge first.
    pub(crate) fn is_pending(&self, page_no: u32) -> bool {
        if self.pending_pages.load(Ordering::SeqCst) == 0 {
            return false;
        }
        let pages = self.pages.read();
        pages
            .get(page_no as usize)
            .is_some_and(|e| e.load(Ordering::SeqCst) & PENDING != 0)
    }

    pub(crate) fn known(&self, page_no: u32) -> Option<LeafFill> {
        let pages = self.pages.read();
        LeafFill::decode(pages.get(page_no as usize)?.load(Ordering::SeqCst))
    }

    /// Records a page's free bytes and entries (`None`: not a leaf, forget
    /// it).
    pub(crate) fn note(&self, page_no: u32, fill: Option<LeafFill>) {
        let value = fill.map_or(0, LeafFill::encode);
        self.with_entry(page_no, |e| {
            let _ = e.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |old| Some((old & PENDING) | value));
        });
    }

    /// Pages with a known value.
    pub(crate) fn known_pages(&self) -> u64 {
        self.pages
            .read()
            .iter()
            .filter(|e| e.load(Ordering::Relaxed) & FILL_MASK != 0)
            .count() as u64
    }

    pub(crate) fn path_in(data_dir: &Path) -> PathBuf {
        path_in(data_dir)
    }

    /// Writes the known values with the checkpoint LSN of a clean close
    /// (beside, then renamed over, then the directory synced).
    pub(crate) fn save(&self, path: &Path, checkpoint: Lsn) -> std::io::Result<()> {
        let mut out = Vec::with_capacity(20 + self.known_pages() as usize * 12);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&checkpoint.0.to_le_bytes());
        for (page_no, e) in self.pages.read().iter().enumerate() {
            let raw = e.load(Ordering::SeqCst) & FILL_MASK;
            if raw != 0 {
                out.extend_from_slice(&(page_no as u32).to_le_bytes());
                out.extend_from_slice(&raw.to_le_bytes());
            }
        }
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        let tmp = path.with_extension("tmp");
        {
            let mut f = File::create(&tmp)?;
            f.write_all(&out)?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent() {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    }

    /// Reads and deletes a saved file; loads it if it was written at
    /// `checkpoint` and `clean` (the log holds nothing after it). Returns
    /// the pages loaded; a missing file loads nothing, a damaged one is
    /// deleted and ignored (it is derived data).
    pub(crate) fn take_saved(&self, path: &Path, checkpoint: Lsn, clean: bool) -> std::io::Result<u64> {
        let mut bytes = Vec::new();
        match File::open(path) {
            Ok(mut f) => {
                f.read_to_end(&mut bytes)?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        }
        // Gone before anything can change a leaf: a later crash must not
        // find values older than the redo it replays.
        std::fs::remove_file(path)?;
        if let Some(dir) = path.parent() {
            File::open(dir)?.sync_all()?;
        }
        let valid = bytes.len() >= 20 && (bytes.len() - 20) % 12 == 0 && &bytes[..8] == MAGIC && {
            let (body, crc) = bytes.split_at(bytes.len() - 4);
            crc32c::crc32c(body).to_le_bytes() == crc
        };
        if !valid || !clean {
            return Ok(0);
        }
        let saved_lsn = u64::from_le_bytes(bytes[8..16].try_into().unwrap_or_default());
        if saved_lsn != checkpoint.0 {
            return Ok(0);
        }
        let mut loaded = 0;
        for item in bytes[16..bytes.len() - 4].chunks_exact(12) {
            let page_no = u32::from_le_bytes([item[0], item[1], item[2], item[3]]);
            let mut word = [0u8; 8];
            word.copy_from_slice(&item[4..12]);
            let raw = u64::from_le_bytes(word) & FILL_MASK;
            self.with_entry(page_no, |e| e.store(raw, Ordering::SeqCst));
            loaded += 1;
        }
        Ok(loaded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_space_and_entries_are_known_together_beside_the_pending_bit() {
        let l = LeafSpace::default();
        let fill = LeafFill {
            free_bytes: 16_000,
            entries: 900,
        };
        assert_eq!(l.known(9), None);
        l.set_pending(9);
        assert_eq!(l.known(9), None, "the pending bit alone says nothing of the leaf");
        l.note(9, Some(fill));
        assert!(l.is_pending(9), "noting the fill keeps the pending bit");
        assert_eq!(l.known(9), Some(fill));
        l.clear_pending(9);
        assert_eq!(l.known(9), Some(fill), "clearing the bit keeps the fill");
        let empty_full = LeafFill {
            free_bytes: 0,
            entries: 0,
        };
        l.note(9, Some(empty_full));
        assert_eq!(l.known(9), Some(empty_full), "zero is a known value");
        l.note(9, None);
        assert_eq!(l.known(9), None);
    }

    #[test]
    fn values_survive_a_save_at_the_same_checkpoint_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = LeafSpace::path_in(dir.path());
        let a = LeafSpace::default();
        let fill = |free_bytes, entries| LeafFill { free_bytes, entries };
        a.note(3, Some(fill(100, 7)));
        a.note(70_000, Some(fill(0, 1)));
        a.set_pending(3);
        a.save(&path, Lsn(4096)).unwrap();
        let b = LeafSpace::default();
        assert_eq!(b.take_saved(&path, Lsn(4096), true).unwrap(), 2);
        assert_eq!(
            (b.known(3), b.known(70_000), b.known(4)),
            (Some(fill(100, 7)), Some(fill(0, 1)), None)
        );
        assert!(!b.is_pending(3), "pending bits come from the change buffer's tree");
        assert!(!path.exists(), "the file is deleted when read");
        // Another checkpoint, or redo to apply: nothing is loaded.
        a.save(&path, Lsn(4096)).unwrap();
        let c = LeafSpace::default();
        assert_eq!(c.take_saved(&path, Lsn(8192), true).unwrap(), 0);
        a.save(&path, Lsn(4096)).unwrap();
        assert_eq!(c.take_saved(&path, Lsn(4096), false).unwrap(), 0);
        assert_eq!(c.known(3), None);
        // A damaged file is ignored and removed.
        a.save(&path, Lsn(4096)).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[17] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(c.take_saved(&path, Lsn(4096), true).unwrap(), 0);
        assert!(!path.exists());
    }
}
