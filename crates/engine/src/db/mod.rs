//! The embeddable database: catalog, transactions, key locking, logical
//! undo and crash recovery over the buffer pool shell and the B+tree.
//!
//! ```text
//! Database ── catalog (B+tree, root = page 0 of the data space)
//!    │        name → (index id, root page, unique)
//!    ├── indexes: one B+tree per index, all in the one data space
//!    ├── LockTable: (index, key) S/X locks, strict 2PL, deadlock detection
//!    ├── TxnTable: unfinished transactions → checkpoint floor
//!    └── BufferPoolShell ── RedoLog, Doublewrite, Tablespace
//! ```
//!
//! # Files
//! In `data_dir` (default: the directory given to `create`/`open`):
//! `flushwise.data` (space 1, every index), `flushwise.dblwr` (doublewrite,
//! if enabled); in `redo_dir` (default: the same directory):
//! `flushwise.redo`. See [`DbPaths`].
//!
//! # Indexes and tables
//! An *index* is a named B+tree of byte keys to byte values. A *table* is
//! simply its primary index (unique); there is no schema. A unique index's
//! [`Txn::insert`] fails with [`DbError::DuplicateKey`] if the key exists. A
//! non-unique index stores `(secondary key, primary key)` composites
//! ([`crate::btree::secondary::composite_key`]) through
//! [`Txn::insert_secondary`] and is read with [`Txn::lookup_secondary`];
//! keeping it in step with its table is the caller's job (within the same
//! transaction, so it is atomic). Index creation is not transactional: it
//! is durable when `create_index` returns, and cannot be dropped.
//!
//! # Transactions and isolation
//! Strict two-phase locking on keys ([`lock`]): a read takes a shared lock
//! on `(index, key)` *before* reading (also when the key is absent, so a
//! point lookup of a missing key blocks its concurrent insertion), a write
//! an exclusive one; all are held to commit or rollback. Deadlocks are
//! detected on the wait-for graph (the requester that closes a cycle gets
//! [`DbError::Deadlock`]), with a lock-wait timeout
//! ([`DbError::LockTimeout`]) as the backstop. After either error the
//! caller rolls back and retries; [`Database::run`] does both.
//!
//! Range and prefix scans lock every key they *return* (shared, or
//! exclusive for the `_for_update` variants), re-reading each value after
//! its lock is granted. They do **not** lock gaps: a concurrent transaction
//! may insert a new key into a scanned range (a phantom) and a repeated scan
//! in the same transaction may see it. Serialisable use of ranges needs a
//! guard lock, as TPC-C provides: New-Order and Delivery both lock the
//! DISTRICT row exclusively before touching NEW_ORDER (New-Order to bump
//! `D_NEXT_O_ID` and insert the order, Delivery to take the oldest
//! undelivered order of the district), so the two never interleave on one
//! district's NEW_ORDER range; Stock-Level and Order-Status only read
//! committed rows under shared locks, which TPC-C allows to see phantoms.
//!
//! # Atomicity with steal, and recovery
//! Pages with uncommitted changes may be written at any time (the cleaner
//! and eviction do not know about transactions). So each row change first
//! appends an undo record ([`undo`]) and only then changes the tree, and
//! rollback (explicit, on drop, or at recovery for *loser* transactions)
//! restores the before-images in reverse through the tree as ordinary
//! logged changes, then logs `TxnRollback`. Commit logs `TxnCommit`,
//! releases the locks, then waits as `flush_log_at_trx_commit` says (early
//! lock release: a transaction that read the released rows commits after
//! the `TxnCommit` in log order, so it can never be durable without it; a
//! read-only reader may see a commit that a crash then loses, as with
//! InnoDB's modes 0 and 2).
//!
//! The redo scan must contain the undo records of every transaction that
//! may be a loser. The shell is given a checkpoint floor (`TxnTable`):
//! no checkpoint passes the log head as of a transaction's first write
//! until its commit or rollback record is durable, nor the recovery scan's
//! start until recovery finished. (Cost: a long transaction holds the
//! checkpoint back; the redo log then fills and writers get the log-full
//! error after the shell's retries. Keep transactions shorter than the log.)
//!
//! Recovery at open ([`recovery`]): doublewrite repair, a verification read
//! of every page (a corrupt page that could not be repaired is
//! [`DbError::CorruptPage`] naming file and page), redo apply in LSN order,
//! loser rollback through the trees, checkpoint; see [`RecoveryReport`].
//!
//! # Bulk loads
//! [`Database::load_sorted`] fills an empty index from rows in key order
//! without locks, undo or per-row redo: it writes the tree's pages straight
//! to the data file, fsyncs it, and installs the root in one logged
//! mini-transaction; a journal page makes a load that never committed
//! reclaimable at the next open ([`bulk`]).
//!
//! # Invariants
//! 1. A transaction's undo record for a change is in the log before the
//!    change's page records (it is appended in an earlier group).
//! 2. A key changed by an unfinished transaction is locked exclusively by
//!    it (so its undo restores exactly what others last committed).
//! 3. The checkpoint LSN never exceeds the floor of any transaction whose
//!    end record is not yet durable.
//! 4. Dropping a `Database` without [`Database::close`] is a crash: what
//!    the redo log made durable is recovered at the next open.

pub mod bulk;
pub mod change_buffer;
pub mod dir_lock;
pub mod leaf_space;
pub mod lock;
pub mod recovery;
pub mod recovery_profile;
pub mod store;
pub mod txn;
pub mod undo;

use flushwise_core::limits::DATABASE_POOL_FRAMES_MIN;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use flushwise_core::device::DeviceSpec;
use flushwise_core::Lsn;
use parking_lot::{Mutex, RwLock};

use crate::btree::{BTree, BTreeError, Direction};
use crate::buffer::{BufferError, BufferPoolShell, ShellConfig};
use crate::page::{PageError, PageSize};
use crate::page_store::StoreError;
use crate::redo::{FlushMode, RedoError, RedoLog};
use crate::storage::{EngineStorageError, IoMode, StorageError, StorageOpener};

pub use bulk::{LoadOptions, LoadReport};
pub use change_buffer::{ChangeBufferMode, ChangeBufferOptions, ChangeBufferStats};
pub use dir_lock::DirLock;
pub use lock::{thread_lock_wait_ns, LockMode, LockTable, TxnId};
pub use recovery::{RecoveryPhases, RecoveryReport};
pub use store::SharedStore;
pub use txn::{thread_commit_wait_ns, Txn};
pub use undo::UndoEntry;

/// Space id of the data tablespace.
pub const DATA_SPACE_ID: u32 = 1;
/// Space id of the change buffer's own file (`separate-device`).
pub const CHANGE_BUFFER_SPACE_ID: u32 = 2;
/// Root page of the catalog tree: the first page allocated in a new space.
pub const CATALOG_ROOT_PAGE: u32 = 0;
/// Retries of [`Database::run`] by default.
pub const RUN_RETRIES_DEFAULT: u32 = 100;

const CATALOG_INDEX_PREFIX: &[u8] = b"index\0";
const CATALOG_INDEX_ID: u32 = 0;

/// Options of a database. `data_dir`/`redo_dir` default to the directory
/// given to [`Database::create`] / [`Database::open`].
#[derive(Clone, Debug)]
pub struct DbOptions {
    pub data_dir: Option<PathBuf>,
    pub redo_dir: Option<PathBuf>,
    /// Fixed at creation; `open` checks it.
    pub page_size: PageSize,
    pub buffer_pool_bytes: u64,
    /// Redo capacity at creation (a multiple of 512). At open the file's
    /// own capacity is used, unless `resize_redo_at_open` is set.
    pub redo_bytes: u64,
    /// At open, give the redo log the capacity `redo_bytes` if it has
    /// another. Only a cleanly closed database can be resized (its log holds
    /// nothing to redo); otherwise the open fails and says so. The new log
    /// is written beside the old one and renamed over it, so a crash during
    /// the resize leaves one of the two whole.
    pub resize_redo_at_open: bool,
    /// Data and doublewrite files (the redo log is always buffered, it
    /// writes 512-byte blocks). Buffered by default: it works on every
    /// filesystem; use `Direct` for measurements.
    pub io: IoMode,
    /// `None`: the data and doublewrite files complete at the speed of
    /// this machine's disk. `Some(spec)`: their I/O is really done, and its
    /// completion is delayed to follow the device model (one emulated
    /// device shared by both files: the doublewrite file at offset 0, the
    /// data file after it, as InnoDB keeps its doublewrite buffer in the
    /// system tablespace). The redo log stays native: Lee et al. §5.1 put
    /// the log on a separate disk.
    pub data_device: Option<DeviceSpec>,
    pub doublewrite: bool,
    /// Largest size the data file may grow to (`None`: until the disk is
    /// full), as InnoDB's `innodb_data_file_path=...:autoextend:max:SIZE`.
    /// Either way a write that needs a new page when there is none fails
    /// with an error for which [`DbError::is_out_of_space`] is true; the
    /// transaction can be rolled back and everything committed stays.
    pub data_file_max_bytes: Option<u64>,
    pub flush_log_at_trx_commit: FlushMode,
    /// Page-cleaning policy and its parameters.
    pub policy: flushwise_core::policy::PolicySpec,
    pub lock_wait_timeout: Duration,
    pub checkpoint_interval: Duration,
    /// Read and verify every data page at open (fills
    /// `RecoveryReport::pages_read`; a corrupt page fails the open).
    pub verify_pages_at_open: bool,
    /// Keep one page-cleaner iteration record per iteration (drained with
    /// `BufferPoolShell::drain_iteration_records`; `--decisions FILE.jsonl`).
    pub iteration_records: bool,
    /// Keep the policy's decision log (drained with
    /// `BufferPoolShell::drain_decisions`; a live dashboard shows it).
    pub decision_log: bool,
    /// Where the files live: `None` for real files under the directories
    /// above; `Some(opener)` for files it holds (e.g. a
    /// [`crate::storage::PowerLossDisk`], for crash torture). With an
    /// opener the paths only name the files, no directory is created, and
    /// `data_device` and `resize_redo_at_open` are refused.
    pub storage: Option<Arc<dyn StorageOpener>>,
    /// A lock on the database's directories this process already holds
    /// ([`DirLock::acquire`]: a caller that also touches files of its own
    /// there, before the open or after the close). `None`: the open takes
    /// its own. Either way the database holds the lock while it is open.
    pub dir_lock: Option<Arc<DirLock>>,
    /// The change buffer (issue #16, paper `004`): off by default.
    pub change_buffer: ChangeBufferOptions,
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            data_dir: None,
            redo_dir: None,
            page_size: PageSize::DEFAULT,
            buffer_pool_bytes: 64 << 20,
            redo_bytes: 64 << 20,
            resize_redo_at_open: false,
            io: IoMode::Buffered,
            data_device: None,
            doublewrite: true,
            data_file_max_bytes: None,
            flush_log_at_trx_commit: FlushMode::SyncAtCommit,
            policy: flushwise_core::policy::PolicySpec::default(),
            lock_wait_timeout: Duration::from_secs(5),
            checkpoint_interval: Duration::from_secs(1),
            verify_pages_at_open: true,
            iteration_records: false,
            decision_log: false,
            storage: None,
            dir_lock: None,
            change_buffer: ChangeBufferOptions::default(),
        }
    }
}

/// Where the files of a database are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbPaths {
    pub data: PathBuf,
    pub doublewrite: PathBuf,
    pub redo: PathBuf,
    /// The change buffer's own file (`separate-device`; space
    /// [`CHANGE_BUFFER_SPACE_ID`]); used only if it exists or that mode
    /// asks for it.
    pub change_buffer: PathBuf,
}

impl DbPaths {
    pub fn new(dir: &Path, options: &DbOptions) -> Self {
        let data_dir = options.data_dir.as_deref().unwrap_or(dir);
        let redo_dir = options.redo_dir.as_deref().unwrap_or(dir);
        Self {
            data: data_dir.join("flushwise.data"),
            doublewrite: data_dir.join("flushwise.dblwr"),
            redo: redo_dir.join("flushwise.redo"),
            change_buffer: change_buffer_path(data_dir, options.change_buffer.dir.as_deref()),
        }
    }
}

/// The change buffer's own file: `flushwise.ibuf` beside the data file,
/// or in `dir` named after the data directory (`flushwise-<hash>.ibuf`),
/// so databases sharing one RAM disk never share a file.
fn change_buffer_path(data_dir: &Path, dir: Option<&Path>) -> PathBuf {
    match dir {
        Some(d) if d != data_dir => {
            let data = std::path::absolute(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
            let hash = crc32c::crc32c(data.as_os_str().as_encoded_bytes());
            d.join(format!("flushwise-{hash:08x}.ibuf"))
        }
        _ => data_dir.join("flushwise.ibuf"),
    }
}

/// Errors of the database layer. Messages are lowercase and name the file,
/// page or index concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DbError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    PageFile(#[from] EngineStorageError),
    #[error(transparent)]
    Redo(#[from] RedoError),
    #[error(transparent)]
    Buffer(#[from] BufferError),
    #[error("{path}: page {page_no} is corrupt and could not be repaired: {reason}")]
    CorruptPage {
        path: PathBuf,
        page_no: u32,
        reason: String,
    },
    #[error("index {index}: {source}")]
    Index {
        index: String,
        #[source]
        source: BTreeError,
    },
    #[error("index {index}: duplicate key {key:?}")]
    DuplicateKey { index: String, key: String },
    #[error("index {index}: no entry {key:?} with the value given")]
    NoSuchEntry { index: String, key: String },
    #[error("no index named {name:?}")]
    NoSuchIndex { name: String },
    #[error("no index with id {id}")]
    NoSuchIndexId { id: u32 },
    #[error("index {name:?} already exists")]
    IndexExists { name: String },
    #[error("index {index} is {kind}: {what}")]
    WrongIndexKind {
        index: String,
        kind: &'static str,
        what: &'static str,
    },
    #[error(
        "transaction {txn}: deadlock on index {index} (waiting for transactions {blockers:?}); roll back and retry"
    )]
    Deadlock {
        txn: TxnId,
        index: String,
        blockers: Vec<TxnId>,
    },
    #[error("transaction {txn}: lock wait timeout on index {index} after {waited_ms} ms (held by {blockers:?}); roll back and retry")]
    LockTimeout {
        txn: TxnId,
        index: String,
        waited_ms: u64,
        blockers: Vec<TxnId>,
    },
    #[error("transaction {txn}: the lock it needs on index {index} is held by transaction {holder}, whose rollback failed ({reason}); reopen the database to recover")]
    LockHolderAbandoned {
        txn: TxnId,
        index: String,
        holder: TxnId,
        reason: String,
    },
    #[error("transaction {txn} is finished")]
    TxnFinished { txn: TxnId },
    #[error("catalog of {path}: {reason}")]
    Catalog { path: PathBuf, reason: String },
    #[error("{path}: {reason}")]
    Files { path: PathBuf, reason: String },
    #[error("{dir}: the database is in use by {holder} (it holds {dir}/{lock_file}); stop that process or wait for it to finish, then try again", dir = .dir.display(), lock_file = dir_lock::LOCK_FILE)]
    Locked { dir: PathBuf, holder: String },
    #[error("invalid database options: {reason}")]
    Options { reason: String },
    #[error("recovery of {path}: loser transaction {txn}: {reason}")]
    Recovery { path: PathBuf, txn: TxnId, reason: String },
    #[error("index {index}: bulk load row {position}: key {key:?} is below the previous key {previous:?}; rows must come in strictly ascending key order")]
    LoadOutOfOrder {
        index: String,
        /// 0-based number of the offending row.
        position: u64,
        key: String,
        previous: String,
    },
    #[error("index {index}: bulk load row {position}: duplicate key {key:?} (equal to the previous row's)")]
    LoadDuplicateKey { index: String, position: u64, key: String },
    #[error("index {index}: bulk load row {position}: {source}")]
    LoadRow {
        index: String,
        position: u64,
        #[source]
        source: BTreeError,
    },
    #[error("index {index} is not empty: a bulk load needs an empty index")]
    IndexNotEmpty { index: String },
    #[error("index {index}: another bulk load into it is in progress")]
    LoadInProgress { index: String },
    #[error("{path}: bulk load journal in page {page_no}: {reason}")]
    LoadJournal {
        path: PathBuf,
        page_no: u32,
        reason: String,
    },
}

impl DbError {
    /// True for the errors after which the transaction should be rolled back
    /// and retried (deadlock victim, lock wait timeout).
    pub fn is_retryable(&self) -> bool {
        matches!(self, DbError::Deadlock { .. } | DbError::LockTimeout { .. })
    }

    /// True if the data file could not grow (its `data_file_max_bytes`, or
    /// a full disk): roll back, free space or raise the maximum; what is
    /// committed is safe and the database stays open.
    pub fn is_out_of_space(&self) -> bool {
        match self {
            DbError::Index {
                source: BTreeError::Store(StoreError::Full { .. }),
                ..
            } => true,
            DbError::Storage(e) => e.is_disk_full(),
            DbError::PageFile(e) => e.is_out_of_space(),
            DbError::Buffer(e) => e.is_out_of_space(),
            _ => false,
        }
    }

    fn index(index: &str, source: BTreeError) -> Self {
        // A corrupt page read through the tree names its file and page.
        DbError::Index {
            index: index.to_string(),
            source,
        }
    }
}

pub type Result<T> = std::result::Result<T, DbError>;

/// An index handle (stable for the life of the database).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IndexId(pub u32);

impl fmt::Display for IndexId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// An open index.
pub(crate) struct Index {
    pub id: IndexId,
    pub name: String,
    pub unique: bool,
    pub tree: BTree<SharedStore>,
}

/// Unfinished transactions and the checkpoint floor they impose
/// (invariant 3 of the module doc).
#[derive(Default)]
pub(crate) struct TxnTable {
    state: Mutex<TxnTableState>,
}

#[derive(Default)]
struct TxnTableState {
    /// Writing transactions → log head before their first record.
    active: BTreeMap<TxnId, Lsn>,
    /// Ended transactions whose end record may not be durable yet:
    /// (end LSN of the record, floor).
    ending: Vec<(Lsn, Lsn)>,
    /// Recovery in progress: the scan's start.
    recovery: Option<Lsn>,
}

impl TxnTable {
    pub(crate) fn register(&self, txn: TxnId, redo: &RedoLog) {
        let mut st = self.state.lock();
        let head = redo.current_lsn();
        st.active.entry(txn).or_insert(head);
    }

    pub(crate) fn finish(&self, txn: TxnId, end_lsn: Lsn) {
        let mut st = self.state.lock();
        if let Some(floor) = st.active.remove(&txn) {
            st.ending.push((end_lsn, floor));
        }
    }

    pub(crate) fn set_recovery(&self, floor: Option<Lsn>) {
        self.state.lock().recovery = floor;
    }

    fn floor(&self, redo: &RedoLog) -> Option<Lsn> {
        let mut st = self.state.lock();
        if !st.ending.is_empty() {
            let durable = redo.durable_lsn();
            st.ending.retain(|(end, _)| *end > durable);
        }
        let active = st.active.values().copied().min();
        let ending = st.ending.iter().map(|(_, f)| *f).min();
        [active, ending, st.recovery].into_iter().flatten().min()
    }

    pub(crate) fn active_count(&self) -> usize {
        self.state.lock().active.len()
    }
}

/// An open database. Share it between threads by reference (or `Arc`);
/// transactions borrow it.
pub struct Database {
    /// The change buffer's background merger: first, so it stops before
    /// anything it uses goes away.
    pub(crate) merger: Mutex<Option<change_buffer::Merger>>,
    pub(crate) options: DbOptions,
    pub(crate) paths: DbPaths,
    pub(crate) redo: Arc<RedoLog>,
    pub(crate) shell: Arc<BufferPoolShell>,
    pub(crate) store: SharedStore,
    pub(crate) catalog: BTree<SharedStore>,
    /// The change buffer, if the database has one ([`change_buffer`]).
    pub(crate) change_buffer: Option<Arc<change_buffer::ChangeBuffer>>,
    /// What the secondary indexes' stores share: leaf free space, and the
    /// change buffer they merge through (set at open).
    pub(crate) secondary_hook: Arc<store::SecondaryHook>,
    pub(crate) indexes: RwLock<HashMap<u32, Arc<Index>>>,
    pub(crate) names: RwLock<HashMap<String, IndexId>>,
    pub(crate) locks: LockTable,
    pub(crate) txns: Arc<TxnTable>,
    pub(crate) next_txn: AtomicU64,
    pub(crate) ddl: Mutex<()>,
    /// Indexes a bulk load is filling now.
    pub(crate) loading: Mutex<HashSet<u32>>,
    pub(crate) report: RecoveryReport,
    /// Held until the database is closed or dropped; last, so it is
    /// released after everything else is gone ([`dir_lock`]).
    pub(crate) dir_lock: Option<Arc<DirLock>>,
}

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Database").field("paths", &self.paths).finish()
    }
}

fn encode_catalog_value(id: u32, root: u32, unique: bool) -> Vec<u8> {
    let mut v = Vec::with_capacity(9);
    v.extend_from_slice(&id.to_le_bytes());
    v.extend_from_slice(&root.to_le_bytes());
    v.push(u8::from(unique));
    v
}

fn decode_catalog_value(v: &[u8]) -> Option<(u32, u32, bool)> {
    if v.len() != 9 {
        return None;
    }
    let id = u32::from_le_bytes(v[0..4].try_into().ok()?);
    let root = u32::from_le_bytes(v[4..8].try_into().ok()?);
    let unique = match v[8] {
        0 => false,
        1 => true,
        _ => return None,
    };
    Some((id, root, unique))
}

impl Database {
    /// Creates a new database in `dir` (refuses existing database files).
    pub fn create(dir: impl AsRef<Path>, options: DbOptions) -> Result<Self> {
        recovery::open_database(dir.as_ref(), options, true)
    }

    /// Opens an existing database in `dir`, recovering it after a crash.
    pub fn open(dir: impl AsRef<Path>, options: DbOptions) -> Result<Self> {
        recovery::open_database(dir.as_ref(), options, false)
    }

    /// Clean close: every dirty page is written, a checkpoint at the log
    /// head is taken and the log is closed. (Transactions borrow the
    /// database, so none can be open.)
    pub fn close(self) -> Result<()> {
        if let Some(mut merger) = self.merger.lock().take() {
            merger.stop();
        }
        self.shell.shutdown()?;
        // Derived data, kept only to spare the next open relearning it: a
        // failure to write it costs nothing but that.
        if self.options.storage.is_none() {
            let path = leaf_space::LeafSpace::path_in(self.paths.data.parent().unwrap_or(Path::new(".")));
            if self
                .secondary_hook
                .leaves
                .save(&path, self.redo.checkpoint_lsn())
                .is_err()
            {
                let _ = std::fs::remove_file(&path);
            }
        }
        let Database {
            redo,
            shell,
            store,
            catalog,
            indexes,
            dir_lock,
            ..
        } = self;
        drop(indexes);
        drop(catalog);
        drop(store);
        drop(shell);
        match Arc::try_unwrap(redo) {
            Ok(log) => log.close()?,
            // Still shared (a leaked handle): make everything durable anyway.
            Err(log) => log.wait_durable(log.current_lsn())?,
        }
        // Only now may another process open the files.
        drop(dir_lock);
        Ok(())
    }

    /// The change buffer's counters since open (all zero when the database
    /// has none).
    pub fn change_buffer_stats(&self) -> ChangeBufferStats {
        self.change_buffer.as_ref().map(|cb| cb.stats()).unwrap_or_default()
    }

    /// What recovery did at open.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.report
    }

    pub fn paths(&self) -> &DbPaths {
        &self.paths
    }

    pub fn options(&self) -> &DbOptions {
        &self.options
    }

    /// The buffer pool shell (metrics, policy parameters).
    pub fn shell(&self) -> &Arc<BufferPoolShell> {
        &self.shell
    }

    /// Installs (or removes, with `None`) a page-reference trace recorder:
    /// from now on every page fix and unfix of user threads (B+tree and
    /// catalog accesses) is recorded. Transaction boundaries are the
    /// workload's to record; see [`crate::trace_recorder`].
    pub fn set_trace_recorder(&self, recorder: Option<Arc<crate::trace_recorder::TraceRecorder>>) {
        self.shell.set_trace_recorder(recorder);
    }

    pub fn redo(&self) -> &Arc<RedoLog> {
        &self.redo
    }

    /// Writes every dirty page (uncommitted changes included).
    pub fn flush_all(&self) -> Result<()> {
        Ok(self.shell.flush_all()?)
    }

    /// A fuzzy checkpoint now (bounded by unfinished transactions).
    pub fn checkpoint(&self) -> Result<Lsn> {
        Ok(self.shell.checkpoint()?)
    }

    /// Creates an index (a table is its unique primary index). Durable on
    /// return; not part of any transaction.
    pub fn create_index(&self, name: &str, unique: bool) -> Result<IndexId> {
        let _ddl = self.ddl.lock();
        if self.names.read().contains_key(name) {
            return Err(DbError::IndexExists { name: name.to_string() });
        }
        let id = self.indexes.read().keys().copied().max().unwrap_or(CATALOG_INDEX_ID) + 1;
        let tree = BTree::create(self.index_store(unique)).map_err(|e| DbError::index(name, e))?;
        let mut key = CATALOG_INDEX_PREFIX.to_vec();
        key.extend_from_slice(name.as_bytes());
        self.catalog
            .insert(&key, &encode_catalog_value(id, tree.root_page_no(), unique))
            .map_err(|e| DbError::index("catalog", e))?;
        self.redo.wait_durable(self.redo.current_lsn())?;
        let index = Arc::new(Index {
            id: IndexId(id),
            name: name.to_string(),
            unique,
            tree,
        });
        self.indexes.write().insert(id, index);
        self.names.write().insert(name.to_string(), IndexId(id));
        Ok(IndexId(id))
    }

    /// Loads `rows`, in strictly ascending key order, into the empty index
    /// `index`, building its B+tree bottom-up and writing its pages straight
    /// to the data file, without per-row locks, undo or redo ([`bulk`]).
    ///
    /// - An out-of-order or duplicate key is [`DbError::LoadOutOfOrder`] /
    ///   [`DbError::LoadDuplicateKey`] naming the index and the 0-based row;
    ///   an entry too large is [`DbError::LoadRow`]; a non-empty index is
    ///   [`DbError::IndexNotEmpty`]. On any error the index stays empty.
    /// - Durable when it returns; atomic: if the process dies before, the
    ///   index is empty after recovery (the pages written are reclaimed).
    /// - Several threads may load different indexes at once, and
    ///   transactions may run on other indexes meanwhile. Transactions on
    ///   the index being loaded see it empty until the load commits (then
    ///   whole); one that inserts into it meanwhile makes the load fail
    ///   with [`DbError::IndexNotEmpty`].
    ///
    /// Keys of a non-unique index are the caller's composites
    /// ([`crate::btree::secondary::composite_key`]), sorted as bytes.
    pub fn load_sorted(&self, index: IndexId, rows: impl Iterator<Item = (Vec<u8>, Vec<u8>)>) -> Result<LoadReport> {
        self.load_sorted_with(index, rows, LoadOptions::default())
    }

    /// [`Self::load_sorted`] with a fill factor other than InnoDB's default.
    pub fn load_sorted_with(
        &self,
        index: IndexId,
        rows: impl Iterator<Item = (Vec<u8>, Vec<u8>)>,
        options: LoadOptions,
    ) -> Result<LoadReport> {
        self.load_sorted_until(index, rows, options, bulk::StopAt::Never)
    }

    pub(crate) fn load_sorted_until(
        &self,
        index: IndexId,
        rows: impl Iterator<Item = (Vec<u8>, Vec<u8>)>,
        options: LoadOptions,
        stop: bulk::StopAt,
    ) -> Result<LoadReport> {
        let index = self.index_by_id(index)?;
        if !self.loading.lock().insert(index.id.0) {
            return Err(DbError::LoadInProgress {
                index: index.name.clone(),
            });
        }
        let result = bulk::load(self, &index, rows, options, stop);
        self.loading.lock().remove(&index.id.0);
        result
    }

    /// The index named `name`.
    pub fn index(&self, name: &str) -> Result<IndexId> {
        self.names
            .read()
            .get(name)
            .copied()
            .ok_or_else(|| DbError::NoSuchIndex { name: name.to_string() })
    }

    /// Every index: (name, id, unique), by id.
    pub fn indexes(&self) -> Vec<(String, IndexId, bool)> {
        let mut v: Vec<_> = self
            .indexes
            .read()
            .values()
            .map(|i| (i.name.clone(), i.id, i.unique))
            .collect();
        v.sort_by_key(|(_, id, _)| *id);
        v
    }

    pub(crate) fn index_by_id(&self, id: IndexId) -> Result<Arc<Index>> {
        self.indexes
            .read()
            .get(&id.0)
            .cloned()
            .ok_or(DbError::NoSuchIndexId { id: id.0 })
    }

    /// The value of `key` in `index` as the tree holds it now, without a
    /// lock: *read uncommitted* (a change of an unfinished transaction is
    /// visible, and may be rolled back later). For read-only analytical
    /// work that must not fill the lock table (TPC-H queries); transactions
    /// use [`Txn::get`].
    pub fn read_unlocked(&self, index: IndexId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let index = self.index_by_id(index)?;
        index.tree.get(key).map_err(|e| DbError::index(&index.name, e))
    }

    /// Calls `visit` with every entry of `index` within `(start, end)` in
    /// `direction`, without locks (*read uncommitted*, as
    /// [`Self::read_unlocked`]), streaming one leaf at a time; stops early
    /// when `visit` returns `false`. A concurrent split never makes the scan
    /// skip or repeat a key (the cursor resumes after the last key seen).
    pub fn scan_unlocked(
        &self,
        index: IndexId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        direction: Direction,
        mut visit: impl FnMut(Vec<u8>, Vec<u8>) -> bool,
    ) -> Result<()> {
        let index = self.index_by_id(index)?;
        for entry in index.tree.range(start, end, direction) {
            let (key, value) = entry.map_err(|e| DbError::index(&index.name, e))?;
            if !visit(key, value) {
                break;
            }
        }
        Ok(())
    }

    /// Starts a transaction.
    pub fn begin(&self) -> Txn<'_> {
        let id = self.next_txn.fetch_add(1, Ordering::Relaxed);
        Txn::new(self, id)
    }

    /// Runs `body` in a transaction and commits it, rolling back and
    /// retrying (up to [`RUN_RETRIES_DEFAULT`] times) on deadlock or lock
    /// timeout; any other error rolls back and is returned.
    pub fn run<T>(&self, mut body: impl FnMut(&mut Txn<'_>) -> Result<T>) -> Result<T> {
        let mut attempt = 0;
        loop {
            let mut txn = self.begin();
            match body(&mut txn) {
                Ok(v) => {
                    txn.commit()?;
                    return Ok(v);
                }
                Err(e) => {
                    txn.rollback()?;
                    attempt += 1;
                    if !e.is_retryable() || attempt > RUN_RETRIES_DEFAULT {
                        return Err(e);
                    }
                    // Back off a little, more for repeat victims.
                    std::thread::sleep(Duration::from_micros(100 * u64::from(attempt.min(50))));
                }
            }
        }
    }

    /// Unfinished writing transactions now.
    pub fn active_transactions(&self) -> usize {
        self.txns.active_count()
    }

    /// Locks held now (all transactions).
    pub fn locks_held(&self) -> usize {
        self.locks.locks_held()
    }

    /// The shape of `index`'s tree: height, entries, leaf and internal
    /// pages, bytes used (walks every page under shared latches).
    pub fn index_stats(&self, index: IndexId) -> Result<crate::btree::TreeStats> {
        let index = self.index_by_id(index)?;
        index.tree.check().map_err(|e| DbError::index(&index.name, e))
    }

    /// The store an index's tree uses: non-unique indexes merge the change
    /// buffer's entries when they latch a leaf.
    fn index_store(&self, unique: bool) -> SharedStore {
        if unique {
            self.store.clone()
        } else {
            self.store
                .with_role(store::Role::Secondary(Arc::clone(&self.secondary_hook)))
        }
    }

    /// The change buffer, if it takes new entries.
    pub(crate) fn active_change_buffer(&self) -> Option<&Arc<change_buffer::ChangeBuffer>> {
        self.change_buffer
            .as_ref()
            .filter(|cb| cb.mode() != ChangeBufferMode::Off)
    }

    /// Checks the shape of every index tree (tests, diagnostics).
    pub fn check(&self) -> Result<()> {
        self.catalog.check().map_err(|e| DbError::index("catalog", e))?;
        if let Some(cb) = &self.change_buffer {
            cb.check().map_err(|e| DbError::index("change buffer", e))?;
        }
        for index in self.indexes.read().values() {
            index.tree.check().map_err(|e| DbError::index(&index.name, e))?;
        }
        Ok(())
    }

    fn load_catalog(&self) -> Result<()> {
        let range = self.catalog.range(
            Bound::Included(CATALOG_INDEX_PREFIX),
            Bound::Unbounded,
            Direction::Forward,
        );
        for entry in range {
            let (key, value) = entry.map_err(|e| DbError::index("catalog", e))?;
            let Some(name) = key.strip_prefix(CATALOG_INDEX_PREFIX) else {
                break;
            };
            let bad = |reason: String| DbError::Catalog {
                path: self.paths.data.clone(),
                reason,
            };
            let name =
                String::from_utf8(name.to_vec()).map_err(|_| bad(format!("index name {name:?} is not utf-8")))?;
            let (id, root, unique) =
                decode_catalog_value(&value).ok_or_else(|| bad(format!("entry of index {name} is malformed")))?;
            let tree = BTree::open(self.index_store(unique), root).map_err(|e| DbError::index(&name, e))?;
            self.names.write().insert(name.clone(), IndexId(id));
            self.indexes.write().insert(
                id,
                Arc::new(Index {
                    id: IndexId(id),
                    name,
                    unique,
                    tree,
                }),
            );
        }
        Ok(())
    }

    /// The smallest redo capacity these options accept: the buffer pool's
    /// redo margins (InnoDB 5.6's `log_calc_max_ages`,
    /// [`flushwise_core::RedoMargins`]) keep 4 pages per thread of
    /// concurrency plus 8 free, which must stay under half of the log's
    /// capacity after a 10 % safety cut; rounded up to whole 512-byte
    /// blocks.
    pub fn redo_bytes_min(options: &DbOptions) -> u64 {
        let threads = ShellConfig::default().thread_concurrency;
        let page_bytes = options.page_size.bytes() as u32;
        let fits = |capacity_bytes: u64| {
            let config = flushwise_core::RedoConfig {
                capacity_bytes,
                thread_concurrency: threads,
            };
            flushwise_core::RedoMargins::compute(&config, page_bytes).is_ok()
        };
        let block = crate::redo::BLOCK_SIZE as u64;
        // free < (c - c/10) / 2 holds from about c > 20/9 free on: start
        // there and step up a block at a time (a few steps at most).
        let free = 4 * u64::from(page_bytes) * (10 + u64::from(threads)) + 8 * u64::from(page_bytes);
        let mut capacity = (free * 20 / 9).div_ceil(block) * block;
        while !fits(capacity) {
            capacity += block;
        }
        capacity.max(crate::redo::log_file::CAPACITY_BYTES_MIN)
    }

    /// Checks `options.redo_bytes` as the capacity of a redo log about to
    /// be created or resized, before any file changes.
    pub(crate) fn check_redo_bytes(options: &DbOptions) -> Result<()> {
        use crate::redo::log_file::{capacity_is_valid, CAPACITY_BYTES_MAX};
        let bytes = options.redo_bytes;
        let min = Self::redo_bytes_min(options);
        if bytes < min {
            return Err(DbError::Options {
                reason: format!(
                    "redo_bytes {bytes}: the redo log must be at least {min} bytes with {}-byte pages (the buffer pool keeps 4 pages per thread and 8 more free in it, under half its capacity); give a larger redo log (nothing was changed)",
                    options.page_size.bytes()
                ),
            });
        }
        if !capacity_is_valid(bytes) {
            return Err(DbError::Options {
                reason: format!(
                    "redo_bytes {bytes}: must be a multiple of {} bytes, at most {CAPACITY_BYTES_MAX} (nothing was changed)",
                    crate::redo::BLOCK_SIZE
                ),
            });
        }
        Ok(())
    }

    pub(crate) fn shell_config(options: &DbOptions) -> Result<ShellConfig> {
        let frames = options.buffer_pool_bytes / options.page_size.bytes_u64();
        let frames = u32::try_from(frames)
            .ok()
            .filter(|f| *f >= DATABASE_POOL_FRAMES_MIN)
            .ok_or_else(|| DbError::Options {
                reason: format!(
                    "buffer_pool_bytes {} gives {frames} pages of {}; need {DATABASE_POOL_FRAMES_MIN}..=u32::MAX",
                    options.buffer_pool_bytes,
                    options.page_size.bytes()
                ),
            })?;
        // The frames are allocated at open: a pool the machine cannot hold
        // would abort the process (or bring in the OOM killer) instead of
        // failing here with both numbers.
        if let Some(available) = crate::memory::available_bytes() {
            if options.buffer_pool_bytes > available {
                return Err(DbError::Options {
                    reason: format!(
                        "buffer_pool_bytes {} is more than the {available} bytes of memory available now (MemAvailable in /proc/meminfo); give a smaller pool or free memory first",
                        options.buffer_pool_bytes
                    ),
                });
            }
        }
        Ok(ShellConfig {
            frames,
            policy: options.policy.clone(),
            checkpoint_interval: options.checkpoint_interval,
            iteration_records: options.iteration_records,
            decision_log: options.decision_log,
            ..ShellConfig::default()
        })
    }
}

/// Maps a page error surfaced through the tree or the shell to
/// [`DbError::CorruptPage`] when it is one.
pub(crate) fn corrupt_page(e: &EngineStorageError) -> Option<DbError> {
    match e {
        EngineStorageError::Page(PageError::Corrupt { file, page_no, reason }) => Some(DbError::CorruptPage {
            path: file.clone(),
            page_no: *page_no,
            reason: reason.to_string(),
        }),
        _ => None,
    }
}
