//! Helpers for the buffer pool shell scenarios: a database directory with
//! one tablespace, a redo log and optionally a doublewrite file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use flushwise_engine::buffer::{BufferPoolShell, ShellConfig};
use flushwise_engine::page_store::{Latch, PageGuard, PageStore};
use flushwise_engine::redo::{RecoveryScan, RedoConfig, RedoLog};
use flushwise_engine::storage::{open_file, Doublewrite, IoMode, StorageBackend, Tablespace};

use super::{io_mode_for, PAGE};

pub const SPACE: u32 = 1;

pub struct Db {
    pub dir: PathBuf,
    pub redo: Arc<RedoLog>,
    pub ts: Arc<Tablespace>,
    pub shell: Arc<BufferPoolShell>,
    /// Records the redo scan at open found after the checkpoint.
    pub scan: Option<RecoveryScan>,
}

pub fn ts_path(dir: &Path) -> PathBuf {
    dir.join("t1.ibd")
}

pub fn shell_config(frames: u32, policy: &str) -> ShellConfig {
    ShellConfig {
        frames,
        policy: policy.parse().expect("a registered policy"),
        thread_concurrency: 0,
        ..ShellConfig::default()
    }
}

/// Creates (`create`) or reopens the database in `dir`; `ts_backend`
/// replaces the tablespace file's backend (fault injection).
pub fn open_db(
    dir: &Path,
    create: bool,
    config: ShellConfig,
    redo_capacity_bytes: u64,
    doublewrite: bool,
    ts_backend: Option<Arc<dyn StorageBackend>>,
) -> Db {
    let mode = io_mode_for(dir);
    let redo_path = dir.join("redo.log");
    // The log writes 512-byte blocks: buffered, as the redo tests use it.
    let redo_backend = open_file(&redo_path, IoMode::Buffered, create).unwrap();
    let (redo, scan) = if create {
        (
            RedoLog::create(&redo_path, redo_backend, redo_capacity_bytes, RedoConfig::default()).unwrap(),
            None,
        )
    } else {
        let (log, scan) = RedoLog::open(&redo_path, redo_backend, RedoConfig::default()).unwrap();
        (log, Some(scan))
    };
    let redo = Arc::new(redo);
    let path = ts_path(dir);
    let backend = ts_backend.unwrap_or_else(|| open_file(&path, mode, create).unwrap());
    let ts = Arc::new(Tablespace::open(SPACE, &path, backend, PAGE).unwrap());
    let dw = doublewrite.then(|| {
        let p = dir.join("doublewrite.dblwr");
        Arc::new(Doublewrite::open(&p, open_file(&p, mode, true).unwrap(), PAGE, 128).unwrap())
    });
    let shell = BufferPoolShell::open(config, Arc::clone(&redo), dw, vec![Arc::clone(&ts)]).unwrap();
    Db {
        dir: dir.to_path_buf(),
        redo,
        ts,
        shell,
        scan,
    }
}

impl Db {
    /// Clean close: shutdown, then close the redo log.
    pub fn close(self) {
        self.shell.shutdown().unwrap();
        let Db { redo, shell, ts, .. } = self;
        drop(shell);
        drop(ts);
        Arc::try_unwrap(redo).expect("redo still shared").close().unwrap();
    }
}

/// Fills the payload of a page with a pattern derived from `(page_no, version)`.
pub fn pattern(page_no: u32, version: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u64)
                .wrapping_mul(31)
                .wrapping_add(u64::from(page_no) * 7 + version * 13) as u8
        })
        .collect()
}

/// Allocates `n` pages, each in its own group, filled with `pattern(p, 0)`.
pub fn allocate_filled<S: PageStore>(store: &S, n: u32) -> Vec<u32> {
    let mut pages = Vec::new();
    for _ in 0..n {
        let mut g = store.allocate().unwrap();
        let p = g.page_no();
        let len = g.len();
        g.bytes_mut().copy_from_slice(&pattern(p, 0, len));
        store.commit(vec![g]).unwrap();
        pages.push(p);
    }
    pages
}

pub fn read_payload<S: PageStore>(store: &S, page_no: u32) -> Vec<u8> {
    store.latch(page_no, Latch::Shared).unwrap().to_vec()
}
