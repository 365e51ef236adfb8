//! `PowerLossDisk`: an in-memory disk that loses, when the power is cut,
//! what was not yet durable, the way a page cache and a drive's volatile
//! write cache do.
//!
//! The crash model (what Linux may leave of files written with `pwrite`,
//! buffered or O_DIRECT, on ext4 or xfs when power fails; after LazyFS, ALICE
//! (Pillai et al., OSDI 2014) and TigerBeetle's VOPR storage faults):
//! - **Only `sync_data` makes anything durable.** A completed `sync_data`
//!   of a file makes every write and length change that completed on that
//!   file before the call durable; nothing else is promised. O_DIRECT does
//!   not change this: the write reached the drive's cache, not its media.
//! - **Unsynced operations survive in any combination.** At the cut each
//!   unsynced operation of every file is, independently, kept, dropped or
//!   (a write) torn, so any reordering within a file and across files
//!   (data, doublewrite, redo) can appear. Kept operations take effect in
//!   the order they were issued: for one sector the last kept write wins,
//!   and a dropped later write leaves an earlier kept one visible (the
//!   cache wrote the intermediate version back).
//! - **Sectors are atomic, pages are not.** A torn write keeps some of its
//!   sectors (512 B or 4 KiB, chosen per cut: a 512e or a 4Kn drive),
//!   either a prefix (sequential write-back stopped part way) or a random
//!   subset; a sector is never half old, half new.
//! - **Length changes are operations too.** A dropped `set_len` or
//!   extending write leaves the old length; sectors past the durable end
//!   that no kept write covers read as zeros. A file's length is only
//!   ever one a call gave it: a torn extending write that keeps any
//!   sector extends the file to the write's end (the file system's size
//!   update is one metadata change, never a sector boundary in between),
//!   its lost sectors zeros.
//!
//! Not modelled: directory entries (a created file exists at once; renames
//! are not supported through this disk, so a redo resize is refused),
//! latent sector errors and bit rot (the doublewrite and checksum tests
//! corrupt pages directly), and misdirected writes.
//!
//! The disk also injects I/O errors for the whole-database sweep
//! ([`DiskFaultPlan`], after SQLite's `ioerr` tests): the N-th read, write
//! or sync counted over every file fails with EIO, the N-th extension of a
//! file fails with ENOSPC.
//!
//! Invariants: after the cut every call fails and nothing changes; an
//! image taken after the cut contains every operation that was synced and
//! a subset of the others, each whole, torn on sector boundaries or absent;
//! the same seed and the same operations give the same image; images share
//! unchanged 64 KiB chunks, so cloning one is cheap.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{Checked, Result, StorageBackend, StorageError, StorageOpener};
use crate::rng::SplitMix64;

/// Unit of copy-on-write sharing between images.
const CHUNK_BYTES: usize = 64 << 10;

/// One file's bytes in shared 64 KiB chunks (zero past `len`).
#[derive(Clone, Default)]
struct ChunkedFile {
    len: u64,
    chunks: Vec<Arc<Vec<u8>>>,
}

impl ChunkedFile {
    fn from_bytes(bytes: &[u8]) -> Self {
        let mut f = Self::default();
        f.write(0, bytes);
        f
    }

    fn to_vec(&self) -> Vec<u8> {
        let mut out = vec![0; self.len as usize];
        self.read(0, &mut out);
        out
    }

    /// Copies `buf.len()` bytes at `offset`; false if they pass the end.
    fn read(&self, offset: u64, buf: &mut [u8]) -> bool {
        if offset.saturating_add(buf.len() as u64) > self.len {
            return false;
        }
        let mut done = 0;
        while done < buf.len() {
            let at = offset as usize + done;
            let (chunk, within) = (at / CHUNK_BYTES, at % CHUNK_BYTES);
            let n = (CHUNK_BYTES - within).min(buf.len() - done);
            buf[done..done + n].copy_from_slice(&self.chunks[chunk][within..within + n]);
            done += n;
        }
        true
    }

    fn ensure_chunks(&mut self, len: u64) {
        let needed = (len as usize).div_ceil(CHUNK_BYTES);
        while self.chunks.len() < needed {
            self.chunks.push(Arc::new(vec![0; CHUNK_BYTES]));
        }
    }

    fn write(&mut self, offset: u64, data: &[u8]) {
        let end = offset + data.len() as u64;
        self.ensure_chunks(end);
        let mut done = 0;
        while done < data.len() {
            let at = offset as usize + done;
            let (chunk, within) = (at / CHUNK_BYTES, at % CHUNK_BYTES);
            let n = (CHUNK_BYTES - within).min(data.len() - done);
            Arc::make_mut(&mut self.chunks[chunk])[within..within + n].copy_from_slice(&data[done..done + n]);
            done += n;
        }
        self.len = self.len.max(end);
    }

    fn set_len(&mut self, len: u64) {
        if len < self.len {
            // Zero what is cut off, so a later extension reads zeros.
            let (chunk, within) = ((len as usize) / CHUNK_BYTES, (len as usize) % CHUNK_BYTES);
            self.chunks.truncate((len as usize).div_ceil(CHUNK_BYTES));
            if within != 0 {
                Arc::make_mut(&mut self.chunks[chunk])[within..].fill(0);
            }
        } else {
            self.ensure_chunks(len);
        }
        self.len = len;
    }
}

/// The files of a disk as they would be found after a cut (or at any time:
/// [`PowerLossDisk::durable_image`]). Cloning shares the bytes.
#[derive(Clone, Default)]
pub struct DiskImage {
    files: BTreeMap<PathBuf, ChunkedFile>,
}

impl DiskImage {
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.files.keys().map(PathBuf::as_path)
    }

    /// The bytes of `path`, if the image has it.
    pub fn file_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        self.files.get(path).map(ChunkedFile::to_vec)
    }

    pub fn file_len(&self, path: &Path) -> Option<u64> {
        self.files.get(path).map(|f| f.len)
    }

    /// Replaces (or creates) `path` with `bytes`.
    pub fn set_file(&mut self, path: impl Into<PathBuf>, bytes: &[u8]) {
        self.files.insert(path.into(), ChunkedFile::from_bytes(bytes));
    }

    /// Bytes held by all files.
    pub fn total_bytes(&self) -> u64 {
        self.files.values().map(|f| f.len).sum()
    }
}

impl fmt::Debug for DiskImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.files.iter().map(|(p, file)| (p.display().to_string(), file.len)))
            .finish()
    }
}

/// An operation not yet made durable by a `sync_data` of its file.
#[derive(Clone)]
enum Unsynced {
    Write { offset: u64, data: Arc<[u8]> },
    SetLen { len: u64 },
}

#[derive(Default)]
struct FileState {
    /// What a `sync_data` made durable.
    durable: ChunkedFile,
    /// What reads see (durable + unsynced).
    volatile: ChunkedFile,
    unsynced: Vec<Unsynced>,
}

/// Which calls the disk fails, counted over all files from when the plan is
/// set (1-based). `None` fails nothing of that kind; each fails once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskFaultPlan {
    /// EIO on the N-th read.
    pub fail_read_n: Option<u64>,
    /// EIO on the N-th write.
    pub fail_write_n: Option<u64>,
    /// EIO on the N-th `sync_data`.
    pub fail_sync_n: Option<u64>,
    /// ENOSPC on the N-th write or `set_len` that grows a file.
    pub fail_extend_n: Option<u64>,
}

/// Calls the disk has seen (all files, since creation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskCounters {
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub extends: u64,
    pub bytes_written: u64,
}

/// What a cut did to the unsynced operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CutReport {
    /// Unsynced operations at the cut (writes and length changes).
    pub unsynced_ops: u64,
    pub writes_kept: u64,
    pub writes_dropped: u64,
    pub writes_torn: u64,
    pub set_len_kept: u64,
    pub set_len_dropped: u64,
    /// 512 or 4096.
    pub sector_bytes: u32,
    pub mode: CutMode,
}

/// How a cut treats the unsynced operations, drawn per cut from the seed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum CutMode {
    /// The caches were lost whole: every unsynced operation dropped.
    #[default]
    DropAll,
    /// The caches were written back whole (what a process kill leaves).
    KeepAll,
    /// Each operation kept with `keep`, torn with `tear`, else dropped.
    Mixed { keep: f64, tear: f64 },
}

impl Eq for CutMode {}

#[derive(Default)]
struct DiskState {
    files: BTreeMap<PathBuf, FileState>,
    counters: DiskCounters,
    /// Counters when the fault plan was set.
    faults_base: DiskCounters,
    faults: DiskFaultPlan,
    /// Cut the power when the N-th `sync_data` (counted from creation) is called.
    cut_at_sync: Option<u64>,
    /// Set once the power is cut: the reason, for every later error.
    cut: Option<String>,
    /// `sync_data` returns Ok and makes nothing durable: a drive that
    /// acknowledges cache flushes it never did (a real failure mode; the
    /// torture's own tests use it to show that it catches lost commits).
    lying_syncs: bool,
}

/// An in-memory disk with a power switch. Clones share the disk.
#[derive(Clone, Default)]
pub struct PowerLossDisk {
    state: Arc<Mutex<DiskState>>,
}

impl fmt::Debug for PowerLossDisk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.state.lock();
        f.debug_struct("PowerLossDisk")
            .field("files", &s.files.len())
            .field("counters", &s.counters)
            .field("cut", &s.cut)
            .finish()
    }
}

fn power_lost(path: &Path, op: &'static str, offset: u64, why: &str) -> StorageError {
    StorageError::Io {
        path: path.to_path_buf(),
        op,
        offset,
        source: io::Error::other(format!("power lost ({why})")),
    }
}

fn injected(path: &Path, op: &'static str, offset: u64, n: u64) -> StorageError {
    StorageError::Io {
        path: path.to_path_buf(),
        op,
        offset,
        source: io::Error::other(format!("injected EIO on {op} number {n} of the disk")),
    }
}

impl PowerLossDisk {
    pub fn new() -> Self {
        Self::default()
    }

    /// A disk whose files are `image`, all durable.
    pub fn from_image(image: &DiskImage) -> Self {
        let files = image
            .files
            .iter()
            .map(|(p, f)| {
                (
                    p.clone(),
                    FileState {
                        durable: f.clone(),
                        volatile: f.clone(),
                        unsynced: Vec::new(),
                    },
                )
            })
            .collect();
        Self {
            state: Arc::new(Mutex::new(DiskState {
                files,
                ..DiskState::default()
            })),
        }
    }

    /// Cut the power when the `n`-th `sync_data` since creation is called
    /// (that call fails and makes nothing durable). `None` disarms.
    pub fn cut_power_at_sync(&self, n: Option<u64>) {
        self.state.lock().cut_at_sync = n;
    }

    /// Cuts the power now.
    pub fn cut_power(&self, why: &str) {
        let mut s = self.state.lock();
        if s.cut.is_none() {
            s.cut = Some(why.to_string());
        }
    }

    /// Makes every later `sync_data` lie (see `DiskState::lying_syncs`).
    pub fn set_lying_syncs(&self, lying: bool) {
        self.state.lock().lying_syncs = lying;
    }

    pub fn is_cut(&self) -> bool {
        self.state.lock().cut.is_some()
    }

    /// Fails the calls `plan` names, counting from now.
    pub fn set_faults(&self, plan: DiskFaultPlan) {
        let mut s = self.state.lock();
        s.faults_base = s.counters;
        s.faults = plan;
    }

    pub fn counters(&self) -> DiskCounters {
        self.state.lock().counters
    }

    /// Unsynced operations now, over all files.
    pub fn unsynced_ops(&self) -> usize {
        self.state.lock().files.values().map(|f| f.unsynced.len()).sum()
    }

    /// What survives if the power fails now with every cache lost.
    pub fn durable_image(&self) -> DiskImage {
        let s = self.state.lock();
        DiskImage {
            files: s.files.iter().map(|(p, f)| (p.clone(), f.durable.clone())).collect(),
        }
    }

    /// What a reader sees now (durable and unsynced).
    pub fn volatile_image(&self) -> DiskImage {
        let s = self.state.lock();
        DiskImage {
            files: s.files.iter().map(|(p, f)| (p.clone(), f.volatile.clone())).collect(),
        }
    }

    /// Cuts the power (if not yet cut) and returns what the files hold
    /// after it: the durable state plus the unsynced operations `seed`
    /// keeps, drops or tears (see the module's model).
    pub fn image_after_cut(&self, seed: u64) -> (DiskImage, CutReport) {
        self.cut_power("image taken");
        let s = self.state.lock();
        let mut rng = SplitMix64::new(seed);
        let sector_bytes: u32 = if rng.coin() { 512 } else { 4096 };
        let mode = match rng.next_u64() % 10 {
            0 | 1 => CutMode::DropAll,
            2 => CutMode::KeepAll,
            _ => CutMode::Mixed {
                keep: rng.unit(),
                tear: 0.5 * rng.unit(),
            },
        };
        let mut report = CutReport {
            sector_bytes,
            mode,
            ..CutReport::default()
        };
        let mut files = BTreeMap::new();
        for (path, f) in &s.files {
            let mut image = f.durable.clone();
            for op in &f.unsynced {
                report.unsynced_ops += 1;
                let draw = rng.unit();
                let (keep, tear) = match mode {
                    CutMode::DropAll => (0.0, 0.0),
                    CutMode::KeepAll => (1.0, 0.0),
                    CutMode::Mixed { keep, tear } => (keep, tear),
                };
                match op {
                    Unsynced::SetLen { len } => {
                        if draw < keep + tear {
                            image.set_len(*len);
                            report.set_len_kept += 1;
                        } else {
                            report.set_len_dropped += 1;
                        }
                    }
                    Unsynced::Write { offset, data } => {
                        if draw < keep {
                            image.write(*offset, data);
                            report.writes_kept += 1;
                        } else if draw < keep + tear {
                            tear_write(&mut image, *offset, data, sector_bytes, &mut rng);
                            report.writes_torn += 1;
                        } else {
                            report.writes_dropped += 1;
                        }
                    }
                }
            }
            files.insert(path.clone(), image);
        }
        (DiskImage { files }, report)
    }

    fn check_cut(s: &DiskState, path: &Path, op: &'static str, offset: u64) -> Result<()> {
        match &s.cut {
            Some(why) => Err(power_lost(path, op, offset, why)),
            None => Ok(()),
        }
    }
}

/// Keeps some sectors of a write: a prefix or a random subset, never all
/// of a write of two or more sectors, at least one.
fn tear_write(image: &mut ChunkedFile, offset: u64, data: &[u8], sector_bytes: u32, rng: &mut SplitMix64) {
    let sector = u64::from(sector_bytes);
    let end = offset + data.len() as u64;
    // Pieces of the write, one per sector it touches.
    let mut pieces = Vec::new();
    let mut at = offset;
    while at < end {
        let piece_end = ((at / sector) + 1) * sector;
        let piece_end = piece_end.min(end);
        pieces.push((at, piece_end));
        at = piece_end;
    }
    let n = pieces.len();
    let kept: Vec<bool> = if n == 1 {
        vec![rng.coin()]
    } else if rng.coin() {
        let prefix = 1 + (rng.next_u64() % (n as u64 - 1)) as usize;
        (0..n).map(|i| i < prefix).collect()
    } else {
        let mut k: Vec<bool> = (0..n).map(|_| rng.coin()).collect();
        if k.iter().all(|&b| b) {
            k[(rng.next_u64() % n as u64) as usize] = false;
        }
        if k.iter().all(|&b| !b) {
            k[(rng.next_u64() % n as u64) as usize] = true;
        }
        k
    };
    let any_kept = kept.iter().any(|&k| k);
    for ((start, stop), keep) in pieces.into_iter().zip(kept) {
        if keep {
            let from = (start - offset) as usize;
            let to = (stop - offset) as usize;
            image.write(start, &data[from..to]);
        }
    }
    if any_kept && end > image.len {
        image.set_len(end);
    }
}

/// One file of a [`PowerLossDisk`].
pub struct PowerLossFile {
    disk: PowerLossDisk,
    path: PathBuf,
}

impl PowerLossFile {
    fn with_file<T>(&self, op: &'static str, offset: u64, f: impl FnOnce(&mut DiskState) -> Result<T>) -> Result<T> {
        let mut s = self.disk.state.lock();
        PowerLossDisk::check_cut(&s, &self.path, op, offset)?;
        if !s.files.contains_key(&self.path) {
            return Err(StorageError::Io {
                path: self.path.clone(),
                op,
                offset,
                source: io::Error::new(io::ErrorKind::NotFound, "no such file on the power-loss disk"),
            });
        }
        f(&mut s)
    }

    /// ENOSPC if the plan fails this extension; counts it.
    fn count_extend(s: &mut DiskState, path: &Path, op: &'static str, offset: u64, len: u64) -> Result<()> {
        s.counters.extends += 1;
        let n = s.counters.extends - s.faults_base.extends;
        if s.faults.fail_extend_n == Some(n) {
            return Err(StorageError::DiskFull {
                path: path.to_path_buf(),
                op,
                offset,
                len,
            });
        }
        Ok(())
    }
}

impl StorageBackend for PowerLossFile {
    fn len(&self) -> Result<u64> {
        self.with_file("len", 0, |s| Ok(s.files[&self.path].volatile.len))
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.with_file("read", offset, |s| {
            s.counters.reads += 1;
            let n = s.counters.reads - s.faults_base.reads;
            if s.faults.fail_read_n == Some(n) {
                return Err(injected(&self.path, "read", offset, n));
            }
            if s.files[&self.path].volatile.read(offset, buf) {
                Ok(())
            } else {
                Err(StorageError::ShortRead {
                    path: self.path.clone(),
                    offset,
                    wanted: buf.len(),
                })
            }
        })
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.with_file("write", offset, |s| {
            s.counters.writes += 1;
            let n = s.counters.writes - s.faults_base.writes;
            if s.faults.fail_write_n == Some(n) {
                return Err(injected(&self.path, "write", offset, n));
            }
            let end = offset + data.len() as u64;
            if end > s.files[&self.path].volatile.len {
                Self::count_extend(s, &self.path, "write", offset, data.len() as u64)?;
            }
            s.counters.bytes_written += data.len() as u64;
            let file = s.files.get_mut(&self.path).expect("checked by with_file");
            file.volatile.write(offset, data);
            file.unsynced.push(Unsynced::Write {
                offset,
                data: Arc::from(data),
            });
            Ok(())
        })
    }

    fn set_len(&self, len: u64) -> Result<()> {
        self.with_file("set_len", len, |s| {
            if len > s.files[&self.path].volatile.len {
                Self::count_extend(s, &self.path, "set_len", len, len)?;
            }
            let file = s.files.get_mut(&self.path).expect("checked by with_file");
            file.volatile.set_len(len);
            file.unsynced.push(Unsynced::SetLen { len });
            Ok(())
        })
    }

    fn sync_data(&self) -> Result<()> {
        let mut s = self.disk.state.lock();
        PowerLossDisk::check_cut(&s, &self.path, "sync_data", 0)?;
        s.counters.syncs += 1;
        let syncs = s.counters.syncs;
        if s.cut_at_sync == Some(syncs) {
            let why = format!("cut at sync point {syncs}");
            s.cut = Some(why.clone());
            return Err(power_lost(&self.path, "sync_data", 0, &why));
        }
        let n = syncs - s.faults_base.syncs;
        if s.faults.fail_sync_n == Some(n) {
            return Err(injected(&self.path, "sync_data", 0, n));
        }
        if s.lying_syncs {
            return Ok(());
        }
        let Some(file) = s.files.get_mut(&self.path) else {
            return Err(StorageError::Io {
                path: self.path.clone(),
                op: "sync_data",
                offset: 0,
                source: io::Error::new(io::ErrorKind::NotFound, "no such file on the power-loss disk"),
            });
        };
        file.durable = file.volatile.clone();
        file.unsynced.clear();
        Ok(())
    }

    fn close(&self) -> Result<()> {
        // Closing makes nothing durable (close(2) does not fsync).
        Ok(())
    }
}

impl StorageOpener for PowerLossDisk {
    fn exists(&self, path: &Path) -> bool {
        self.state.lock().files.contains_key(path)
    }

    fn open(&self, path: &Path, create: bool) -> Result<Arc<dyn StorageBackend>> {
        {
            let mut s = self.state.lock();
            PowerLossDisk::check_cut(&s, path, "open", 0)?;
            if !s.files.contains_key(path) {
                if !create {
                    return Err(StorageError::Io {
                        path: path.to_path_buf(),
                        op: "open",
                        offset: 0,
                        source: io::Error::new(io::ErrorKind::NotFound, "no such file on the power-loss disk"),
                    });
                }
                s.files.insert(path.to_path_buf(), FileState::default());
            }
        }
        let file = PowerLossFile {
            disk: self.clone(),
            path: path.to_path_buf(),
        };
        Ok(Arc::new(Checked::new(file, path)))
    }

    fn describe(&self) -> &'static str {
        "an in-memory power-loss disk"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(disk: &PowerLossDisk, name: &str) -> Arc<dyn StorageBackend> {
        disk.open(Path::new(name), true).unwrap()
    }

    #[test]
    fn synced_writes_survive_every_cut() {
        for seed in 0..200 {
            let disk = PowerLossDisk::new();
            let f = open(&disk, "a");
            f.write(0, &[1; 8192]).unwrap();
            f.sync_data().unwrap();
            f.write(4096, &[2; 8192]).unwrap();
            let (image, report) = disk.image_after_cut(seed);
            let bytes = image.file_bytes(Path::new("a")).unwrap();
            assert!(bytes.len() >= 8192, "seed {seed}: {report:?}");
            assert!(bytes[..4096].iter().all(|&b| b == 1), "seed {seed}");
            // Every sector of the unsynced write is old or new, never mixed.
            for sector in bytes[4096..].chunks(512) {
                assert!(
                    sector.iter().all(|&b| b == 1) || sector.iter().all(|&b| b == 2) || sector.iter().all(|&b| b == 0),
                    "seed {seed}: mixed sector"
                );
            }
        }
    }

    #[test]
    fn a_torn_extending_write_leaves_the_old_length_or_the_whole_new_one() {
        let (mut old, mut new) = (0, 0);
        for seed in 0..300 {
            let disk = PowerLossDisk::new();
            let f = open(&disk, "a");
            f.write(0, &[1; 4096]).unwrap();
            f.sync_data().unwrap();
            f.write(4096, &[2; 4096]).unwrap();
            let (image, _) = disk.image_after_cut(seed);
            let bytes = image.file_bytes(Path::new("a")).unwrap();
            match bytes.len() {
                4096 => old += 1,
                8192 => {
                    new += 1;
                    for sector in bytes[4096..].chunks(512) {
                        assert!(
                            sector.iter().all(|&b| b == 2) || sector.iter().all(|&b| b == 0),
                            "seed {seed}: mixed sector"
                        );
                    }
                }
                n => panic!("seed {seed}: length {n}, neither the old 4096 nor the written 8192"),
            }
        }
        assert!(old > 0 && new > 0, "old {old}, new {new}");
    }

    #[test]
    fn cut_modes_cover_drop_keep_and_tear() {
        let mut seen = (false, false, false);
        for seed in 0..200 {
            let disk = PowerLossDisk::new();
            let f = open(&disk, "a");
            for i in 0..8u8 {
                f.write(u64::from(i) * 16384, &[i + 1; 16384]).unwrap();
            }
            let (_, r) = disk.image_after_cut(seed);
            assert_eq!(r.unsynced_ops, 8);
            assert_eq!(r.writes_kept + r.writes_dropped + r.writes_torn, 8);
            seen.0 |= r.writes_dropped == 8;
            seen.1 |= r.writes_kept == 8;
            seen.2 |= r.writes_torn > 0;
        }
        assert_eq!(seen, (true, true, true));
    }

    #[test]
    fn same_seed_same_image() {
        let build = || {
            let disk = PowerLossDisk::new();
            let f = open(&disk, "a");
            let g = open(&disk, "b");
            for i in 0..50u64 {
                f.write(i * 1000, &[i as u8; 3000]).unwrap();
                g.set_len(i * 10).unwrap();
            }
            disk
        };
        let (a, ra) = build().image_after_cut(7);
        let (b, rb) = build().image_after_cut(7);
        assert_eq!(ra, rb);
        for p in ["a", "b"] {
            assert_eq!(a.file_bytes(Path::new(p)), b.file_bytes(Path::new(p)));
        }
    }

    #[test]
    fn power_cut_at_a_sync_point_fails_that_sync_and_everything_after() {
        let disk = PowerLossDisk::new();
        let f = open(&disk, "a");
        disk.cut_power_at_sync(Some(2));
        f.write(0, b"x").unwrap();
        f.sync_data().unwrap();
        f.write(1, b"y").unwrap();
        let e = f.sync_data().unwrap_err().to_string();
        assert!(e.contains("power lost") && e.contains("sync point 2"), "{e}");
        assert!(f.read(0, &mut [0; 1]).is_err());
        assert!(disk.is_cut());
        // The durable image holds the first sync only.
        assert_eq!(disk.durable_image().file_bytes(Path::new("a")).unwrap(), b"x");
    }

    #[test]
    fn fault_plan_fails_the_nth_call_of_each_kind() {
        let disk = PowerLossDisk::new();
        let f = disk.open(Path::new("a"), true).unwrap();
        f.write(0, &[0; 100]).unwrap();
        disk.set_faults(DiskFaultPlan {
            fail_extend_n: Some(1),
            ..DiskFaultPlan::default()
        });
        f.write(0, &[1; 100]).unwrap(); // an overwrite is no extension
        let e = f.write(100, &[1; 10]).unwrap_err();
        assert!(e.is_disk_full(), "{e}");
        let disk = PowerLossDisk::new();
        let f = disk.open(Path::new("a"), true).unwrap();
        disk.set_faults(DiskFaultPlan {
            fail_sync_n: Some(2),
            ..DiskFaultPlan::default()
        });
        f.sync_data().unwrap();
        assert!(f.sync_data().unwrap_err().to_string().contains("injected EIO"));
        // Checked poisons after a failed sync.
        assert!(f
            .write(0, b"z")
            .unwrap_err()
            .to_string()
            .contains("refuses further work"));
    }

    #[test]
    fn a_lying_sync_makes_nothing_durable() {
        let disk = PowerLossDisk::new();
        let f = open(&disk, "a");
        f.write(0, b"kept").unwrap();
        f.sync_data().unwrap();
        disk.set_lying_syncs(true);
        f.write(0, b"lost").unwrap();
        f.sync_data().unwrap();
        assert_eq!(disk.durable_image().file_bytes(Path::new("a")).unwrap(), b"kept");
    }

    #[test]
    fn truncation_then_extension_reads_zeros() {
        let mut f = ChunkedFile::default();
        f.write(0, &[9; 100_000]);
        f.set_len(70_000);
        f.set_len(100_000);
        let mut buf = vec![1; 30_000];
        assert!(f.read(70_000, &mut buf));
        assert!(buf.iter().all(|&b| b == 0));
        assert!(!f.read(99_999, &mut [0; 2]));
    }

    #[test]
    fn images_share_chunks_until_written() {
        let disk = PowerLossDisk::new();
        let f = open(&disk, "a");
        f.write(0, &vec![5; 1 << 20]).unwrap();
        f.sync_data().unwrap();
        let image = disk.durable_image();
        let again = PowerLossDisk::from_image(&image);
        let g = again.open(Path::new("a"), false).unwrap();
        g.write(0, &[6; 10]).unwrap();
        assert_eq!(image.file_bytes(Path::new("a")).unwrap()[0], 5);
        let mut b = [0; 1];
        g.read(0, &mut b).unwrap();
        assert_eq!(b[0], 6);
    }
}
