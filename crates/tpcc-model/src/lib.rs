//! A TPC-C page-reference model: the fix/unfix stream of TPC-C without a
//! database (and, in [`tpch`], TPC-H's).
//!
//! What it models: the nine TPC-C tables and the two usual secondary indexes
//! as B+trees over page numbers ([`schema`]), and the five transactions
//! ([`txn`]) as the sequence of page fixes a page-latching engine issues
//! for them: a root-to-leaf descent with latch coupling for every row
//! access, exclusive latches and redo on modified leaves, page splits at the
//! right edge of growing tables, and the undo of a rolled-back New-Order.
//! It replaces a recorded trace (papers/002 §4 recorded 60 million requests
//! of DB2 under TPC-C) with a generator that scales to 1,000 warehouses.
//!
//! Invariants:
//! - Memory is independent of run length and of database size except for
//!   one small [`DistrictState`] per district (10 per warehouse) and the
//!   1,000-entry last-name rank table. An order's customer, line count and
//!   items are not stored: they are re-derived from a hash of (seed,
//!   warehouse, district, order id) whenever Delivery, Order-Status or
//!   Stock-Level need them.
//! - Every transaction opens with TxnBegin, closes with TxnCommit or
//!   TxnRollback, and unfixes every page it fixed; an Unfix is modified iff
//!   it carries redo bytes.
//! - A run is a pure function of (config, seed, agent order): same inputs,
//!   byte-identical trace.
//!
//! Where the constants come from: the mix 45/43/4/4/4, NURand with A = 255
//! (C_LAST), 1023 (C_ID), 8191 (OL_I_ID), 5-15 lines per order, 1 % remote
//! supply warehouse per line, 1 % New-Order rollbacks on an invalid last
//! item, Payment 85/15 home/remote and 60 % by last name, Order-Status 60 %
//! by last name, Delivery over all ten districts and Stock-Level over the
//! last 20 orders are TPC-C clauses 2.4-2.8 and 5.2.3 as summarised in
//! /work/shared/reference/ecosystem.md §2. Terminal `agent` works for home
//! warehouse `agent % W + 1` (clause 2.1.4: a terminal's warehouse is fixed).
//!
//! Layer: above `core` and `trace`, below the simulator and the workloads
//! (the engine-side TPC-C draws its random numbers from [`rng`], so a seed
//! gives the same data in both shells).

pub mod insert;
pub mod rng;
pub mod schema;
pub mod tpch;
mod txn;

use flushwise_trace::{TraceRecord, TxnType};

pub use rng::{nurand, Rng64, SplitMix64, Xoshiro256StarStar};
pub use schema::{Table, Tree};

use schema::{
    PageBudget, CUSTOMERS_PER_DISTRICT, DISTRICTS_PER_WAREHOUSE, FIRST_INITIAL_NEW_ORDER,
    INITIAL_NEW_ORDERS_PER_DISTRICT, INITIAL_ORDERS_PER_DISTRICT, ITEMS, MAX_HEIGHT, ORDER_LINE_SLOTS_PER_ORDER,
    STOCK_PER_WAREHOUSE,
};

/// Most warehouses the layout is checked for (page numbers stay 32-bit
/// with ample room for growth up to here).
pub const WAREHOUSES_MAX: u32 = 10_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TpccModelConfig {
    pub warehouses: u32,
    /// 4 KiB to 64 KiB; InnoDB's default 16 KiB by default.
    pub page_size_bytes: u32,
    /// Seeds the C constants and every per-order attribute.
    pub seed: u64,
    /// How full B+tree pages are, 50..=100 (default 80: between InnoDB's
    /// 15/16 for sequential loads and ~69 % for random inserts).
    pub leaf_fill_percent: u32,
    /// Which warehouse a transaction works on. With few connections and many
    /// warehouses, drivers spread transactions over all warehouses
    /// (tpcc-mysql draws `w_id` uniformly per transaction; DBT-2 multiplexes
    /// ten terminals per warehouse over its connections), so that is the
    /// default; `HomePerAgent` binds agent `a` to warehouse `a % W + 1`.
    pub warehouse_choice: WarehouseChoice,
    /// Which transaction types are drawn, in what proportion.
    pub mix: TpccMix,
}

/// The proportions of the five transaction types.
///
/// `Standard` is TPC-C's (clause 5.2.3 minimums as drivers run them:
/// New-Order 45, Payment 43, Order-Status 4, Delivery 4, Stock-Level 4).
/// `ReadMostly` is not in the specification: it is the own-policy matrix's
/// read-mostly load (issue #12), 80 % of the transactions read-only
/// (Order-Status 40, Stock-Level 40) and the rest the writing types in
/// TPC-C's own proportions scaled down (New-Order 10, Payment 6,
/// Delivery 4). The page references of each type are unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TpccMix {
    #[default]
    Standard,
    ReadMostly,
}

impl TpccMix {
    /// Every mix, for error messages.
    pub const ALL: [TpccMix; 2] = [TpccMix::Standard, TpccMix::ReadMostly];

    /// Percent of New-Order, Payment, Order-Status, Delivery, Stock-Level;
    /// sums to 100.
    pub const fn percent(self) -> [u32; 5] {
        match self {
            TpccMix::Standard => [45, 43, 4, 4, 4],
            TpccMix::ReadMostly => [10, 6, 40, 4, 40],
        }
    }

    /// The name the command line accepts.
    pub const fn name(self) -> &'static str {
        match self {
            TpccMix::Standard => "standard",
            TpccMix::ReadMostly => "read-mostly",
        }
    }

    /// Parses a mix name: an error names what is accepted.
    pub fn parse(text: &str) -> Result<Self, String> {
        Self::ALL.into_iter().find(|m| m.name() == text.trim()).ok_or_else(|| {
            format!(
                "unknown TPC-C mix '{text}': accepted are {}",
                Self::ALL.map(|m| m.name()).join(", ")
            )
        })
    }

    /// The type a uniform draw in 0..100 selects.
    fn pick(self, draw: u64) -> TxnType {
        const TYPES: [TxnType; 5] = [
            TxnType::NewOrder,
            TxnType::Payment,
            TxnType::OrderStatus,
            TxnType::Delivery,
            TxnType::StockLevel,
        ];
        let mut upper = 0u64;
        for (txn_type, share) in TYPES.iter().zip(self.percent()) {
            upper += u64::from(share);
            if draw < upper {
                return *txn_type;
            }
        }
        TxnType::StockLevel
    }
}

impl std::fmt::Display for TpccMix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a transaction's home warehouse is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarehouseChoice {
    /// Uniform over all warehouses, drawn per transaction.
    UniformPerTransaction,
    /// Fixed per agent: `agent % W + 1`.
    HomePerAgent,
}

impl Default for TpccModelConfig {
    fn default() -> Self {
        Self {
            warehouses: 1,
            page_size_bytes: 16 * 1024,
            seed: 0,
            leaf_fill_percent: 80,
            warehouse_choice: WarehouseChoice::UniformPerTransaction,
            mix: TpccMix::Standard,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TpccModelError {
    #[error("invalid tpcc model config: {reason}")]
    InvalidConfig { reason: String },
}

/// The run-time NURand constants (clause 2.1.6), chosen once per run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NurandConstants {
    /// C for C_LAST used when the database was loaded.
    pub c_last_load: u64,
    /// C for C_LAST at run time: |run - load| in 65..=119, not 96 or 112
    /// (clause 2.1.6.1).
    pub c_last_run: u64,
    pub c_id: u64,
    pub ol_i_id: u64,
}

impl NurandConstants {
    fn choose(rng: &mut impl Rng64) -> Self {
        let c_last_load = rng.between(0, 255);
        let c_last_run = loop {
            let candidate = rng.between(0, 255);
            let delta = candidate.abs_diff(c_last_load);
            if (65..=119).contains(&delta) && delta != 96 && delta != 112 {
                break candidate;
            }
        };
        Self {
            c_last_load,
            c_last_run,
            c_id: rng.between(0, 1023),
            ol_i_id: rng.between(0, 8191),
        }
    }
}

/// The counters a district needs; everything else is derived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistrictState {
    /// D_NEXT_O_ID.
    pub next_o_id: u64,
    /// Lowest order id still in NEW_ORDER (the next one Delivery takes).
    pub oldest_new_order: u64,
    /// Rightmost allocated leaf slot of this district's ORDER, NEW_ORDER and
    /// ORDER_LINE key ranges (a split allocates the next).
    pub order_last_slot: u64,
    pub new_order_last_slot: u64,
    pub order_line_last_slot: u64,
}

/// HISTORY's right edge: rows so far, rightmost page per depth, children of
/// each rightmost internal node, next page number to allocate.
#[derive(Clone, Debug)]
struct HistoryEdge {
    rows: u64,
    right_path: [u64; MAX_HEIGHT],
    right_children: [u64; MAX_HEIGHT],
    next_free_page: u64,
}

/// What the model did, for tests and reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TpccModelStats {
    /// Transactions by type code (NewOrder 0 .. StockLevel 4).
    pub txns: [u64; 5],
    pub new_order_rollbacks: u64,
    pub order_lines: u64,
    pub remote_order_lines: u64,
    pub remote_payments: u64,
    pub payments_by_last_name: u64,
    pub order_status_by_last_name: u64,
    pub deliveries_skipped_districts: u64,
    /// Pages allocated by splits / freed by emptied NEW_ORDER leaves.
    pub pages_allocated: u64,
    pub pages_freed: u64,
    pub fixes: u64,
}

/// Size of one table or index after load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSize {
    pub table: Table,
    pub space: u32,
    pub rows: u64,
    pub height: usize,
    pub rows_per_leaf: u64,
    pub fanout: u64,
    pub pages: u64,
    pub bytes: u64,
}

/// The model: schema geometry plus per-district counters.
#[derive(Clone, Debug)]
pub struct TpccModel {
    config: TpccModelConfig,
    constants: NurandConstants,
    trees: Vec<Tree>,
    districts: Vec<DistrictState>,
    history: HistoryEdge,
    /// Sort position of last name n (0..1000) among the 1,000 names.
    last_name_rank: Vec<u16>,
    stats: TpccModelStats,
}

impl TpccModel {
    pub fn new(config: TpccModelConfig) -> Result<Self, TpccModelError> {
        let invalid = |reason: String| Err(TpccModelError::InvalidConfig { reason });
        if config.warehouses == 0 || config.warehouses > WAREHOUSES_MAX {
            return invalid(format!("warehouses {} outside 1..={WAREHOUSES_MAX}", config.warehouses));
        }
        if !(4096..=65536).contains(&config.page_size_bytes) {
            return invalid(format!(
                "page size {} outside 4096..=65536 bytes",
                config.page_size_bytes
            ));
        }
        if !(50..=100).contains(&config.leaf_fill_percent) {
            return invalid(format!("leaf fill {} % outside 50..=100", config.leaf_fill_percent));
        }
        let w = u64::from(config.warehouses);
        let districts = w * DISTRICTS_PER_WAREHOUSE;
        let budget = PageBudget::new(config.page_size_bytes, config.leaf_fill_percent);
        let customers = districts * CUSTOMERS_PER_DISTRICT;
        let trees: Vec<Tree> = Table::ALL
            .into_iter()
            .map(|table| match table {
                Table::Warehouse => Tree::new_static(table, w, budget),
                Table::District => Tree::new_static(table, districts, budget),
                Table::Customer | Table::CustomerByLastName | Table::OrderByCustomer => {
                    Tree::new_static(table, customers, budget)
                }
                Table::History => Tree::new_static(table, customers, budget),
                Table::NewOrder => Tree::new_per_district(table, districts, INITIAL_NEW_ORDERS_PER_DISTRICT, budget),
                Table::Order => Tree::new_per_district(table, districts, INITIAL_ORDERS_PER_DISTRICT, budget),
                Table::OrderLine => Tree::new_per_district(
                    table,
                    districts,
                    INITIAL_ORDERS_PER_DISTRICT * ORDER_LINE_SLOTS_PER_ORDER,
                    budget,
                ),
                Table::Item => Tree::new_static(table, ITEMS, budget),
                Table::Stock => Tree::new_static(table, w * STOCK_PER_WAREHOUSE, budget),
            })
            .collect();
        let tree = |t: Table| &trees[t as usize];
        let district = DistrictState {
            next_o_id: INITIAL_ORDERS_PER_DISTRICT + 1,
            oldest_new_order: FIRST_INITIAL_NEW_ORDER,
            order_last_slot: tree(Table::Order).leaf_slot(INITIAL_ORDERS_PER_DISTRICT - 1),
            new_order_last_slot: tree(Table::NewOrder).leaf_slot(INITIAL_NEW_ORDERS_PER_DISTRICT - 1),
            order_line_last_slot: tree(Table::OrderLine)
                .leaf_slot(INITIAL_ORDERS_PER_DISTRICT * ORDER_LINE_SLOTS_PER_ORDER - 1),
        };
        let history = {
            let h = tree(Table::History);
            let (base, nodes) = h.static_levels().unwrap_or_default();
            let mut right_path = [0u64; MAX_HEIGHT];
            let mut right_children = [0u64; MAX_HEIGHT];
            for depth in 0..h.height {
                right_path[depth] = base[depth] + nodes[depth] - 1;
                if depth + 1 < h.height {
                    let below = nodes[depth + 1];
                    right_children[depth] = below - (nodes[depth] - 1) * h.fanout;
                }
            }
            HistoryEdge {
                rows: h.initial_rows,
                right_path,
                right_children,
                next_free_page: h.initial_pages,
            }
        };
        let mut constants_rng = SplitMix64::new(rng::mix64(config.seed ^ 0xC0C0_C0C0));
        let constants = NurandConstants::choose(&mut constants_rng);
        let model = Self {
            config,
            constants,
            trees,
            districts: vec![district; districts as usize],
            history,
            last_name_rank: last_name_ranks(),
            stats: TpccModelStats::default(),
        };
        // Leave room for growth: page numbers are 32-bit.
        for table in Table::ALL {
            let limit = model.space_page_limit(table.space()).unwrap_or(0);
            if limit > u64::from(u32::MAX) / 4 {
                return invalid(format!(
                    "{} needs page numbers up to {limit} at {} warehouses",
                    table.name(),
                    model.config.warehouses
                ));
            }
        }
        Ok(model)
    }

    pub fn config(&self) -> &TpccModelConfig {
        &self.config
    }

    pub fn constants(&self) -> NurandConstants {
        self.constants
    }

    pub fn stats(&self) -> &TpccModelStats {
        &self.stats
    }

    pub fn tree(&self, table: Table) -> &Tree {
        &self.trees[table as usize]
    }

    pub fn district(&self, w_id: u32, d_id: u32) -> &DistrictState {
        &self.districts[district_index(w_id, d_id) as usize]
    }

    /// Pages of the database now: the loaded trees plus pages allocated by
    /// splits since (freed NEW_ORDER pages still count: they stay in the
    /// file). Use it to size a pool that holds the whole database.
    pub fn database_pages(&self) -> u64 {
        self.trees.iter().map(|t| t.initial_pages).sum::<u64>() + self.stats.pages_allocated
    }

    /// Per table and index, the loaded size.
    pub fn table_sizes(&self) -> Vec<TableSize> {
        self.trees
            .iter()
            .map(|t| TableSize {
                table: t.table,
                space: t.space(),
                rows: t.initial_rows,
                height: t.height,
                rows_per_leaf: t.rows_per_leaf,
                fanout: t.fanout,
                pages: t.initial_pages,
                bytes: t.initial_pages * u64::from(self.config.page_size_bytes),
            })
            .collect()
    }

    /// One past the highest page number allocated so far in `space`, or
    /// `None` for a space the model does not use.
    pub fn space_page_limit(&self, space: u32) -> Option<u64> {
        let table = Table::from_space(space)?;
        let tree = self.tree(table);
        let max_slot = |f: fn(&DistrictState) -> u64| self.districts.iter().map(f).max();
        Some(match table {
            Table::History => self.history.next_free_page,
            Table::Order => tree.page_limit(max_slot(|d| d.order_last_slot).unwrap_or(0)),
            Table::NewOrder => tree.page_limit(max_slot(|d| d.new_order_last_slot).unwrap_or(0)),
            Table::OrderLine => tree.page_limit(max_slot(|d| d.order_line_last_slot).unwrap_or(0)),
            _ => tree.initial_pages,
        })
    }

    /// Draws a transaction type from the configured mix (TPC-C's
    /// 45/43/4/4/4 by default) and generates it
    /// for terminal `agent`.
    pub fn next_transaction(&mut self, agent: u32, rng: &mut impl Rng64) -> Vec<TraceRecord> {
        let mut out = Vec::with_capacity(256);
        self.fill_transaction(agent, rng, &mut out);
        out
    }

    /// As [`TpccModel::next_transaction`], appending to `out`; returns the
    /// type drawn.
    pub fn fill_transaction(&mut self, agent: u32, rng: &mut impl Rng64, out: &mut Vec<TraceRecord>) -> TxnType {
        let txn_type = self.config.mix.pick(rng.below(100));
        self.fill_transaction_of(txn_type, agent, rng, out);
        txn_type
    }

    /// Generates one transaction of a given type (`TxnType::Other` yields
    /// nothing).
    pub fn fill_transaction_of(
        &mut self,
        txn_type: TxnType,
        agent: u32,
        rng: &mut impl Rng64,
        out: &mut Vec<TraceRecord>,
    ) {
        let w_id = match self.config.warehouse_choice {
            WarehouseChoice::HomePerAgent => self.home_warehouse(agent),
            WarehouseChoice::UniformPerTransaction => rng.below(u64::from(self.config.warehouses)) as u32 + 1,
        };
        let start = out.len();
        let mut e = txn::Emitter { agent, out };
        match txn_type {
            TxnType::NewOrder => self.new_order(&mut e, w_id, rng),
            TxnType::Payment => self.payment(&mut e, w_id, rng),
            TxnType::OrderStatus => self.order_status(&mut e, w_id, rng),
            TxnType::Delivery => self.delivery(&mut e, w_id, rng),
            TxnType::StockLevel => self.stock_level(&mut e, w_id, rng),
            TxnType::Other | TxnType::Query | TxnType::Refresh => return,
        }
        self.stats.txns[txn_type.code() as usize] += 1;
        self.stats.fixes += out[start..]
            .iter()
            .filter(|r| matches!(r.event, flushwise_trace::TraceEvent::Fix { .. }))
            .count() as u64;
    }

    /// Terminal `agent`'s warehouse: `agent % W + 1`.
    pub fn home_warehouse(&self, agent: u32) -> u32 {
        agent % self.config.warehouses + 1
    }
}

/// Index of district (w, d) among all districts, 0-based.
pub(crate) fn district_index(w_id: u32, d_id: u32) -> u64 {
    (u64::from(w_id) - 1) * DISTRICTS_PER_WAREHOUSE + u64::from(d_id) - 1
}

/// The 1,000 last names of clause 4.3.2.3 (three syllables indexed by the
/// digits of n) ranked in string order, as a name index sorts them.
fn last_name_ranks() -> Vec<u16> {
    const SYLLABLES: [&str; 10] = [
        "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
    ];
    let name = |n: usize| format!("{}{}{}", SYLLABLES[n / 100], SYLLABLES[n / 10 % 10], SYLLABLES[n % 10]);
    let mut order: Vec<usize> = (0..1000).collect();
    order.sort_by_key(|&n| (name(n), n));
    let mut rank = vec![0u16; 1000];
    for (r, &n) in order.iter().enumerate() {
        rank[n] = r as u16;
    }
    rank
}

/// Interleaves transactions of `agents` terminals round-robin into one
/// record stream; memory is one transaction's records.
pub struct TpccRefGen {
    model: TpccModel,
    rng: Xoshiro256StarStar,
    agents: u32,
    next_agent: u32,
    txns_left: u64,
    buffer: Vec<TraceRecord>,
    next_record: usize,
}

impl TpccRefGen {
    /// `transactions` transactions in all; randomness seeded from the
    /// model's seed.
    pub fn new(model: TpccModel, agents: u32, transactions: u64) -> Self {
        let rng = Xoshiro256StarStar::seed_from_u64(model.config.seed);
        Self {
            model,
            rng,
            agents: agents.max(1),
            next_agent: 0,
            txns_left: transactions,
            buffer: Vec::with_capacity(1024),
            next_record: 0,
        }
    }

    pub fn model(&self) -> &TpccModel {
        &self.model
    }

    pub fn into_model(self) -> TpccModel {
        self.model
    }
}

impl Iterator for TpccRefGen {
    type Item = TraceRecord;

    fn next(&mut self) -> Option<TraceRecord> {
        while self.next_record == self.buffer.len() {
            if self.txns_left == 0 {
                return None;
            }
            self.txns_left -= 1;
            self.buffer.clear();
            self.next_record = 0;
            let agent = self.next_agent;
            self.next_agent = (self.next_agent + 1) % self.agents;
            self.model.fill_transaction(agent, &mut self.rng, &mut self.buffer);
        }
        let record = self.buffer[self.next_record];
        self.next_record += 1;
        Some(record)
    }
}
