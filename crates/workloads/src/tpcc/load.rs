//! The initial population (clause 4.3.3.1) and the load marker.
//!
//! Each index is one load job whose rows come out in ascending key order
//! (generated per district and sorted where the key is not the generation
//! order, as for customers by last name), handed to
//! [`TpccStore::bulk_load`]. Jobs run on `threads` worker threads, largest
//! first. Every row is a pure function of `(seed, table, warehouse,
//! district)`: each (table, w, d) chunk draws from its own seeded stream
//! ([`random::stream`]), so the data do not depend on the thread count or
//! the order the jobs run in; the customers of a district (and the orders
//! with their lines) are generated afresh by each job that needs them. With
//! `load_time_us` set, the load is byte-for-byte deterministic; otherwise
//! the dates (c_since, h_date, o_entry_d, ol_delivery_d) are the load's
//! wall-clock time, as the spec asks.
//!
//! The load marker: `meta` gets `load_started` (warehouses, seed, C-Load
//! constants) before any row and `load_complete` after the last one. A
//! database without `load_complete` is refused by run, check and export
//! ([`require_loaded`]); `prepare` refuses a database that has TPC-C
//! indexes already.
//!
//! Constants are clause 4.3.3.1: 100,000 items; per warehouse 100,000
//! stock rows and 10 districts; per district 3,000 customers (C_LAST from
//! the syllables of c_id − 1 for the first 1,000, of NURand(255, 0, 999)
//! with C-Load for the rest), one history row per customer, 3,000 orders
//! over a random permutation of the customers with 5–15 lines, orders
//! 2,101–3,000 undelivered (in NEW_ORDER, o_carrier_id and ol_delivery_d
//! NULL, ol_amount random) and the others delivered (ol_amount 0).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::codec::{RowReader, RowWriter};
use super::random::{self, astring, last_name, nstring, nurand, zip, NurandConstants, Rng64, A_C_LAST};
use super::schema::*;
use super::store::{TpccStore, TpccTxn};
use super::TpccError;

/// What to load.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    pub warehouses: u32,
    /// Worker threads; 0 = the number of CPUs.
    pub threads: usize,
    pub seed: u64,
    /// The load's "current date/time" in microseconds since the epoch;
    /// `None` = the wall clock at the start of the load.
    pub load_time_us: Option<u64>,
}

impl Default for LoadConfig {
    fn default() -> Self {
        Self {
            warehouses: 1,
            threads: 0,
            seed: 1,
            load_time_us: None,
        }
    }
}

/// Progress of a load, reported every few thousand rows from a worker.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LoadProgress {
    /// Rows loaded so far, every index together.
    pub rows_loaded: u64,
    /// Expected rows in all (order lines are random: this is their mean).
    pub rows_expected: u64,
    pub indexes_done: usize,
    pub indexes_total: usize,
}

/// Rows loaded into one index.
#[derive(Clone, Debug, serde::Serialize)]
pub struct IndexRows {
    pub index: &'static str,
    pub rows: u64,
}

/// What a load did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LoadReport {
    pub warehouses: u32,
    pub threads: usize,
    pub seed: u64,
    pub rows_loaded: u64,
    pub per_index: Vec<IndexRows>,
    pub elapsed_s: f64,
    pub rows_per_s: f64,
    pub constants: NurandConstants,
}

/// The `meta` record of a load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LoadMarker {
    pub warehouses: u32,
    pub seed: u64,
    pub load_time_us: u64,
    /// C-Load of C_LAST (and the load's other C values, unused at load).
    pub constants: NurandConstants,
}

pub(crate) const META_LOAD_STARTED: &[u8] = b"load_started";
pub(crate) const META_LOAD_COMPLETE: &[u8] = b"load_complete";

impl LoadMarker {
    fn encode(&self) -> Vec<u8> {
        let mut w = RowWriter::with_capacity(32);
        w.u32(self.warehouses)
            .u64(self.seed)
            .u64(self.load_time_us)
            .u32(self.constants.c_last)
            .u32(self.constants.c_id)
            .u32(self.constants.ol_i_id);
        w.finish()
    }
    fn decode(b: &[u8]) -> Result<Self, TpccError> {
        let mut r = RowReader::new("meta", b);
        let m = Self {
            warehouses: r.u32()?,
            seed: r.u64()?,
            load_time_us: r.u64()?,
            constants: NurandConstants {
                c_last: r.u32()?,
                c_id: r.u32()?,
                ol_i_id: r.u32()?,
            },
        };
        r.finish()?;
        Ok(m)
    }
}

/// The load state of a store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadState {
    /// No TPC-C indexes (or no load started).
    Empty,
    /// A load started but did not finish.
    Partial(LoadMarker),
    Complete(LoadMarker),
}

/// Reads the load marker.
pub fn load_state(store: &impl TpccStore) -> Result<LoadState, TpccError> {
    if !store.has_index(Index::Meta)? {
        return Ok(LoadState::Empty);
    }
    let mut txn = store.begin();
    let complete = txn.get(Index::Meta, META_LOAD_COMPLETE)?;
    let started = txn.get(Index::Meta, META_LOAD_STARTED)?;
    txn.commit()?;
    Ok(match (complete, started) {
        (Some(c), _) => LoadState::Complete(LoadMarker::decode(&c)?),
        (None, Some(s)) => LoadState::Partial(LoadMarker::decode(&s)?),
        (None, None) => LoadState::Empty,
    })
}

/// The marker of a complete load, or an error that says what is wrong.
pub fn require_loaded(store: &impl TpccStore) -> Result<LoadMarker, TpccError> {
    match load_state(store)? {
        LoadState::Complete(m) => Ok(m),
        LoadState::Partial(m) => Err(TpccError::NotLoaded {
            reason: format!(
                "the TPC-C load of {} warehouse(s) did not complete (no completion marker): \
                 the database is half-loaded; delete it and run prepare again",
                m.warehouses
            ),
        }),
        LoadState::Empty => Err(TpccError::NotLoaded {
            reason: "no TPC-C database here: run prepare first".into(),
        }),
    }
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// Stream tags of [`random::stream`], one per kind of generated data.
const TAG_ITEM: u64 = 1;
const TAG_WAREHOUSE: u64 = 2;
const TAG_STOCK: u64 = 3;
const TAG_DISTRICT: u64 = 4;
const TAG_CUSTOMER: u64 = 5;
const TAG_HISTORY: u64 = 6;
const TAG_ORDER: u64 = 7;

fn address<R: Rng64>(rng: &mut R) -> Address {
    Address {
        street_1: astring(rng, 10, 20),
        street_2: astring(rng, 10, 20),
        city: astring(rng, 10, 20),
        state: astring(rng, 2, 2),
        zip: zip(rng),
    }
}

/// Everything a row generator needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gen {
    pub seed: u64,
    pub warehouses: u32,
    pub now_us: u64,
    pub c_load: NurandConstants,
}

type Rows = Box<dyn Iterator<Item = (Vec<u8>, Vec<u8>)> + Send>;

impl Gen {
    fn districts(self) -> impl Iterator<Item = (u32, u8)> {
        (1..=self.warehouses).flat_map(|w| (1..=DISTRICTS_PER_WAREHOUSE).map(move |d| (w, d)))
    }

    pub fn items(self) -> impl Iterator<Item = Item> {
        let mut rng = random::stream(self.seed, &[TAG_ITEM]);
        (1..=ITEMS).map(move |i_id| Item {
            i_id,
            i_im_id: rng.between(1, 10_000) as u32,
            i_name: astring(&mut rng, 14, 24),
            i_price: rng.between(100, 10_000) as i64,
            i_data: random::data_string(&mut rng),
        })
    }

    pub fn warehouse(self, w_id: u32) -> Warehouse {
        let mut rng = random::stream(self.seed, &[TAG_WAREHOUSE, u64::from(w_id)]);
        Warehouse {
            w_id,
            w_name: astring(&mut rng, 6, 10),
            w_address: address(&mut rng),
            w_tax: random::tax(&mut rng),
            w_ytd: 30_000_000,
        }
    }

    pub fn stock(self, w_id: u32) -> impl Iterator<Item = Stock> {
        let mut rng = random::stream(self.seed, &[TAG_STOCK, u64::from(w_id)]);
        (1..=ITEMS).map(move |s_i_id| Stock {
            s_i_id,
            s_w_id: w_id,
            s_quantity: rng.between(10, 100) as i32,
            s_dist: std::array::from_fn(|_| astring(&mut rng, 24, 24)),
            s_ytd: 0,
            s_order_cnt: 0,
            s_remote_cnt: 0,
            s_data: random::data_string(&mut rng),
        })
    }

    pub fn district(self, w_id: u32, d_id: u8) -> District {
        let mut rng = random::stream(self.seed, &[TAG_DISTRICT, u64::from(w_id), u64::from(d_id)]);
        District {
            d_id,
            d_w_id: w_id,
            d_name: astring(&mut rng, 6, 10),
            d_address: address(&mut rng),
            d_tax: random::tax(&mut rng),
            d_ytd: 3_000_000,
            d_next_o_id: INITIAL_ORDERS_PER_DISTRICT + 1,
        }
    }

    pub fn customers(self, w_id: u32, d_id: u8) -> Vec<Customer> {
        let mut rng = random::stream(self.seed, &[TAG_CUSTOMER, u64::from(w_id), u64::from(d_id)]);
        (1..=CUSTOMERS_PER_DISTRICT)
            .map(|c_id| {
                let name_no = if c_id <= 1_000 {
                    c_id - 1
                } else {
                    nurand(&mut rng, A_C_LAST, u64::from(self.c_load.c_last), 0, 999) as u32
                };
                Customer {
                    c_id,
                    c_d_id: d_id,
                    c_w_id: w_id,
                    c_first: astring(&mut rng, 8, 16),
                    c_middle: "OE".into(),
                    c_last: last_name(name_no),
                    c_address: address(&mut rng),
                    c_phone: nstring(&mut rng, 16, 16),
                    c_since: self.now_us,
                    c_credit: if rng.percent(10) { "BC" } else { "GC" }.into(),
                    c_credit_lim: 5_000_000,
                    c_discount: rng.between(0, 5_000) as u16,
                    c_balance: -1_000,
                    c_ytd_payment: 1_000,
                    c_payment_cnt: 1,
                    c_delivery_cnt: 0,
                    c_data: astring(&mut rng, 300, 500),
                }
            })
            .collect()
    }

    pub fn history(self, w_id: u32, d_id: u8) -> impl Iterator<Item = History> {
        let mut rng = random::stream(self.seed, &[TAG_HISTORY, u64::from(w_id), u64::from(d_id)]);
        let now = self.now_us;
        (1..=CUSTOMERS_PER_DISTRICT).map(move |c_id| History {
            h_c_id: c_id,
            h_c_d_id: d_id,
            h_c_w_id: w_id,
            h_d_id: d_id,
            h_w_id: w_id,
            h_date: now,
            h_amount: 1_000,
            h_data: astring(&mut rng, 12, 24),
        })
    }

    /// The orders of a district with their lines, by o_id.
    pub fn orders(self, w_id: u32, d_id: u8) -> Vec<(Order, Vec<OrderLine>)> {
        let mut rng = random::stream(self.seed, &[TAG_ORDER, u64::from(w_id), u64::from(d_id)]);
        let mut customers: Vec<u32> = (1..=CUSTOMERS_PER_DISTRICT).collect();
        for i in (1..customers.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            customers.swap(i, j);
        }
        (1..=INITIAL_ORDERS_PER_DISTRICT)
            .map(|o_id| {
                let delivered = o_id < FIRST_UNDELIVERED_ORDER;
                let o_ol_cnt = rng.between(u64::from(ORDER_LINES_MIN), u64::from(ORDER_LINES_MAX)) as u8;
                let order = Order {
                    o_id,
                    o_d_id: d_id,
                    o_w_id: w_id,
                    o_c_id: customers[(o_id - 1) as usize],
                    o_entry_d: self.now_us,
                    o_carrier_id: delivered.then(|| rng.between(1, 10) as u8),
                    o_ol_cnt,
                    o_all_local: 1,
                };
                let lines = (1..=o_ol_cnt)
                    .map(|ol_number| OrderLine {
                        ol_o_id: o_id,
                        ol_d_id: d_id,
                        ol_w_id: w_id,
                        ol_number,
                        ol_i_id: rng.between(1, u64::from(ITEMS)) as u32,
                        ol_supply_w_id: w_id,
                        ol_delivery_d: delivered.then_some(self.now_us),
                        ol_quantity: 5,
                        ol_amount: if delivered { 0 } else { rng.between(1, 999_999) as i64 },
                        ol_dist_info: astring(&mut rng, 24, 24),
                    })
                    .collect();
                (order, lines)
            })
            .collect()
    }

    /// The rows of `index` in ascending key order.
    pub fn rows(self, index: Index) -> Rows {
        match index {
            Index::Item => Box::new(self.items().map(|r| (r.key(), r.encode()))),
            Index::Warehouse => Box::new((1..=self.warehouses).map(move |w| {
                let r = self.warehouse(w);
                (r.key(), r.encode())
            })),
            Index::Stock => {
                Box::new((1..=self.warehouses).flat_map(move |w| self.stock(w).map(|r| (r.key(), r.encode()))))
            }
            Index::District => Box::new(self.districts().map(move |(w, d)| {
                let r = self.district(w, d);
                (r.key(), r.encode())
            })),
            Index::Customer => Box::new(
                self.districts()
                    .flat_map(move |(w, d)| self.customers(w, d).into_iter().map(|r| (r.key(), r.encode()))),
            ),
            Index::CustomerByName => Box::new(self.districts().flat_map(move |(w, d)| {
                let mut keys: Vec<Vec<u8>> = self.customers(w, d).iter().map(Customer::name_key).collect();
                keys.sort_unstable();
                keys.into_iter().map(|k| (k, Vec::new()))
            })),
            Index::History => Box::new(
                self.districts()
                    .flat_map(move |(w, d)| self.history(w, d).map(|r| (r.key(1), r.encode()))),
            ),
            Index::Oorder => Box::new(
                self.districts()
                    .flat_map(move |(w, d)| self.orders(w, d).into_iter().map(|(o, _)| (o.key(), o.encode()))),
            ),
            Index::OorderByCustomer => Box::new(self.districts().flat_map(move |(w, d)| {
                let mut keys: Vec<Vec<u8>> = self.orders(w, d).iter().map(|(o, _)| o.customer_key()).collect();
                keys.sort_unstable();
                keys.into_iter().map(|k| (k, Vec::new()))
            })),
            Index::NewOrder => Box::new(self.districts().flat_map(|(w, d)| {
                (FIRST_UNDELIVERED_ORDER..=INITIAL_ORDERS_PER_DISTRICT).map(move |o_id| {
                    let r = NewOrder {
                        no_o_id: o_id,
                        no_d_id: d,
                        no_w_id: w,
                    };
                    (r.key(), r.encode())
                })
            })),
            Index::OrderLine => Box::new(self.districts().flat_map(move |(w, d)| {
                self.orders(w, d)
                    .into_iter()
                    .flat_map(|(_, lines)| lines.into_iter().map(|l| (l.key(), l.encode())))
            })),
            Index::Meta => Box::new(std::iter::empty()),
        }
    }
}

/// Rows of each index after the load (order lines: the mean, 10 per order).
pub fn expected_rows(index: Index, warehouses: u32) -> u64 {
    let w = u64::from(warehouses);
    let districts = w * u64::from(DISTRICTS_PER_WAREHOUSE);
    let customers = districts * u64::from(CUSTOMERS_PER_DISTRICT);
    let orders = districts * u64::from(INITIAL_ORDERS_PER_DISTRICT);
    match index {
        Index::Warehouse => w,
        Index::District => districts,
        Index::Customer | Index::CustomerByName | Index::History => customers,
        Index::NewOrder => districts * u64::from(INITIAL_NEW_ORDERS_PER_DISTRICT),
        Index::Oorder | Index::OorderByCustomer => orders,
        Index::OrderLine => orders * 10,
        Index::Item => u64::from(ITEMS),
        Index::Stock => w * u64::from(ITEMS),
        Index::Meta => 0,
    }
}

/// Rows between two progress reports of one worker.
const PROGRESS_EVERY_ROWS: u64 = 5_000;

/// Loads the initial population (see the module documentation).
pub fn prepare(
    store: &impl TpccStore,
    cfg: &LoadConfig,
    progress: &(dyn Fn(LoadProgress) + Sync),
) -> Result<LoadReport, TpccError> {
    if cfg.warehouses == 0 {
        return Err(TpccError::Config {
            reason: "warehouses must be at least 1".into(),
        });
    }
    if let Some(index) = Index::ALL.iter().find_map(|&i| match store.has_index(i) {
        Ok(true) => Some(Ok(i)),
        Ok(false) => None,
        Err(e) => Some(Err(e)),
    }) {
        let index = index?;
        return Err(TpccError::AlreadyLoaded {
            reason: format!(
                "index {} exists: the store already holds a TPC-C database (complete or not); prepare needs an empty one",
                index.store_name()
            ),
        });
    }
    let threads = if cfg.threads == 0 {
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    } else {
        cfg.threads
    };
    let started = Instant::now();
    let marker = LoadMarker {
        warehouses: cfg.warehouses,
        seed: cfg.seed,
        load_time_us: cfg.load_time_us.unwrap_or_else(now_us),
        constants: NurandConstants::for_load(cfg.seed),
    };
    store.create_indexes()?;
    let mut txn = store.begin();
    txn.insert(Index::Meta, META_LOAD_STARTED, &marker.encode())?;
    txn.commit()?;

    let gen = Gen {
        seed: cfg.seed,
        warehouses: cfg.warehouses,
        now_us: marker.load_time_us,
        c_load: marker.constants,
    };
    // Largest first, so the longest job starts at once.
    let mut jobs: Vec<Index> = Index::ALL.iter().copied().filter(|&i| i != Index::Meta).collect();
    jobs.sort_by_key(|&i| std::cmp::Reverse(expected_rows(i, cfg.warehouses) * row_weight(i)));
    let rows_expected: u64 = jobs.iter().map(|&i| expected_rows(i, cfg.warehouses)).sum();
    let next_job = AtomicUsize::new(0);
    let rows_loaded = AtomicU64::new(0);
    let jobs_done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<TpccError>> = Mutex::new(None);
    let per_index: Mutex<Vec<IndexRows>> = Mutex::new(Vec::new());
    let report = |loaded: u64| {
        progress(LoadProgress {
            rows_loaded: loaded,
            rows_expected,
            indexes_done: jobs_done.load(Ordering::Relaxed),
            indexes_total: jobs.len(),
        })
    };
    std::thread::scope(|scope| {
        for _ in 0..threads.min(jobs.len()) {
            scope.spawn(|| loop {
                let j = next_job.fetch_add(1, Ordering::Relaxed);
                let Some(&index) = jobs.get(j) else { break };
                if failed.load(Ordering::Relaxed) {
                    break;
                }
                let mut since_report = 0u64;
                let mut rows = gen
                    .rows(index)
                    .take_while(|_| !failed.load(Ordering::Relaxed))
                    .inspect(|_| {
                        since_report += 1;
                        if since_report == PROGRESS_EVERY_ROWS {
                            since_report = 0;
                            report(rows_loaded.fetch_add(PROGRESS_EVERY_ROWS, Ordering::Relaxed) + PROGRESS_EVERY_ROWS);
                        }
                    });
                match store.bulk_load(index, &mut rows) {
                    Ok(n) => {
                        drop(rows);
                        let rest = n % PROGRESS_EVERY_ROWS;
                        jobs_done.fetch_add(1, Ordering::Relaxed);
                        report(rows_loaded.fetch_add(rest, Ordering::Relaxed) + rest);
                        if let Ok(mut p) = per_index.lock() {
                            p.push(IndexRows {
                                index: index.name(),
                                rows: n,
                            });
                        }
                    }
                    Err(e) => {
                        failed.store(true, Ordering::Relaxed);
                        if let Ok(mut slot) = first_error.lock() {
                            slot.get_or_insert(TpccError::Load {
                                index: index.name(),
                                source: e,
                            });
                        }
                        break;
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut per_index = per_index.into_inner().unwrap_or_default();
    per_index.sort_by_key(|r| Index::ALL.iter().position(|i| i.name() == r.index));
    let mut txn = store.begin();
    txn.insert(Index::Meta, META_LOAD_COMPLETE, &marker.encode())?;
    txn.commit()?;
    let rows_loaded: u64 = per_index.iter().map(|r| r.rows).sum();
    let elapsed_s = started.elapsed().as_secs_f64();
    Ok(LoadReport {
        warehouses: cfg.warehouses,
        threads,
        seed: cfg.seed,
        rows_loaded,
        per_index,
        elapsed_s,
        rows_per_s: rows_loaded as f64 / elapsed_s.max(1e-9),
        constants: marker.constants,
    })
}

/// A rough relative cost per row, to start the heaviest job first.
fn row_weight(index: Index) -> u64 {
    match index {
        Index::Stock | Index::Customer => 4,
        Index::Item => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen() -> Gen {
        Gen {
            seed: 3,
            warehouses: 1,
            now_us: 1_700_000_000_000_000,
            c_load: NurandConstants::for_load(3),
        }
    }

    #[test]
    fn every_index_streams_strictly_ascending_keys() {
        let g = Gen { warehouses: 2, ..gen() };
        for index in [
            Index::CustomerByName,
            Index::OorderByCustomer,
            Index::History,
            Index::District,
        ] {
            let keys: Vec<Vec<u8>> = g.rows(index).map(|(k, _)| k).collect();
            assert!(keys.windows(2).all(|w| w[0] < w[1]), "{index:?}");
            assert_eq!(keys.len() as u64, expected_rows(index, 2), "{index:?}");
        }
    }

    #[test]
    fn customers_follow_the_last_name_rule() {
        let cs = gen().customers(1, 1);
        assert_eq!(cs[0].c_last, "BARBARBAR");
        assert_eq!(cs[999].c_last, "EINGEINGEING");
        let bc = cs.iter().filter(|c| c.c_credit == "BC").count();
        assert!((200..400).contains(&bc), "{bc}");
        assert!(cs.iter().all(|c| (300..=500).contains(&c.c_data.len())));
    }

    #[test]
    fn orders_are_a_permutation_with_900_undelivered() {
        let os = gen().orders(1, 2);
        let mut cs: Vec<u32> = os.iter().map(|(o, _)| o.o_c_id).collect();
        cs.sort_unstable();
        assert_eq!(cs, (1..=3000).collect::<Vec<_>>());
        assert_eq!(os.iter().filter(|(o, _)| o.o_carrier_id.is_none()).count(), 900);
        assert!(os.iter().all(|(o, l)| l.len() == usize::from(o.o_ol_cnt)));
    }

    #[test]
    fn same_seed_same_rows() {
        let a: Vec<_> = gen().rows(Index::OrderLine).take(1000).collect();
        let b: Vec<_> = gen().rows(Index::OrderLine).take(1000).collect();
        assert_eq!(a, b);
    }
}
