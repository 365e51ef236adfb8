//! A TPC-H page-reference model: the fix/unfix stream of the TPC-H
//! throughput test (query streams and a refresh stream) without a
//! database, so the simulator runs Lee et al.'s Experiment 4 (`000`
//! §5.2.4) under any policy, pool and device.
//!
//! What it models: the eight tables as B+trees over page numbers (a root,
//! one level of internal pages when a table has more than one leaf, then
//! the leaves in key order), sized by the rows per leaf page the engine's
//! own load measured (`flushwise tpch prepare`'s manifest at SF 1 and
//! 16 KiB pages: supplier 101.0, customer 89.2, part 122.5, partsupp
//! 101.1, orders 138.8, lineitem 156.1; the 2-of-16 KiB region and nation
//! fit in one leaf each); and the engine's plans of the 22 queries
//! (`flushwise_workloads::tpch::query`, each plan written above its
//! function) as what they fix:
//! - a *scan* of a table: one descent to its first leaf, then every leaf in
//!   key order (the engine's cursor follows sibling links);
//! - *lookups* by key into a table in ascending key order (an order's lines
//!   for the orders a plan selected, a part's PARTSUPP rows, an order by
//!   key): a root-to-leaf descent each, at evenly spread positions
//!   (stratified: one per equal slice of the table), as many as the plan's
//!   selectivity at the specification's parameter ranges gives (listed in
//!   [`footprint`] with their derivation).
//!
//! A query is one transaction of type [`TxnType::Query`], all fixes shared
//! and unmodified. The refresh stream (agent 0 when refreshes are on) runs
//! RF1 then RF2 of pair 1, 2, ...: each order inserted or deleted is one
//! [`TxnType::Refresh`] transaction that modifies one ORDERS leaf and one
//! LINEITEM leaf at the key position of that order (pair `p` works on the
//! `p`-th thousandth of the key space, as the engine's RF1 keys and RF2's
//! old orders are, `flushwise_workloads::tpch::gen`), with redo of about
//! the rows' size. Query streams (agents 1..) run the 22 queries in their
//! stream's order ([`stream_order`], shared with the engine's driver) over
//! and over.
//!
//! Not modelled (stated): the CPU of evaluating rows (the simulator charges
//! its per-fix and per-transaction costs only, so absolute query rates are
//! the simulator's, not the engine's; issue #18 calibrates those); page
//! splits from RF1's inserts (RF2 deletes as many rows, so leaves stay
//! near their size); the power test (the throughput test is the
//! measurement the paper's Figure 10 reports).
//!
//! Invariants: every transaction opens with TxnBegin, closes with
//! TxnCommit and unfixes every page it fixed; an Unfix is modified iff it
//! carries redo bytes; a run is a pure function of (config, seed, agent
//! order).

use flushwise_core::PageId;
use flushwise_trace::{LatchMode, TraceRecord, TxnType};

use crate::rng::{mix64, Rng64, Xoshiro256StarStar};

/// Stream 00's query order (TPC-H Appendix A).
pub const STREAM_00_ORDER: [u8; 22] = [
    14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12,
];

/// The order of stream `stream`'s queries: stream 00's from the
/// specification, the others a permutation drawn from `seed` and `stream`
/// (the specification's table for streams 01..40 is not reproduced).
pub fn stream_order(seed: u64, stream: u32) -> [u8; 22] {
    if stream == 0 {
        return STREAM_00_ORDER;
    }
    let mut order = STREAM_00_ORDER;
    let mut rng = Xoshiro256StarStar::seed_from_u64(mix64(seed ^ 0x0a11_0de5 ^ (u64::from(stream) << 32)));
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

/// The eight tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TpchTable {
    Region,
    Nation,
    Supplier,
    Customer,
    Part,
    PartSupp,
    Orders,
    Lineitem,
}

use TpchTable::*;

impl TpchTable {
    pub const ALL: [TpchTable; 8] = [Region, Nation, Supplier, Customer, Part, PartSupp, Orders, Lineitem];

    /// Rows at scale factor `sf` (clause 4.2.5.1; LINEITEM's mean).
    pub fn rows(self, sf: f64) -> u64 {
        let n = |base: f64| ((base * sf).round() as u64).max(1);
        match self {
            Region => 5,
            Nation => 25,
            Supplier => n(10_000.0),
            Customer => n(150_000.0),
            Part => n(200_000.0),
            PartSupp => 4 * n(200_000.0),
            Orders => n(1_500_000.0),
            Lineitem => 4 * n(1_500_000.0),
        }
    }

    /// Rows per leaf page of 16 KiB the engine's load measured (module doc).
    pub fn rows_per_leaf_16k(self) -> f64 {
        match self {
            Region | Nation => 25.0,
            Supplier => 101.0,
            Customer => 89.2,
            Part => 122.5,
            PartSupp => 101.1,
            Orders => 138.8,
            Lineitem => 156.1,
        }
    }

    /// Bytes of one row, about (the redo of changing one): a 16 KiB page
    /// over its rows.
    pub fn row_bytes(self) -> u32 {
        (16_384.0 / self.rows_per_leaf_16k()) as u32
    }

    /// The simulator's space id of the table.
    pub const fn space(self) -> u32 {
        match self {
            Region => 101,
            Nation => 102,
            Supplier => 103,
            Customer => 104,
            Part => 105,
            PartSupp => 106,
            Orders => 107,
            Lineitem => 108,
        }
    }
}

/// Keys one internal page of 16 KiB holds (measured: 38,447 LINEITEM
/// leaves under 39 internal pages).
const INTERNAL_FANOUT_16K: f64 = 986.0;

/// One table's tree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TableShape {
    pub table: TpchTable,
    pub rows: u64,
    pub leaves: u32,
    /// Internal pages below the root (0 when the root is the only leaf).
    pub internals: u32,
}

impl TableShape {
    fn new(table: TpchTable, sf: f64, page_size_bytes: u32) -> Self {
        let scale = f64::from(page_size_bytes) / 16_384.0;
        let rows = table.rows(sf);
        let leaves = ((rows as f64 / (table.rows_per_leaf_16k() * scale)).ceil() as u32).max(1);
        let fanout = (INTERNAL_FANOUT_16K * scale).max(2.0);
        let internals = if leaves == 1 {
            0
        } else {
            ((f64::from(leaves) / fanout).ceil() as u32).max(1)
        };
        Self {
            table,
            rows,
            leaves,
            internals,
        }
    }

    /// Pages: root, internals, leaves (a lone leaf is its own root).
    pub fn pages(&self) -> u64 {
        if self.leaves == 1 {
            1
        } else {
            1 + u64::from(self.internals) + u64::from(self.leaves)
        }
    }

    fn page(&self, page_no: u64) -> PageId {
        PageId::new(self.table.space(), page_no as u32)
    }

    /// The leaf holding row `row` (0-based, key order).
    fn leaf_of(&self, row: u64) -> u32 {
        ((row as f64 * f64::from(self.leaves) / self.rows as f64) as u32).min(self.leaves - 1)
    }

    /// Page numbers from the root to leaf `leaf`.
    fn path(&self, leaf: u32) -> Vec<u64> {
        if self.leaves == 1 {
            return vec![0];
        }
        let per_internal = f64::from(self.leaves) / f64::from(self.internals);
        let internal = ((f64::from(leaf) / per_internal) as u32).min(self.internals - 1);
        vec![0, 1 + u64::from(internal), self.leaf_page_no(leaf)]
    }

    fn leaf_page_no(&self, leaf: u32) -> u64 {
        if self.leaves == 1 {
            0
        } else {
            1 + u64::from(self.internals) + u64::from(leaf)
        }
    }
}

/// What a query reads: scans of whole tables and lookups by key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    Scan(TpchTable),
    /// Lookups into the table, as a fraction of its *driving* rows
    /// (`rows(of) × fraction` lookups, ascending).
    Lookups {
        table: TpchTable,
        of: TpchTable,
        fraction: f64,
    },
    /// A fixed number of lookups (top-N results fetching their rows).
    Fetch {
        table: TpchTable,
        count: u32,
    },
}

use Step::*;

/// The fixes of query `query` (1..=22) as the engine's plans make them.
///
/// Selectivities at the middle of the specification's parameter ranges
/// (orders span 79 months, 1992-01 to 1998-08; a segment, region or
/// nation pair is 1/5, 1/5, 2/25 of customers; a P_SIZE 1/50; a type
/// suffix 1/5; a colour word in a five-word name 5/92):
/// Q2 parts of one size and type suffix (1/250) fetch their PARTSUPP rows;
/// Q3 orders of the segment (1/5) before the date (48 %) fetch their lines;
/// Q4 and Q10 a quarter's orders (3/79); Q5 a year (12/79) of the region's
/// customers (1/5); Q7 the customers of two nations (2/25); Q8 two years
/// (24/79) of the region's customers; Q9 parts with the colour (5/92);
/// Q12 lines of two of seven modes received in the year with the date
/// order (2/7 × 12/79 × 1/4) fetch their order; Q16 parts of 8 of 50
/// sizes not of the brand or type (≈ 0.15); Q20 parts named after the
/// colour (1/92); Q21 the candidate late lines of the nation's suppliers
/// (1/25 × 1/2) fetch their order.
pub fn footprint(query: u8) -> &'static [Step] {
    const Q_QUARTER: f64 = 3.0 / 79.0;
    const Q_YEAR: f64 = 12.0 / 79.0;
    match query {
        1 => &[Scan(Lineitem)],
        2 => &[
            Scan(Region),
            Scan(Nation),
            Scan(Supplier),
            Scan(Part),
            Lookups {
                table: PartSupp,
                of: Part,
                fraction: 1.0 / 250.0,
            },
        ],
        3 => &[
            Scan(Customer),
            Scan(Orders),
            Lookups {
                table: Lineitem,
                of: Orders,
                fraction: 0.2 * 0.48,
            },
        ],
        4 => &[
            Scan(Orders),
            Lookups {
                table: Lineitem,
                of: Orders,
                fraction: Q_QUARTER,
            },
        ],
        5 => &[
            Scan(Region),
            Scan(Nation),
            Scan(Supplier),
            Scan(Customer),
            Scan(Orders),
            Lookups {
                table: Lineitem,
                of: Orders,
                fraction: Q_YEAR * 0.2,
            },
        ],
        6 => &[Scan(Lineitem)],
        7 => &[
            Scan(Nation),
            Scan(Supplier),
            Scan(Customer),
            Scan(Orders),
            Lookups {
                table: Lineitem,
                of: Orders,
                fraction: 2.0 / 25.0,
            },
        ],
        8 => &[
            Scan(Region),
            Scan(Nation),
            Scan(Customer),
            Scan(Part),
            Scan(Supplier),
            Scan(Orders),
            Lookups {
                table: Lineitem,
                of: Orders,
                fraction: 2.0 * Q_YEAR * 0.2,
            },
        ],
        9 => &[
            Scan(Part),
            Lookups {
                table: PartSupp,
                of: Part,
                fraction: 5.0 / 92.0,
            },
            Scan(Supplier),
            Scan(Lineitem),
            Scan(Orders),
        ],
        10 => &[
            Scan(Orders),
            Lookups {
                table: Lineitem,
                of: Orders,
                fraction: Q_QUARTER,
            },
            Fetch {
                table: Customer,
                count: 20,
            },
        ],
        11 => &[Scan(Nation), Scan(Supplier), Scan(PartSupp)],
        12 => &[
            Scan(Lineitem),
            Lookups {
                table: Orders,
                of: Lineitem,
                fraction: 2.0 / 7.0 * Q_YEAR / 4.0,
            },
        ],
        13 => &[Scan(Orders), Scan(Customer)],
        14 => &[Scan(Lineitem), Scan(Part)],
        15 => &[
            Scan(Lineitem),
            Fetch {
                table: Supplier,
                count: 1,
            },
        ],
        16 => &[
            Scan(Supplier),
            Scan(Part),
            Lookups {
                table: PartSupp,
                of: Part,
                fraction: 0.15,
            },
        ],
        17 => &[Scan(Part), Scan(Lineitem)],
        18 => &[
            Scan(Lineitem),
            Fetch {
                table: Orders,
                count: 100,
            },
            Fetch {
                table: Customer,
                count: 100,
            },
        ],
        19 => &[Scan(Part), Scan(Lineitem)],
        20 => &[
            Scan(Part),
            Scan(Lineitem),
            Lookups {
                table: PartSupp,
                of: Part,
                fraction: 1.0 / 92.0,
            },
            Scan(Supplier),
        ],
        21 => &[
            Scan(Supplier),
            Scan(Nation),
            Scan(Lineitem),
            Lookups {
                table: Orders,
                of: Orders,
                fraction: 0.5 / 25.0,
            },
        ],
        22 => &[Scan(Customer), Scan(Orders)],
        _ => &[],
    }
}

/// What to model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TpchModelConfig {
    pub sf: f64,
    pub page_size_bytes: u32,
    /// Agent 0 runs the refresh stream.
    pub refresh: bool,
    /// Seeds the streams' query orders.
    pub seed: u64,
}

/// Where the refresh stream is.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct RefreshState {
    /// 1-based pair.
    pair: u64,
    /// Orders done of the current function.
    done: u64,
    /// In RF2 (else RF1).
    deleting: bool,
}

/// The model: table shapes and where each stream is.
pub struct TpchModel {
    config: TpchModelConfig,
    shapes: [TableShape; 8],
    /// Per query agent: queries issued so far.
    issued: Vec<u64>,
    refresh: RefreshState,
    refresh_orders: u64,
}

impl TpchModel {
    pub fn new(config: TpchModelConfig) -> Result<Self, String> {
        if !(config.sf.is_finite() && config.sf > 0.0 && config.sf <= 1000.0) {
            return Err(format!("--sf {}: the scale factor must be in (0, 1000]", config.sf));
        }
        let shapes = TpchTable::ALL.map(|t| TableShape::new(t, config.sf, config.page_size_bytes));
        Ok(Self {
            config,
            shapes,
            issued: Vec::new(),
            refresh: RefreshState {
                pair: 1,
                ..RefreshState::default()
            },
            refresh_orders: ((1_500.0 * config.sf).round() as u64).max(1),
        })
    }

    pub fn config(&self) -> &TpchModelConfig {
        &self.config
    }

    pub fn shape(&self, table: TpchTable) -> &TableShape {
        &self.shapes[TpchTable::ALL.iter().position(|t| *t == table).unwrap_or(0)]
    }

    /// (space, pages) of every table.
    pub fn spaces(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.shapes.iter().map(|s| (s.table.space(), s.pages()))
    }

    pub fn database_pages(&self) -> u64 {
        self.shapes.iter().map(TableShape::pages).sum()
    }

    /// Appends agent `agent`'s next transaction to `out`.
    pub fn fill_transaction(&mut self, agent: u32, out: &mut Vec<TraceRecord>) {
        if self.config.refresh && agent == 0 {
            self.refresh_order(agent, out);
            return;
        }
        let stream = if self.config.refresh { agent } else { agent + 1 };
        let slot = agent as usize;
        if self.issued.len() <= slot {
            self.issued.resize(slot + 1, 0);
        }
        let n = self.issued[slot];
        self.issued[slot] += 1;
        let query = stream_order(self.config.seed, stream)[(n % 22) as usize];
        self.query(agent, query, out);
    }

    /// The fixes of one query.
    pub fn query(&self, agent: u32, query: u8, out: &mut Vec<TraceRecord>) {
        out.push(TraceRecord::txn_begin(agent, TxnType::Query));
        for step in footprint(query) {
            match *step {
                Scan(t) => self.scan(agent, t, out),
                Lookups { table, of, fraction } => {
                    let driving = self.shape(of).rows as f64 * fraction;
                    self.lookups(agent, table, driving.round().max(1.0) as u64, out)
                }
                Fetch { table, count } => self.lookups(agent, table, u64::from(count), out),
            }
        }
        out.push(TraceRecord::txn_commit(agent, TxnType::Query));
    }

    fn fix_unfix(agent: u32, page: PageId, out: &mut Vec<TraceRecord>) {
        out.push(TraceRecord::fix(agent, page, LatchMode::Shared));
        out.push(TraceRecord::unfix(agent, page, LatchMode::Shared, false, 0));
    }

    fn scan(&self, agent: u32, table: TpchTable, out: &mut Vec<TraceRecord>) {
        let s = self.shape(table);
        for page_no in s.path(0) {
            Self::fix_unfix(agent, s.page(page_no), out);
        }
        for leaf in 1..s.leaves {
            Self::fix_unfix(agent, s.page(s.leaf_page_no(leaf)), out);
        }
    }

    /// `n` lookups at evenly spread ascending rows, each a descent.
    fn lookups(&self, agent: u32, table: TpchTable, n: u64, out: &mut Vec<TraceRecord>) {
        let s = self.shape(table);
        let n = n.min(s.rows).max(1);
        for i in 0..n {
            // The middle of the i-th of n equal slices.
            let row = ((i as f64 + 0.5) * s.rows as f64 / n as f64) as u64;
            for page_no in s.path(s.leaf_of(row)) {
                Self::fix_unfix(agent, s.page(page_no), out);
            }
        }
    }

    /// One order of RF1 or RF2: its ORDERS leaf and LINEITEM leaf changed.
    fn refresh_order(&mut self, agent: u32, out: &mut Vec<TraceRecord>) {
        let st = self.refresh;
        // Pair p works on the p-th thousandth of the key space (wrapping
        // after 1,000 pairs, where the engine's database would need a new
        // load).
        let thousandth = (st.pair - 1) % 1000;
        let position = (thousandth as f64 + st.done as f64 / self.refresh_orders as f64) / 1000.0;
        out.push(TraceRecord::txn_begin(agent, TxnType::Refresh));
        for (table, rows) in [(Orders, 1u32), (Lineitem, 4u32)] {
            let s = self.shape(table);
            let leaf = s.leaf_of((position * s.rows as f64) as u64);
            let path = s.path(leaf);
            let (leaf_page, inner) = path
                .split_last()
                .map(|(l, i)| (*l, i.to_vec()))
                .unwrap_or((0, Vec::new()));
            for page_no in inner {
                Self::fix_unfix(agent, s.page(page_no), out);
            }
            let page = s.page(leaf_page);
            out.push(TraceRecord::fix(agent, page, LatchMode::Exclusive));
            out.push(TraceRecord::unfix(
                agent,
                page,
                LatchMode::Exclusive,
                true,
                rows * table.row_bytes(),
            ));
        }
        out.push(TraceRecord::txn_commit(agent, TxnType::Refresh));
        let mut next = st;
        next.done += 1;
        if next.done == self.refresh_orders {
            next.done = 0;
            if next.deleting {
                next.deleting = false;
                next.pair += 1;
            } else {
                next.deleting = true;
            }
        }
        self.refresh = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flushwise_trace::TraceEvent;

    fn model(sf: f64, refresh: bool) -> TpchModel {
        TpchModel::new(TpchModelConfig {
            sf,
            page_size_bytes: 16_384,
            refresh,
            seed: 1,
        })
        .expect("model")
    }

    #[test]
    fn tables_are_sized_as_the_engine_measured_them() {
        let m = model(1.0, true);
        let li = m.shape(Lineitem);
        assert_eq!(li.rows, 6_000_000);
        // Engine at SF 1: 38,447 leaves, 39 internal pages (one of them the
        // root), for 6,000,274 rows.
        assert!((38_300..=38_500).contains(&li.leaves), "{}", li.leaves);
        assert_eq!(li.internals, 39);
        assert_eq!(m.shape(Region).pages(), 1);
        let total = m.database_pages();
        // The engine's SF 1 data file: 65,472 pages (the trees plus the
        // catalog and the space's own pages).
        assert!((60_000..=65_472).contains(&total), "{total}");
        let small = model(0.01, false);
        assert!(small.shape(Supplier).leaves >= 1 && small.database_pages() < total / 50);
    }

    #[test]
    fn every_query_is_one_balanced_read_only_transaction_and_scans_what_its_plan_scans() {
        let m = model(0.1, false);
        for q in 1..=22u8 {
            let mut out = Vec::new();
            m.query(3, q, &mut out);
            assert!(matches!(
                out.first().map(|r| r.event),
                Some(TraceEvent::TxnBegin {
                    txn_type: TxnType::Query
                })
            ));
            assert!(matches!(
                out.last().map(|r| r.event),
                Some(TraceEvent::TxnCommit {
                    txn_type: TxnType::Query
                })
            ));
            let fixes = out.iter().filter(|r| matches!(r.event, TraceEvent::Fix { .. })).count();
            let unfixes = out
                .iter()
                .filter(|r| matches!(r.event, TraceEvent::Unfix { modified: false, .. }))
                .count();
            assert_eq!(fixes, unfixes, "Q{q}");
            assert!(out.iter().all(|r| r.agent == 3));
            let scans_lineitem = footprint(q).contains(&Scan(Lineitem));
            let li = m.shape(Lineitem);
            let li_fixes = out
                .iter()
                .filter(|r| matches!(r.event, TraceEvent::Fix { page, .. } if page.space == Lineitem.space()))
                .count() as u32;
            if scans_lineitem {
                assert!(li_fixes >= li.leaves, "Q{q} reads every LINEITEM leaf");
            }
        }
        // Q1 is exactly one LINEITEM scan: a descent and every leaf.
        let mut q1 = Vec::new();
        m.query(0, 1, &mut q1);
        assert_eq!(q1.len(), 2 + 2 * (m.shape(Lineitem).leaves as usize + 2));
    }

    #[test]
    fn the_refresh_stream_changes_one_thousandth_per_pair_and_streams_follow_their_order() {
        let mut m = model(0.1, true);
        let n = 150; // SF 0.1 × 1500
        let mut touched = std::collections::BTreeSet::new();
        for _ in 0..2 * n {
            let mut out = Vec::new();
            m.fill_transaction(0, &mut out);
            assert!(matches!(
                out.first().map(|r| r.event),
                Some(TraceEvent::TxnBegin {
                    txn_type: TxnType::Refresh
                })
            ));
            for r in &out {
                if let TraceEvent::Unfix {
                    page,
                    modified: true,
                    redo_bytes,
                    ..
                } = r.event
                {
                    assert!(redo_bytes > 0);
                    touched.insert((page.space, page.page_no));
                }
            }
        }
        assert_eq!(m.refresh.pair, 2, "RF1 and RF2 of pair 1 done");
        let li = m.shape(Lineitem);
        let li_touched = touched.iter().filter(|(s, _)| *s == Lineitem.space()).count() as u32;
        assert!(
            li_touched <= li.leaves / 1000 + 2,
            "{li_touched} of {} leaves",
            li.leaves
        );
        // Query agent 2 is stream 2: its queries follow that stream's order.
        let order = stream_order(1, 2);
        for want in order.iter().take(3) {
            let mut out = Vec::new();
            m.fill_transaction(2, &mut out);
            let mut expect = Vec::new();
            m.query(2, *want, &mut expect);
            assert_eq!(out, expect);
        }
        assert_eq!(stream_order(9, 0), STREAM_00_ORDER);
        let mut sorted = stream_order(9, 5).to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, (1..=22).collect::<Vec<u8>>());
    }
}
