//! The five TPC-C transactions as page-reference sequences.
//!
//! Each row access is a root-to-leaf descent with latch coupling (fix the
//! child, then unfix the parent), shared latches on internal pages, and a
//! shared or exclusive latch on the leaf that is unfixed with the redo the
//! row change generated. Rows read or changed together on one leaf (a
//! range scan) share one fix. Statement order follows the transaction
//! profiles of clauses 2.4.2.2 (New-Order), 2.5.2.2 (Payment), 2.6.2.2
//! (Order-Status), 2.7.4.2 (Delivery) and 2.8.2.2 (Stock-Level).
//!
//! Redo estimate per change, modelled on InnoDB's compact-format redo
//! records: a 12-byte record header (type, space id, page number, offset),
//! a 40-byte index descriptor (InnoDB logs the index's field lengths with
//! each record of a compact-format page), then
//! - an in-place update: 13 bytes of DB_TRX_ID/DB_ROLL_PTR + 3 bytes per
//!   changed field + the changed bytes (e.g. STOCK in New-Order: 4 fields,
//!   10 bytes -> 87 bytes; a bad-credit customer's Payment adds the 500-byte
//!   C_DATA -> ~600 bytes);
//! - an insert: the whole entry (row + record overhead);
//! - a delete mark: 13 bytes;
//! - a split: page creation (60 bytes) plus a node-pointer insert on the
//!   parent, and 20 bytes to relink the old leaf.
//!
//! A rolled-back New-Order (1 %, an unused item id on its last line) has
//! already updated DISTRICT and STOCK and inserted ORDER, NEW_ORDER,
//! ORDER_LINE and index rows; rollback applies the undo, so each of those
//! leaves is fixed exclusively again and unfixed modified with the same
//! amount of redo (the compensation), in reverse order. Page splits are not
//! undone, as in InnoDB. The district's order counter is not advanced.

use std::ops::RangeInclusive;

use flushwise_core::PageId;
use flushwise_trace::{LatchMode, TraceRecord, TxnType};

use super::rng::{mix64, nurand, Rng64, SplitMix64};
use super::schema::{
    path_of, Path, Table, CUSTOMERS_PER_DISTRICT, CUSTOMERS_PER_LAST_NAME, DISTRICTS_PER_WAREHOUSE,
    FIRST_INITIAL_NEW_ORDER, INITIAL_ORDERS_PER_DISTRICT, ITEMS, ORDER_LINE_SLOTS_PER_ORDER, STOCK_PER_WAREHOUSE,
};
use super::{district_index, TpccModel};

const REDO_RECORD_HEADER_BYTES: u32 = 12;
const REDO_INDEX_DESCRIPTOR_BYTES: u32 = 40;
const REDO_MVCC_FIELDS_BYTES: u32 = 13;
const REDO_PER_FIELD_BYTES: u32 = 3;
const REDO_PAGE_CREATE_BYTES: u32 = 60;
const REDO_PAGE_LINK_BYTES: u32 = 20;
/// C_DATA rewritten by Payment for bad-credit customers (clause 2.5.2.2).
const C_DATA_BYTES: u32 = 500;
/// Share of customers with C_CREDIT = "BC" (clause 4.3.3.1).
const BAD_CREDIT_PERCENT: u64 = 10;
/// Stock-Level examines the district's last 20 orders (clause 2.8.2.2).
const STOCK_LEVEL_ORDERS: u64 = 20;

const fn update_redo(fields: u32, changed_bytes: u32) -> u32 {
    REDO_RECORD_HEADER_BYTES
        + REDO_INDEX_DESCRIPTOR_BYTES
        + REDO_MVCC_FIELDS_BYTES
        + REDO_PER_FIELD_BYTES * fields
        + changed_bytes
}

const fn insert_redo(table: Table) -> u32 {
    REDO_RECORD_HEADER_BYTES + REDO_INDEX_DESCRIPTOR_BYTES + table.entry_bytes() as u32
}

const DELETE_MARK_REDO: u32 = REDO_RECORD_HEADER_BYTES + REDO_INDEX_DESCRIPTOR_BYTES + REDO_MVCC_FIELDS_BYTES;

const fn node_pointer_redo(table: Table) -> u32 {
    REDO_RECORD_HEADER_BYTES + REDO_INDEX_DESCRIPTOR_BYTES + table.key_bytes() as u32 + 9
}

/// Appends one agent's records.
pub(crate) struct Emitter<'a> {
    pub agent: u32,
    pub out: &'a mut Vec<TraceRecord>,
}

impl Emitter<'_> {
    fn fix(&mut self, page: PageId, latch: LatchMode) {
        self.out.push(TraceRecord::fix(self.agent, page, latch));
    }

    /// Modified iff `redo_bytes > 0`.
    fn unfix(&mut self, page: PageId, latch: LatchMode, redo_bytes: u32) {
        self.out
            .push(TraceRecord::unfix(self.agent, page, latch, redo_bytes > 0, redo_bytes));
    }

    fn begin(&mut self, txn_type: TxnType) {
        self.out.push(TraceRecord::txn_begin(self.agent, txn_type));
    }

    fn commit(&mut self, txn_type: TxnType) {
        self.out.push(TraceRecord::txn_commit(self.agent, txn_type));
    }

    fn rollback(&mut self, txn_type: TxnType) {
        self.out.push(TraceRecord::txn_rollback(self.agent, txn_type));
    }

    /// Root to leaf with latch coupling; returns with the leaf fixed in
    /// `leaf_latch` and everything above it unfixed.
    fn descend(&mut self, path: &Path, leaf_latch: LatchMode) -> PageId {
        let pages = path.pages();
        for (i, &page) in pages.iter().enumerate() {
            let latch = if i + 1 == pages.len() {
                leaf_latch
            } else {
                LatchMode::Shared
            };
            self.fix(page, latch);
            if i > 0 {
                self.unfix(pages[i - 1], LatchMode::Shared, 0);
            }
        }
        path.leaf()
    }

    /// One row access: descend, then unfix the leaf with `redo_bytes`.
    fn access(&mut self, path: &Path, latch: LatchMode, redo_bytes: u32) {
        let leaf = self.descend(path, latch);
        self.unfix(leaf, latch, redo_bytes);
    }

    /// Right-edge split: the row goes to the first row of a new leaf.
    /// `old` and `new` are the paths to the full leaf and the new one; pages
    /// of `new` that differ from `old` are newly allocated. Returns how many.
    fn split(&mut self, old: &Path, new: &Path, row_redo: u32, pointer_redo: u32) -> u64 {
        let (old, new) = (old.pages(), new.pages());
        debug_assert_eq!(old.len(), new.len());
        let h = old.len();
        let first_new = (1..h).find(|&i| old[i] != new[i]).unwrap_or(h - 1).max(1);
        // Descend to the common parent, which takes the new node pointer.
        for i in 0..first_new {
            let latch = if i + 1 == first_new {
                LatchMode::Exclusive
            } else {
                LatchMode::Shared
            };
            self.fix(old[i], latch);
            if i > 0 {
                self.unfix(old[i - 1], LatchMode::Shared, 0);
            }
        }
        self.fix(old[h - 1], LatchMode::Exclusive);
        for &page in &new[first_new..] {
            self.fix(page, LatchMode::Exclusive);
        }
        self.unfix(old[h - 1], LatchMode::Exclusive, REDO_PAGE_LINK_BYTES);
        self.unfix(new[h - 1], LatchMode::Exclusive, REDO_PAGE_CREATE_BYTES + row_redo);
        for &page in new[first_new..h - 1].iter().rev() {
            self.unfix(page, LatchMode::Exclusive, REDO_PAGE_CREATE_BYTES + pointer_redo);
        }
        self.unfix(old[first_new - 1], LatchMode::Exclusive, pointer_redo);
        (h - first_new) as u64
    }
}

/// Which per-district counter tracks a tree's rightmost leaf.
#[derive(Clone, Copy)]
enum RightEdge {
    Order,
    NewOrder,
    OrderLine,
}

/// The attributes of order (district, o_id), re-derivable at any time.
struct OrderAttrs {
    customer: u64,
    line_count: u64,
    initial: bool,
    items: SplitMix64,
}

impl TpccModel {
    fn path(&self, table: Table, district: u64, pos: u64) -> Path {
        self.tree(table).path(district, pos)
    }

    fn customer_path(&self, district: u64, c_id: u64) -> Path {
        self.path(Table::Customer, 0, district * CUSTOMERS_PER_DISTRICT + c_id - 1)
    }

    fn stock_path(&self, w_id: u64, i_id: u64) -> Path {
        self.path(Table::Stock, 0, (w_id - 1) * STOCK_PER_WAREHOUSE + i_id - 1)
    }

    fn keyed(&self, a: u64, b: u64, tag: u64) -> SplitMix64 {
        SplitMix64::new(mix64(self.config.seed ^ mix64(a ^ mix64(b ^ tag))))
    }

    /// Customer, line count and items of an order: uniform for the loaded
    /// orders (clause 4.3.3.1), NURand for those the run creates (2.4.1).
    fn order_attrs(&self, district: u64, o_id: u64) -> OrderAttrs {
        let mut r = self.keyed(district, o_id, 0x0_0DE5);
        let initial = o_id <= INITIAL_ORDERS_PER_DISTRICT;
        let customer = if initial {
            r.between(1, CUSTOMERS_PER_DISTRICT)
        } else {
            nurand(&mut r, 1023, self.constants.c_id, 1, CUSTOMERS_PER_DISTRICT)
        };
        let line_count = r.between(5, 15);
        OrderAttrs {
            customer,
            line_count,
            initial,
            items: r,
        }
    }

    fn next_item(&self, attrs: &mut OrderAttrs) -> u64 {
        if attrs.initial {
            attrs.items.between(1, ITEMS)
        } else {
            nurand(&mut attrs.items, 8191, self.constants.ol_i_id, 1, ITEMS)
        }
    }

    fn bad_credit(&self, district: u64, c_id: u64) -> bool {
        self.keyed(district, c_id, 0xBC).below(100) < BAD_CREDIT_PERCENT
    }

    /// Inserts key ordinal `pos` into a per-district tree, splitting when it
    /// starts a new leaf. Returns the leaf path the row went to.
    fn insert_right(&mut self, e: &mut Emitter<'_>, table: Table, edge: RightEdge, district: u64, pos: u64) -> Path {
        let redo = insert_redo(table);
        let tree = self.tree(table);
        let slot = tree.leaf_slot(pos);
        let state = &self.districts[district as usize];
        let last_slot = match edge {
            RightEdge::Order => state.order_last_slot,
            RightEdge::NewOrder => state.new_order_last_slot,
            RightEdge::OrderLine => state.order_line_last_slot,
        };
        let path = tree.path(district, pos);
        if slot <= last_slot {
            e.access(&path, LatchMode::Exclusive, redo);
            return path;
        }
        let old = tree.path(district, last_slot * tree.rows_per_leaf);
        let allocated = e.split(&old, &path, redo, node_pointer_redo(table));
        self.stats.pages_allocated += allocated;
        let state = &mut self.districts[district as usize];
        match edge {
            RightEdge::Order => state.order_last_slot = slot,
            RightEdge::NewOrder => state.new_order_last_slot = slot,
            RightEdge::OrderLine => state.order_line_last_slot = slot,
        }
        path
    }

    /// Appends one HISTORY row at the global right edge.
    fn history_insert(&mut self, e: &mut Emitter<'_>) {
        let table = Table::History;
        let (space, h, rows_per_leaf, fanout) = {
            let t = self.tree(table);
            (t.space(), t.height, t.rows_per_leaf, t.fanout)
        };
        let edge = &mut self.history;
        let old = path_of(space, &edge.right_path[..h]);
        if edge.rows % rows_per_leaf != 0 || h == 1 {
            edge.rows += 1;
            e.access(&old, LatchMode::Exclusive, insert_redo(table));
            return;
        }
        // The rightmost leaf is full: allocate a leaf, and a new rightmost
        // node on each level whose rightmost node is full (the root grows
        // wide instead of tall; see the schema's simplifications).
        edge.right_path[h - 1] = edge.next_free_page;
        edge.next_free_page += 1;
        for depth in (0..h - 1).rev() {
            if depth == 0 || edge.right_children[depth] < fanout {
                edge.right_children[depth] += 1;
                break;
            }
            edge.right_path[depth] = edge.next_free_page;
            edge.next_free_page += 1;
            edge.right_children[depth] = 1;
        }
        edge.rows += 1;
        let new = path_of(space, &edge.right_path[..h]);
        let allocated = e.split(&old, &new, insert_redo(table), node_pointer_redo(table));
        self.stats.pages_allocated += allocated;
    }

    /// Reads rows `lo..=hi` of one tree's key order, one fix per leaf,
    /// moving right by fixing the next leaf before releasing the current.
    fn scan(
        &self,
        e: &mut Emitter<'_>,
        table: Table,
        district: u64,
        keys: RangeInclusive<u64>,
        latch: LatchMode,
        redo_per_row: u32,
    ) {
        let (lo, hi) = keys.into_inner();
        let tree = self.tree(table);
        let mut slot = tree.leaf_slot(lo);
        let mut leaf = e.descend(&tree.path(district, lo), latch);
        let mut rows = 0u32;
        for pos in lo..=hi {
            if tree.leaf_slot(pos) != slot {
                slot = tree.leaf_slot(pos);
                let next = tree.path(district, pos).leaf();
                if next != leaf {
                    e.fix(next, latch);
                    e.unfix(leaf, latch, redo_per_row * rows);
                    leaf = next;
                    rows = 0;
                }
            }
            rows += 1;
        }
        e.unfix(leaf, latch, redo_per_row * rows);
    }

    /// Clause 2.5.2.2 / 2.6.2.2 by last name: scan the name index for the
    /// name's entries, read each customer row, pick the middle one (position
    /// ceil(n/2) in C_FIRST order). Each of the 1,000 names owns
    /// `CUSTOMERS_PER_LAST_NAME` consecutive index entries: customer
    /// `n + 1` (loaded with name n) and two drawn from 1001..=3000.
    fn customer_by_last_name(&self, e: &mut Emitter<'_>, district: u64, rng: &mut impl Rng64) -> u64 {
        let n = nurand(rng, 255, self.constants.c_last_run, 0, 999);
        let rank = u64::from(self.last_name_rank[n as usize]);
        let base = district * CUSTOMERS_PER_DISTRICT + rank * CUSTOMERS_PER_LAST_NAME;
        self.scan(
            e,
            Table::CustomerByLastName,
            0,
            base..=base + CUSTOMERS_PER_LAST_NAME - 1,
            LatchMode::Shared,
            0,
        );
        let mut chosen = 0;
        for j in 0..CUSTOMERS_PER_LAST_NAME {
            let c_id = if j == 0 {
                n + 1
            } else {
                1001 + self.keyed(district, n, 0x1A57 + j).below(2000)
            };
            e.access(&self.customer_path(district, c_id), LatchMode::Shared, 0);
            if j == CUSTOMERS_PER_LAST_NAME.div_ceil(2) - 1 {
                chosen = c_id;
            }
        }
        chosen
    }

    fn other_warehouse(&self, w_id: u64, rng: &mut impl Rng64) -> u64 {
        let w = u64::from(self.config.warehouses);
        let r = rng.between(1, w - 1);
        if r >= w_id {
            r + 1
        } else {
            r
        }
    }

    pub(crate) fn new_order(&mut self, e: &mut Emitter<'_>, w_id: u32, rng: &mut impl Rng64) {
        let txn = TxnType::NewOrder;
        let d_id = rng.between(1, DISTRICTS_PER_WAREHOUSE) as u32;
        let g = district_index(w_id, d_id);
        let w = u64::from(w_id);
        let o_id = self.districts[g as usize].next_o_id;
        let mut attrs = self.order_attrs(g, o_id);
        let rollback = rng.percent(1);
        let mut undo: Vec<(Path, u32)> = Vec::with_capacity(40);
        e.begin(txn);

        e.access(&self.path(Table::Warehouse, 0, w - 1), LatchMode::Shared, 0);
        let district = self.path(Table::District, 0, g);
        let redo = update_redo(1, 4); // D_NEXT_O_ID
        e.access(&district, LatchMode::Exclusive, redo);
        undo.push((district, redo));
        e.access(&self.customer_path(g, attrs.customer), LatchMode::Shared, 0);

        let order = self.insert_right(e, Table::Order, RightEdge::Order, g, o_id - 1);
        undo.push((order, insert_redo(Table::Order)));
        let new_order = self.insert_right(
            e,
            Table::NewOrder,
            RightEdge::NewOrder,
            g,
            o_id - FIRST_INITIAL_NEW_ORDER,
        );
        undo.push((new_order, insert_redo(Table::NewOrder)));
        let by_customer = self.path(
            Table::OrderByCustomer,
            0,
            g * CUSTOMERS_PER_DISTRICT + attrs.customer - 1,
        );
        e.access(&by_customer, LatchMode::Exclusive, insert_redo(Table::OrderByCustomer));
        undo.push((by_customer, insert_redo(Table::OrderByCustomer)));

        for ol in 1..=attrs.line_count {
            self.stats.order_lines += 1;
            if rollback && ol == attrs.line_count {
                // Item lookup finds no row past the last item; undo.
                e.access(&self.path(Table::Item, 0, ITEMS), LatchMode::Shared, 0);
                for (path, redo) in undo.iter().rev() {
                    e.access(path, LatchMode::Exclusive, *redo);
                }
                e.rollback(txn);
                self.stats.new_order_rollbacks += 1;
                return;
            }
            let i_id = self.next_item(&mut attrs);
            e.access(&self.path(Table::Item, 0, i_id - 1), LatchMode::Shared, 0);
            let supply_w = if self.config.warehouses > 1 && rng.percent(1) {
                self.stats.remote_order_lines += 1;
                self.other_warehouse(w, rng)
            } else {
                w
            };
            let stock = self.stock_path(supply_w, i_id);
            // S_QUANTITY, S_YTD, S_ORDER_CNT, S_REMOTE_CNT.
            let redo = update_redo(4, 10);
            e.access(&stock, LatchMode::Exclusive, redo);
            undo.push((stock, redo));
            let line = self.insert_right(
                e,
                Table::OrderLine,
                RightEdge::OrderLine,
                g,
                (o_id - 1) * ORDER_LINE_SLOTS_PER_ORDER + ol - 1,
            );
            undo.push((line, insert_redo(Table::OrderLine)));
        }
        self.districts[g as usize].next_o_id += 1;
        e.commit(txn);
    }

    pub(crate) fn payment(&mut self, e: &mut Emitter<'_>, w_id: u32, rng: &mut impl Rng64) {
        let txn = TxnType::Payment;
        let w = u64::from(w_id);
        let d_id = rng.between(1, DISTRICTS_PER_WAREHOUSE) as u32;
        let g = district_index(w_id, d_id);
        let (c_w, c_d) = if self.config.warehouses > 1 && rng.percent(15) {
            self.stats.remote_payments += 1;
            (self.other_warehouse(w, rng), rng.between(1, DISTRICTS_PER_WAREHOUSE))
        } else {
            (w, u64::from(d_id))
        };
        let c_g = district_index(c_w as u32, c_d as u32);
        let by_name = rng.percent(60);
        e.begin(txn);
        e.access(
            &self.path(Table::Warehouse, 0, w - 1),
            LatchMode::Exclusive,
            update_redo(1, 8), // W_YTD
        );
        e.access(
            &self.path(Table::District, 0, g),
            LatchMode::Exclusive,
            update_redo(1, 8), // D_YTD
        );
        let c_id = if by_name {
            self.stats.payments_by_last_name += 1;
            self.customer_by_last_name(e, c_g, rng)
        } else {
            nurand(rng, 1023, self.constants.c_id, 1, CUSTOMERS_PER_DISTRICT)
        };
        // C_BALANCE, C_YTD_PAYMENT, C_PAYMENT_CNT (+ C_DATA if bad credit).
        let mut redo = update_redo(3, 18);
        if self.bad_credit(c_g, c_id) {
            redo += REDO_PER_FIELD_BYTES + C_DATA_BYTES;
        }
        e.access(&self.customer_path(c_g, c_id), LatchMode::Exclusive, redo);
        self.history_insert(e);
        e.commit(txn);
    }

    pub(crate) fn order_status(&mut self, e: &mut Emitter<'_>, w_id: u32, rng: &mut impl Rng64) {
        let txn = TxnType::OrderStatus;
        let d_id = rng.between(1, DISTRICTS_PER_WAREHOUSE) as u32;
        let g = district_index(w_id, d_id);
        let by_name = rng.percent(60);
        e.begin(txn);
        let c_id = if by_name {
            self.stats.order_status_by_last_name += 1;
            self.customer_by_last_name(e, g, rng)
        } else {
            let c_id = nurand(rng, 1023, self.constants.c_id, 1, CUSTOMERS_PER_DISTRICT);
            e.access(&self.customer_path(g, c_id), LatchMode::Shared, 0);
            c_id
        };
        // The customer's newest order via (w, d, c, o_id) descending.
        e.access(
            &self.path(Table::OrderByCustomer, 0, g * CUSTOMERS_PER_DISTRICT + c_id - 1),
            LatchMode::Shared,
            0,
        );
        // Which order that is is not stored: a customer's last order lies on
        // average one district-cycle (3,000 orders) back, drawn uniformly in
        // [0, 6000); past the loaded range, the customer's loaded order.
        let newest = self.districts[g as usize].next_o_id - 1;
        let back = rng.below(2 * CUSTOMERS_PER_DISTRICT);
        let o_id = if newest > INITIAL_ORDERS_PER_DISTRICT + back {
            newest - back
        } else {
            1 + self.keyed(g, c_id, 0x01D).below(INITIAL_ORDERS_PER_DISTRICT)
        };
        e.access(&self.path(Table::Order, g, o_id - 1), LatchMode::Shared, 0);
        let lines = self.order_attrs(g, o_id).line_count;
        let lo = (o_id - 1) * ORDER_LINE_SLOTS_PER_ORDER;
        self.scan(e, Table::OrderLine, g, lo..=lo + lines - 1, LatchMode::Shared, 0);
        e.commit(txn);
    }

    pub(crate) fn delivery(&mut self, e: &mut Emitter<'_>, w_id: u32, rng: &mut impl Rng64) {
        let txn = TxnType::Delivery;
        let _carrier = rng.between(1, 10); // O_CARRIER_ID: no page effect
        e.begin(txn);
        for d_id in 1..=DISTRICTS_PER_WAREHOUSE as u32 {
            let g = district_index(w_id, d_id);
            let state = self.districts[g as usize];
            let o_id = state.oldest_new_order;
            if o_id >= state.next_o_id {
                // No undelivered order: the district is skipped (2.7.4.2).
                self.stats.deliveries_skipped_districts += 1;
                continue;
            }
            // Oldest NEW_ORDER row: find it and delete it. Deleting a leaf's
            // last row frees the leaf and removes its node pointer.
            let tree = self.tree(Table::NewOrder);
            let pos = o_id - FIRST_INITIAL_NEW_ORDER;
            let path = tree.path(g, pos);
            e.access(&path, LatchMode::Exclusive, DELETE_MARK_REDO);
            if (pos + 1) % tree.rows_per_leaf == 0 {
                if let Some(parent) = path.parent() {
                    e.access(&parent, LatchMode::Exclusive, DELETE_MARK_REDO);
                    self.stats.pages_freed += 1;
                }
            }
            // ORDER: read O_C_ID, set O_CARRIER_ID.
            e.access(
                &self.path(Table::Order, g, o_id - 1),
                LatchMode::Exclusive,
                update_redo(1, 1),
            );
            // ORDER_LINE: set OL_DELIVERY_D on every line, sum OL_AMOUNT.
            let attrs = self.order_attrs(g, o_id);
            let lo = (o_id - 1) * ORDER_LINE_SLOTS_PER_ORDER;
            self.scan(
                e,
                Table::OrderLine,
                g,
                lo..=lo + attrs.line_count - 1,
                LatchMode::Exclusive,
                update_redo(1, 8),
            );
            // CUSTOMER: C_BALANCE, C_DELIVERY_CNT.
            e.access(
                &self.customer_path(g, attrs.customer),
                LatchMode::Exclusive,
                update_redo(2, 10),
            );
            self.districts[g as usize].oldest_new_order += 1;
        }
        e.commit(txn);
    }

    pub(crate) fn stock_level(&mut self, e: &mut Emitter<'_>, w_id: u32, rng: &mut impl Rng64) {
        let txn = TxnType::StockLevel;
        let d_id = rng.between(1, DISTRICTS_PER_WAREHOUSE) as u32;
        let _threshold = rng.between(10, 20); // compared in memory
        let g = district_index(w_id, d_id);
        let w = u64::from(w_id);
        e.begin(txn);
        e.access(&self.path(Table::District, 0, g), LatchMode::Shared, 0);
        let next = self.districts[g as usize].next_o_id;
        let first = next.saturating_sub(STOCK_LEVEL_ORDERS).max(1);
        let last = next - 1;
        let lo = (first - 1) * ORDER_LINE_SLOTS_PER_ORDER;
        let hi = (last - 1) * ORDER_LINE_SLOTS_PER_ORDER + self.order_attrs(g, last).line_count - 1;
        self.scan(e, Table::OrderLine, g, lo..=hi, LatchMode::Shared, 0);
        // One STOCK probe per order line (the join of 2.8.2.2).
        for o_id in first..=last {
            let mut attrs = self.order_attrs(g, o_id);
            for _ in 0..attrs.line_count {
                let i_id = self.next_item(&mut attrs);
                e.access(&self.stock_path(w, i_id), LatchMode::Shared, 0);
            }
        }
        e.commit(txn);
    }
}
