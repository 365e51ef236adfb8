//! The TPC-C schema as B+trees over page numbers.
//!
//! Each table and secondary index is one tree in its own tablespace
//! ([`Table::space`]). A tree's shape follows from its row count, its entry
//! size and the page size:
//!
//! - usable bytes per page = (page size - [`PAGE_OVERHEAD_BYTES`]) x fill
//!   factor; rows per leaf = usable / (row bytes + per-row overhead); internal
//!   fan-out = usable / (key bytes + [`NODE_POINTER_OVERHEAD_BYTES`]);
//! - the height is the number of levels needed to reach one root.
//!
//! Row sizes are the "typical row" sizes of the TPC-C specification (clause
//! 4.2.2 / 1.3 field widths): WAREHOUSE 89, DISTRICT 95, CUSTOMER 655,
//! HISTORY 46, NEW_ORDER 8, ORDER 24, ORDER_LINE 54, ITEM 82, STOCK 306
//! bytes. Per-row overhead is InnoDB's for a clustered index record: a 5-byte
//! record header, 6-byte DB_TRX_ID and 7-byte DB_ROLL_PTR (18 bytes);
//! secondary entries carry the 5-byte header; HISTORY has no primary key
//! and gets InnoDB's hidden 6-byte row id. Cardinalities are clause 4.3.3.1
//! (ecosystem.md §2): per warehouse 10 districts, 30,000 customers, 100,000
//! stock rows, 30,000 orders of which the last 900 per district are new
//! orders, ~10 lines per order, 30,000 history rows; ITEM is fixed at
//! 100,000. With the default 80 % fill this is ~103 MB per warehouse at
//! 16 KiB pages (ecosystem.md §2 and papers/002 §4.1: "about 100M bytes of
//! data for one warehouse"); `TpccModel::table_sizes` prints the breakdown.
//!
//! Three layouts:
//!
//! - *Static* trees (WAREHOUSE, DISTRICT, CUSTOMER, its last-name index,
//!   the order-by-customer index, ITEM, STOCK): rows in key order, page 0
//!   is the root, then each internal level left to right, then the leaves.
//!   Key ordinal `pos` lives in leaf `pos / rows_per_leaf`; its ancestor on
//!   each level up is the leaf index divided by the fan-out once per level.
//! - *Per-district append* trees (ORDER, NEW_ORDER, ORDER_LINE), keyed by
//!   (w, d, o_id, ...): every district's rows start on a fresh leaf and grow
//!   at that district's right edge, so the leaf of a row has a closed form
//!   from (district, row ordinal) and no per-page map is kept. Leaf slot `k`
//!   of district `g` is page `1 + (k * G + g) * S + 0` where `G` is the
//!   district count and `S` the number of non-root levels; internal level
//!   `l` groups `D_l` districts per node and takes slot `k / K_l` of them,
//!   numbered the same way in stream `l`. Page numbers of a level are thus
//!   interleaved with the other levels' (numbers in between belong to other
//!   levels or are not yet allocated); a split allocates the next slot's
//!   number. The root is page 0.
//! - *Global append* tree (HISTORY): a static initial layout whose right
//!   edge the model extends, allocating new pages after the last one.
//!
//! Simplifications (documented so results are read with them in mind): the
//! tree height is fixed at load (a run would have to grow a table by the
//! fan-out, ~500x, to add a level); freed NEW_ORDER leaves are not reused;
//! the order-by-customer index absorbs inserts without splitting; undo-log
//! and system pages are not modelled.

use flushwise_core::PageId;

/// InnoDB page header (38) + index page header (56) + infimum/supremum (26)
/// + trailer (8) + a page directory of ~70 bytes.
pub const PAGE_OVERHEAD_BYTES: u64 = 200;
/// Clustered record: 5-byte header + DB_TRX_ID (6) + DB_ROLL_PTR (7).
pub const CLUSTERED_ROW_OVERHEAD_BYTES: u64 = 18;
/// Secondary index record header.
pub const SECONDARY_ENTRY_OVERHEAD_BYTES: u64 = 5;
/// Node-pointer record: 5-byte header + 4-byte child page number.
pub const NODE_POINTER_OVERHEAD_BYTES: u64 = 9;
/// Deepest tree supported (1,000 warehouses need at most 4 levels).
pub const MAX_HEIGHT: usize = 8;

pub const DISTRICTS_PER_WAREHOUSE: u64 = 10;
pub const CUSTOMERS_PER_DISTRICT: u64 = 3_000;
pub const ITEMS: u64 = 100_000;
pub const STOCK_PER_WAREHOUSE: u64 = 100_000;
pub const INITIAL_ORDERS_PER_DISTRICT: u64 = 3_000;
/// Orders 2,101..=3,000 of each district start undelivered (clause 4.3.3.1).
pub const INITIAL_NEW_ORDERS_PER_DISTRICT: u64 = 900;
pub const FIRST_INITIAL_NEW_ORDER: u64 = INITIAL_ORDERS_PER_DISTRICT - INITIAL_NEW_ORDERS_PER_DISTRICT + 1;
/// Average lines per order (uniform 5..=15); ORDER_LINE reserves this many
/// key ordinals per order.
pub const ORDER_LINE_SLOTS_PER_ORDER: u64 = 10;
/// Customers per last name in a district's name index: 3,000 customers over
/// 1,000 names (clause 4.3.2.3).
pub const CUSTOMERS_PER_LAST_NAME: u64 = 3;

/// The nine tables and the two secondary indexes TPC-C kits create
/// (BenchBase's `idx_customer_name`, `idx_order`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Table {
    Warehouse,
    District,
    Customer,
    /// (c_w_id, c_d_id, c_last, c_first, c_id).
    CustomerByLastName,
    History,
    NewOrder,
    Order,
    /// (o_w_id, o_d_id, o_c_id, o_id).
    OrderByCustomer,
    OrderLine,
    Item,
    Stock,
}

impl Table {
    pub const ALL: [Table; 11] = [
        Table::Warehouse,
        Table::District,
        Table::Customer,
        Table::CustomerByLastName,
        Table::History,
        Table::NewOrder,
        Table::Order,
        Table::OrderByCustomer,
        Table::OrderLine,
        Table::Item,
        Table::Stock,
    ];

    /// Tablespace id (0 is left to a system tablespace).
    pub const fn space(self) -> u32 {
        match self {
            Table::Warehouse => 1,
            Table::District => 2,
            Table::Customer => 3,
            Table::CustomerByLastName => 4,
            Table::History => 5,
            Table::NewOrder => 6,
            Table::Order => 7,
            Table::OrderByCustomer => 8,
            Table::OrderLine => 9,
            Table::Item => 10,
            Table::Stock => 11,
        }
    }

    pub fn from_space(space: u32) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.space() == space)
    }

    pub const fn name(self) -> &'static str {
        match self {
            Table::Warehouse => "warehouse",
            Table::District => "district",
            Table::Customer => "customer",
            Table::CustomerByLastName => "customer_by_last_name",
            Table::History => "history",
            Table::NewOrder => "new_order",
            Table::Order => "order",
            Table::OrderByCustomer => "order_by_customer",
            Table::OrderLine => "order_line",
            Table::Item => "item",
            Table::Stock => "stock",
        }
    }

    /// Bytes of one leaf entry: typical row (clause 4.2.2) + record overhead.
    pub const fn entry_bytes(self) -> u64 {
        match self {
            Table::Warehouse => 89 + CLUSTERED_ROW_OVERHEAD_BYTES,
            Table::District => 95 + CLUSTERED_ROW_OVERHEAD_BYTES,
            Table::Customer => 655 + CLUSTERED_ROW_OVERHEAD_BYTES,
            // w (4) + d (4) + c_last (16) + c_first (16) + c_id (4).
            Table::CustomerByLastName => 44 + SECONDARY_ENTRY_OVERHEAD_BYTES,
            // + hidden 6-byte row id.
            Table::History => 46 + 6 + CLUSTERED_ROW_OVERHEAD_BYTES,
            Table::NewOrder => 8 + CLUSTERED_ROW_OVERHEAD_BYTES,
            Table::Order => 24 + CLUSTERED_ROW_OVERHEAD_BYTES,
            // w, d, c, o as 4-byte integers.
            Table::OrderByCustomer => 16 + SECONDARY_ENTRY_OVERHEAD_BYTES,
            Table::OrderLine => 54 + CLUSTERED_ROW_OVERHEAD_BYTES,
            Table::Item => 82 + CLUSTERED_ROW_OVERHEAD_BYTES,
            Table::Stock => 306 + CLUSTERED_ROW_OVERHEAD_BYTES,
        }
    }

    /// Bytes of the key in a node pointer (4-byte integer columns).
    pub const fn key_bytes(self) -> u64 {
        match self {
            Table::Warehouse | Table::Item => 4,
            Table::District | Table::Stock => 8,
            Table::Customer | Table::NewOrder | Table::Order => 12,
            Table::CustomerByLastName => 44,
            Table::History => 6,
            Table::OrderByCustomer | Table::OrderLine => 16,
        }
    }
}

/// Pages of one tree from the root down to one leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Path {
    pages: [PageId; MAX_HEIGHT],
    len: usize,
}

impl Path {
    pub fn pages(&self) -> &[PageId] {
        &self.pages[..self.len]
    }

    pub fn leaf(&self) -> PageId {
        self.pages[self.len - 1]
    }

    /// The path to the leaf's parent; `None` for a single-page tree.
    pub fn parent(&self) -> Option<Path> {
        (self.len > 1).then(|| Path {
            pages: self.pages,
            len: self.len - 1,
        })
    }

    fn from_page_nos(space: u32, page_nos: &[u64]) -> Path {
        let mut pages = [PageId::default(); MAX_HEIGHT];
        for (slot, &no) in pages.iter_mut().zip(page_nos) {
            *slot = PageId::new(space, page_no_u32(no));
        }
        Path {
            pages,
            len: page_nos.len(),
        }
    }
}

/// Page numbers are 32-bit; the layout keeps them far below that for any
/// supported configuration, and `TpccModel::new` checks the initial layout.
fn page_no_u32(no: u64) -> u32 {
    assert!(
        no <= u64::from(u32::MAX),
        "page number {no} overflows 32 bits: the run outgrew the model's layout"
    );
    no as u32
}

#[derive(Clone, Debug)]
enum Shape {
    /// `level_base[i]`: first page of depth `i` (0 = root).
    Static {
        level_base: [u64; MAX_HEIGHT],
        level_nodes: [u64; MAX_HEIGHT],
    },
    /// Index `l` = distance above the leaves (0 = leaves), `l < height - 1`.
    PerDistrict {
        districts_per_node: [u64; MAX_HEIGHT],
        slots_per_node: [u64; MAX_HEIGHT],
        groups: [u64; MAX_HEIGHT],
        streams: u64,
    },
}

/// Geometry of one tree; immutable after load.
#[derive(Clone, Debug)]
pub struct Tree {
    pub table: Table,
    pub rows_per_leaf: u64,
    pub fanout: u64,
    pub height: usize,
    pub initial_rows: u64,
    pub initial_pages: u64,
    shape: Shape,
}

/// Per-page capacities for a page size and fill factor.
#[derive(Clone, Copy, Debug)]
pub struct PageBudget {
    pub usable_bytes: u64,
}

impl PageBudget {
    pub fn new(page_size_bytes: u32, leaf_fill_percent: u32) -> Self {
        let raw = u64::from(page_size_bytes).saturating_sub(PAGE_OVERHEAD_BYTES);
        Self {
            usable_bytes: raw * u64::from(leaf_fill_percent) / 100,
        }
    }

    fn rows_per_leaf(self, table: Table) -> u64 {
        (self.usable_bytes / table.entry_bytes()).max(1)
    }

    fn fanout(self, table: Table) -> u64 {
        (self.usable_bytes / (table.key_bytes() + NODE_POINTER_OVERHEAD_BYTES)).max(2)
    }
}

impl Tree {
    /// A tree whose `rows` sit in key order, laid out root first.
    pub fn new_static(table: Table, rows: u64, budget: PageBudget) -> Tree {
        let rows_per_leaf = budget.rows_per_leaf(table);
        let fanout = budget.fanout(table);
        // Node counts from the leaves up.
        let mut counts = [0u64; MAX_HEIGHT];
        let mut height = 1;
        counts[0] = rows.div_ceil(rows_per_leaf).max(1);
        while counts[height - 1] > 1 {
            assert!(height < MAX_HEIGHT, "{table:?} deeper than {MAX_HEIGHT} levels");
            counts[height] = counts[height - 1].div_ceil(fanout);
            height += 1;
        }
        let mut level_nodes = [0u64; MAX_HEIGHT];
        let mut level_base = [0u64; MAX_HEIGHT];
        let mut next = 0;
        for depth in 0..height {
            level_nodes[depth] = counts[height - 1 - depth];
            level_base[depth] = next;
            next += level_nodes[depth];
        }
        Tree {
            table,
            rows_per_leaf,
            fanout,
            height,
            initial_rows: rows,
            initial_pages: next,
            shape: Shape::Static {
                level_base,
                level_nodes,
            },
        }
    }

    /// A tree of `districts` key ranges of `rows_per_district` rows each,
    /// every range starting on its own leaf and growing at its right edge.
    pub fn new_per_district(table: Table, districts: u64, rows_per_district: u64, budget: PageBudget) -> Tree {
        let rows_per_leaf = budget.rows_per_leaf(table);
        let fanout = budget.fanout(table);
        let leaves_per_district = rows_per_district.div_ceil(rows_per_leaf).max(1);
        let mut count = districts * leaves_per_district;
        let mut height = 1;
        while count > 1 {
            count = count.div_ceil(fanout);
            height += 1;
        }
        let height = height.max(2);
        assert!(height <= MAX_HEIGHT, "{table:?} deeper than {MAX_HEIGHT} levels");
        let mut districts_per_node = [1u64; MAX_HEIGHT];
        let mut slots_per_node = [1u64; MAX_HEIGHT];
        let mut groups = [districts; MAX_HEIGHT];
        let mut initial_pages = 1; // the root
        let mut capacity = 1u64; // leaves under one node of level l
        for l in 0..height - 1 {
            if l > 0 {
                capacity = capacity.saturating_mul(fanout);
                let per_node = (capacity / leaves_per_district).clamp(1, districts);
                districts_per_node[l] = per_node;
                slots_per_node[l] = (capacity / per_node).max(1);
                groups[l] = districts.div_ceil(per_node);
            }
            initial_pages += groups[l] * leaves_per_district.div_ceil(slots_per_node[l]);
        }
        Tree {
            table,
            rows_per_leaf,
            fanout,
            height,
            initial_rows: districts * rows_per_district,
            initial_pages,
            shape: Shape::PerDistrict {
                districts_per_node,
                slots_per_node,
                groups,
                streams: height as u64 - 1,
            },
        }
    }

    pub fn space(&self) -> u32 {
        self.table.space()
    }

    /// Path to the leaf holding key ordinal `pos` (of district `district`
    /// for per-district trees; ignored otherwise).
    pub fn path(&self, district: u64, pos: u64) -> Path {
        let mut nos = [0u64; MAX_HEIGHT];
        let leaf_slot = pos / self.rows_per_leaf;
        match &self.shape {
            Shape::Static {
                level_base,
                level_nodes,
            } => {
                let leaves = level_nodes[self.height - 1];
                let mut idx = leaf_slot.min(leaves - 1);
                for depth in (0..self.height).rev() {
                    nos[depth] = level_base[depth] + idx;
                    idx /= self.fanout;
                }
            }
            Shape::PerDistrict { .. } => {
                for (depth, no) in nos.iter_mut().enumerate().take(self.height).skip(1) {
                    *no = self.district_page(self.height - 1 - depth, district, leaf_slot);
                }
            }
        }
        Path::from_page_nos(self.space(), &nos[..self.height])
    }

    /// Leaf slot (per district for per-district trees) of key ordinal `pos`.
    pub fn leaf_slot(&self, pos: u64) -> u64 {
        pos / self.rows_per_leaf
    }

    /// Page number of level `l` (0 = leaves) on the way to `leaf_slot` of
    /// `district`, in a per-district tree.
    fn district_page(&self, l: usize, district: u64, leaf_slot: u64) -> u64 {
        match &self.shape {
            Shape::PerDistrict {
                districts_per_node,
                slots_per_node,
                groups,
                streams,
                ..
            } => {
                let group = district / districts_per_node[l];
                let slot = leaf_slot / slots_per_node[l];
                1 + (slot * groups[l] + group) * streams + l as u64
            }
            Shape::Static { .. } => 0,
        }
    }

    /// One past the highest page number in use when no district's leaf slot
    /// exceeds `max_leaf_slot` (per-district trees) or, for static trees,
    /// after load.
    pub fn page_limit(&self, max_leaf_slot: u64) -> u64 {
        match &self.shape {
            Shape::Static { .. } => self.initial_pages,
            // Page numbers grow with slot and group: the bound is the last
            // group's node at the highest slot of each level.
            Shape::PerDistrict {
                slots_per_node,
                groups,
                streams,
                ..
            } => (0..self.height - 1)
                .map(|l| {
                    let slot = max_leaf_slot / slots_per_node[l];
                    1 + (slot * groups[l] + groups[l] - 1) * streams + l as u64 + 1
                })
                .max()
                .unwrap_or(1),
        }
    }

    /// Depth-indexed node counts and first pages of a static tree (for the
    /// global-append HISTORY tree's initial right edge).
    pub fn static_levels(&self) -> Option<([u64; MAX_HEIGHT], [u64; MAX_HEIGHT])> {
        match &self.shape {
            Shape::Static {
                level_base,
                level_nodes,
            } => Some((*level_base, *level_nodes)),
            Shape::PerDistrict { .. } => None,
        }
    }
}

/// Builds a path from explicit page numbers (HISTORY's right edge).
pub fn path_of(space: u32, page_nos: &[u64]) -> Path {
    Path::from_page_nos(space, page_nos)
}
