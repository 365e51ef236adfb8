//! Request streams: where each agent's next transaction comes from.
//!
//! - [`TpccWorkload`] generates TPC-C transactions on demand from the page-
//!   reference model, with the simulation's seeded PRNG, so no trace is
//!   stored and memory does not grow with run length.
//! - [`TpchWorkload`] generates the TPC-H throughput test (query streams and
//!   a refresh stream) from the TPC-H page-reference model.
//! - [`TraceWorkload`] replays a recorded trace: each agent executes its own
//!   records in order (Wang & Bunt §4). Records of agents that are ahead are
//!   buffered per agent; a pre-scan finds the agents, the pages of each space
//!   (for the device layout) and whether the file is intact.
//!
//! Both map pages to device byte offsets: each space (table or index) gets
//! a contiguous region, so an HDD model sees realistic seek distances.

use flushwise_core::limits::CONNECTIONS_MAX;
use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use flushwise_core::PageId;
use flushwise_tpcc_model::tpch::{TpchModel, TpchModelConfig};
use flushwise_tpcc_model::{Table, TpccMix, TpccModel, TpccModelConfig, Xoshiro256StarStar};
use flushwise_trace::{TraceEvent, TraceReader, TraceRecord};

/// A source of transactions for agents.
pub trait Workload {
    /// Appends agent `agent`'s next transaction to `out`; false when the
    /// agent has nothing more to do.
    fn next_transaction(&mut self, agent: u32, out: &mut Vec<TraceRecord>) -> Result<bool, String>;
    /// Pages in the database (for "pool larger than data" checks).
    fn database_pages(&self) -> u64;
    /// Byte offset of `page` on the data device.
    fn page_offset_bytes(&self, page: PageId) -> u64;
    /// Agents the workload needs (a trace fixes it; TPC-C uses the flag).
    fn fixed_agents(&self) -> Option<u32>;
    fn describe(&self) -> String;
    /// The CPU an agent spends on consecutive page hits before the others
    /// get the cores, µs (`None`: a run of hits is one burst, however
    /// long). The CPU model is a FIFO of non-preemptive bursts
    /// (`cpu.rs`); TPC-C's transactions are short, but a TPC-H query's
    /// scan of thousands of resident pages would be one burst of a tenth
    /// of a second or more, and the refresh stream's short transactions
    /// would wait behind it, where an operating system preempts the scan
    /// after a time slice.
    fn cpu_slice_us(&self) -> Option<u64> {
        None
    }
    /// The non-unique secondary indexes' spaces a change buffer may buffer
    /// for, and the leaf slots of each (`crate::change_buffer`); none by
    /// default.
    fn change_buffer_spaces(&self) -> Option<(Vec<u32>, u64)> {
        None
    }
    /// Free bytes of a secondary leaf now (the model's average).
    fn leaf_free_bytes(&self) -> u64 {
        0
    }
    /// True if the run must end when the first agent runs out of
    /// transactions: a recorded trace, whose connections ran side by side
    /// for the recording's length. Replayed faster than recorded, its
    /// connections would run out one by one and leave the measured window
    /// idle (or at a fraction of its concurrency), which no engine run
    /// ever was.
    fn ends_with_first_agent(&self) -> bool {
        false
    }
}

/// TPC-H's time slice: 4 ms, between Linux CFS's minimum granularity and
/// its scheduling period on the paper's 4-core machine (0.75 ms and 6 ms,
/// each times 1 + log2 4: 2.25 ms and 18 ms).
pub const TPCH_CPU_SLICE_US: u64 = 4_000;

/// Contiguous device regions per space.
#[derive(Clone, Debug, Default)]
struct Layout {
    /// space -> (first page on device, pages in region)
    regions: BTreeMap<u32, (u64, u64)>,
    page_size_bytes: u64,
}

impl Layout {
    fn new(page_size_bytes: u32, spaces: impl Iterator<Item = (u32, u64)>) -> Self {
        let mut regions = BTreeMap::new();
        let mut next = 0u64;
        for (space, pages) in spaces {
            // Room for growth: the region is twice the pages seen at start.
            let len = pages.max(1) * 2;
            regions.insert(space, (next, len));
            next += len;
        }
        Self {
            regions,
            page_size_bytes: u64::from(page_size_bytes),
        }
    }

    fn offset(&self, page: PageId) -> u64 {
        match self.regions.get(&page.space) {
            Some(&(start, len)) => (start + u64::from(page.page_no) % len) * self.page_size_bytes,
            None => u64::from(page.page_no) * self.page_size_bytes,
        }
    }
}

pub struct TpccWorkload {
    model: TpccModel,
    rng: Xoshiro256StarStar,
    layout: Layout,
}

impl TpccWorkload {
    pub fn new(warehouses: u32, mix: TpccMix, page_size_bytes: u32, seed: u64) -> Result<Self, String> {
        let model = TpccModel::new(TpccModelConfig {
            warehouses,
            page_size_bytes,
            seed,
            mix,
            ..TpccModelConfig::default()
        })
        .map_err(|e| format!("--warehouses {warehouses}: {e}"))?;
        let layout = Layout::new(
            page_size_bytes,
            Table::ALL
                .iter()
                .map(|t| (t.space(), model.space_page_limit(t.space()).unwrap_or(1))),
        );
        // The workload's stream of choices is separate from the model's
        // construction but derived from the same seed.
        let rng = Xoshiro256StarStar::seed_from_u64(seed ^ 0x5eed_7bcc);
        Ok(Self { model, rng, layout })
    }

    pub fn model(&self) -> &TpccModel {
        &self.model
    }
}

impl Workload for TpccWorkload {
    fn next_transaction(&mut self, agent: u32, out: &mut Vec<TraceRecord>) -> Result<bool, String> {
        self.model.fill_transaction(agent, &mut self.rng, out);
        Ok(true)
    }

    fn database_pages(&self) -> u64 {
        self.model.database_pages()
    }

    fn page_offset_bytes(&self, page: PageId) -> u64 {
        self.layout.offset(page)
    }

    fn fixed_agents(&self) -> Option<u32> {
        None
    }

    fn describe(&self) -> String {
        format!("tpcc({} warehouses)", self.model.config().warehouses)
    }
}

/// Paper 004's insert load from its page-reference model.
pub struct InsertWorkload {
    model: flushwise_tpcc_model::insert::InsertModel,
    rng: Xoshiro256StarStar,
    layout: Layout,
}

impl InsertWorkload {
    pub fn new(
        rows: u64,
        secondary_indexes: u32,
        update_pct: u8,
        page_size_bytes: u32,
        seed: u64,
    ) -> Result<Self, String> {
        let model = flushwise_tpcc_model::insert::InsertModel::new(flushwise_tpcc_model::insert::InsertModelConfig {
            rows,
            secondary_indexes,
            update_pct,
            page_size_bytes,
            ..Default::default()
        })?;
        let mut spaces: Vec<(u32, u64)> = model.spaces().map(|s| (s, model.space_pages(s))).collect();
        // The change buffer's pages after the data (at most half the data's).
        spaces.push((crate::change_buffer::CHANGE_BUFFER_SPACE, model.database_pages() / 2));
        let layout = Layout::new(page_size_bytes, spaces.into_iter());
        let rng = Xoshiro256StarStar::seed_from_u64(seed ^ 0x1b5e_4700);
        Ok(Self { model, rng, layout })
    }
}

impl Workload for InsertWorkload {
    fn next_transaction(&mut self, agent: u32, out: &mut Vec<TraceRecord>) -> Result<bool, String> {
        self.model.fill_transaction(agent, &mut self.rng, out);
        Ok(true)
    }

    fn database_pages(&self) -> u64 {
        self.model.database_pages()
    }

    fn page_offset_bytes(&self, page: PageId) -> u64 {
        self.layout.offset(page)
    }

    fn fixed_agents(&self) -> Option<u32> {
        None
    }

    fn describe(&self) -> String {
        let c = self.model.config();
        format!("insert({} rows, {} secondary indexes)", c.rows, c.secondary_indexes)
    }

    fn change_buffer_spaces(&self) -> Option<(Vec<u32>, u64)> {
        let spaces: Vec<u32> = self
            .model
            .spaces()
            .filter(|&s| self.model.is_secondary_space(s))
            .collect();
        let slots = spaces.iter().map(|&s| self.model.space_pages(s)).max().unwrap_or(1) * 2;
        Some((spaces, slots))
    }

    fn leaf_free_bytes(&self) -> u64 {
        self.model.secondary_leaf_free_bytes()
    }
}

/// The TPC-H throughput test from its page-reference model.
pub struct TpchWorkload {
    model: TpchModel,
    layout: Layout,
}

impl TpchWorkload {
    pub fn new(sf: f64, refresh: bool, page_size_bytes: u32, seed: u64) -> Result<Self, String> {
        let model = TpchModel::new(TpchModelConfig {
            sf,
            page_size_bytes,
            refresh,
            seed,
        })?;
        let layout = Layout::new(page_size_bytes, model.spaces());
        Ok(Self { model, layout })
    }

    pub fn model(&self) -> &TpchModel {
        &self.model
    }
}

impl Workload for TpchWorkload {
    fn next_transaction(&mut self, agent: u32, out: &mut Vec<TraceRecord>) -> Result<bool, String> {
        self.model.fill_transaction(agent, out);
        Ok(true)
    }

    fn database_pages(&self) -> u64 {
        self.model.database_pages()
    }

    fn page_offset_bytes(&self, page: PageId) -> u64 {
        self.layout.offset(page)
    }

    fn fixed_agents(&self) -> Option<u32> {
        None
    }

    fn cpu_slice_us(&self) -> Option<u64> {
        Some(TPCH_CPU_SLICE_US)
    }

    fn describe(&self) -> String {
        let c = self.model.config();
        format!(
            "tpch(SF {}{})",
            c.sf,
            if c.refresh { ", refresh stream" } else { ", no refresh" }
        )
    }
}

/// What the pre-scan of a trace learned.
#[derive(Clone, Debug, Default)]
pub struct TraceSummary {
    pub records: u64,
    pub agents: u32,
    pub transactions: u64,
    pub fixes: u64,
    pub distinct_spaces: usize,
    pub page_size_bytes: u32,
    pub description: String,
}

pub struct TraceWorkload {
    path: PathBuf,
    reader: TraceReader<BufReader<File>>,
    queues: Vec<VecDeque<TraceRecord>>,
    exhausted: bool,
    layout: Layout,
    summary: TraceSummary,
    database_pages: u64,
}

fn open_reader(path: &Path) -> Result<TraceReader<BufReader<File>>, String> {
    let file = File::open(path).map_err(|e| format!("--trace {}: {e}", path.display()))?;
    TraceReader::new(BufReader::with_capacity(1 << 20, file)).map_err(|e| format!("--trace {}: {e}", path.display()))
}

impl TraceWorkload {
    /// Opens and pre-scans `path`; a truncated or corrupt trace is refused
    /// here with the reader's message (which names the byte offset).
    pub fn open(path: &Path) -> Result<Self, String> {
        let mut reader = open_reader(path)?;
        let mut summary = TraceSummary {
            page_size_bytes: reader.header().page_size_bytes,
            description: reader.header().description.clone(),
            ..TraceSummary::default()
        };
        let mut max_page: BTreeMap<u32, u64> = BTreeMap::new();
        let mut max_agent = None::<u32>;
        for record in reader.by_ref() {
            let record = record.map_err(|e| format!("--trace {}: {e}", path.display()))?;
            summary.records += 1;
            // Agents are numbered from 0, one per connection, and the replay
            // keeps a queue per agent number: refuse a number past the
            // connection limit before anything is sized by it.
            if u64::from(record.agent) >= u64::from(CONNECTIONS_MAX) {
                return Err(format!(
                    "--trace {}: record {} has agent id {}; at most {CONNECTIONS_MAX} agents are accepted (ids 0..={}, numbered from 0 by connection): the trace is damaged or was not written by flushwise",
                    path.display(),
                    summary.records,
                    record.agent,
                    CONNECTIONS_MAX - 1
                ));
            }
            max_agent = Some(max_agent.map_or(record.agent, |a: u32| a.max(record.agent)));
            match record.event {
                TraceEvent::Fix { page, .. } => {
                    summary.fixes += 1;
                    let e = max_page.entry(page.space).or_insert(0);
                    *e = (*e).max(u64::from(page.page_no) + 1);
                }
                TraceEvent::TxnBegin { .. } => summary.transactions += 1,
                _ => {}
            }
        }
        summary.agents = max_agent.map_or(0, |a| a + 1);
        summary.distinct_spaces = max_page.len();
        if summary.fixes == 0 {
            return Err(format!("--trace {}: the trace holds no page fixes", path.display()));
        }
        let database_pages = max_page.values().sum();
        let layout = Layout::new(summary.page_size_bytes, max_page.into_iter());
        Ok(Self {
            reader: open_reader(path)?,
            path: path.to_path_buf(),
            queues: vec![VecDeque::new(); summary.agents as usize],
            exhausted: false,
            layout,
            summary,
            database_pages,
        })
    }

    pub fn summary(&self) -> &TraceSummary {
        &self.summary
    }
}

impl Workload for TraceWorkload {
    fn next_transaction(&mut self, agent: u32, out: &mut Vec<TraceRecord>) -> Result<bool, String> {
        // Read ahead until this agent's next transaction end is buffered.
        loop {
            let queue = &self.queues[agent as usize];
            let complete = queue
                .iter()
                .position(|r| matches!(r.event, TraceEvent::TxnCommit { .. } | TraceEvent::TxnRollback { .. }));
            if let Some(end) = complete {
                out.extend(self.queues[agent as usize].drain(..=end));
                return Ok(true);
            }
            if self.exhausted {
                // A trailing partial transaction is replayed as it stands.
                let queue = &mut self.queues[agent as usize];
                if queue.is_empty() {
                    return Ok(false);
                }
                out.extend(queue.drain(..));
                return Ok(true);
            }
            match self.reader.next() {
                None => self.exhausted = true,
                Some(Err(e)) => return Err(format!("--trace {}: {e}", self.path.display())),
                Some(Ok(r)) => {
                    if let Some(q) = self.queues.get_mut(r.agent as usize) {
                        q.push_back(r);
                    }
                }
            }
        }
    }

    fn database_pages(&self) -> u64 {
        self.database_pages
    }

    fn page_offset_bytes(&self, page: PageId) -> u64 {
        self.layout.offset(page)
    }

    fn ends_with_first_agent(&self) -> bool {
        true
    }

    fn fixed_agents(&self) -> Option<u32> {
        Some(self.summary.agents)
    }

    fn describe(&self) -> String {
        format!("trace({}, {} records)", self.path.display(), self.summary.records)
    }
}
