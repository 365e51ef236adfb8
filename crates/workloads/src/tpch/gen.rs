//! The TPC-H population (specification revision 3.0.1, clause 4.2): every
//! column of the eight tables by its rule, deterministic for a seed.
//!
//! Rules followed (clause numbers of 4.2.2 / 4.2.3):
//! - cardinalities `SF × base` (4.2.5.1), at least one row per table;
//! - ORDERS keys are sparse: of every 32 consecutive keys only the first 8
//!   are used at load (4.2.3, note on O_ORDERKEY); the next 8 are what RF1
//!   inserts ([`refresh_orderkey`]), so new sales never collide;
//! - customers whose key is divisible by 3 place no orders (O_CUSTKEY);
//! - each part has four suppliers by the PS_SUPPKEY formula, and a line's
//!   supplier is one of its part's four;
//! - dates: O_ORDERDATE uniform in [STARTDATE, ENDDATE − 151 days],
//!   L_SHIPDATE = orderdate + [1, 121], L_COMMITDATE = orderdate + [30, 90],
//!   L_RECEIPTDATE = shipdate + [1, 30]; L_RETURNFLAG is R or A when the
//!   receipt is on or before CURRENTDATE (1995-06-17), else N;
//!   L_LINESTATUS is O when shipped after CURRENTDATE, else F; O_ORDERSTATUS
//!   is F, O or P from its lines; O_TOTALPRICE = Σ extendedprice × (1 + tax)
//!   × (1 − discount);
//! - P_RETAILPRICE = (90000 + ((partkey / 10) mod 20001) + 100 × (partkey
//!   mod 1000)) / 100; P_NAME five distinct words of the 92 colours;
//! - phone numbers `CC-LLL-LLL-LLLL` with CC = nationkey + 10;
//! - comments are random substrings of a text pool generated from the
//!   grammar of 4.2.2.14; SF × 5 suppliers' comments (in expectation)
//!   carry "Customer … Complaints" and as many "Customer … Recommends"
//!   (4.2.3, S_COMMENT), which Q16 filters on.
//!
//! Deviations, stated: the word lists are the specification's, drawn
//! uniformly rather than with its weights; the text pool is 8 MiB, not
//! 300 MB (a comment is a substring at a random offset, so only how often
//! substrings repeat differs); the answer check compares our queries with
//! DuckDB over *this* data, so nothing depends on matching `dbgen` byte for
//! byte.
//!
//! Invariant: a row depends only on (seed, table, row number) — each row,
//! or each order with its lines, draws from its own generator — so tables
//! can be generated in any order, in parallel, and a refresh set can be
//! regenerated exactly.

use std::sync::Arc;

use crate::tpcc::random::{mix64, Rng64, Xoshiro256StarStar};

use super::schema::{Customer, Date, Lineitem, Nation, Order, Part, PartSupp, Region, Supplier, Table};

/// 1992-01-01 (clause 4.2.2.12).
pub const START_DATE: Date = Date::ymd_const(1992, 1, 1);
/// 1995-06-17.
pub const CURRENT_DATE: Date = Date::ymd_const(1995, 6, 17);
/// 1998-12-31.
pub const END_DATE: Date = Date::ymd_const(1998, 12, 31);

/// Bytes of generated text that comments are cut from.
pub const TEXT_POOL_BYTES: usize = 8 << 20;

pub const REGIONS: [&str; 5] = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"];
/// (name, regionkey), nationkey = position (clause 4.2.3).
pub const NATIONS: [(&str, i64); 25] = [
    ("ALGERIA", 0),
    ("ARGENTINA", 1),
    ("BRAZIL", 1),
    ("CANADA", 1),
    ("EGYPT", 4),
    ("ETHIOPIA", 0),
    ("FRANCE", 3),
    ("GERMANY", 3),
    ("INDIA", 2),
    ("INDONESIA", 2),
    ("IRAN", 4),
    ("IRAQ", 4),
    ("JAPAN", 2),
    ("JORDAN", 4),
    ("KENYA", 0),
    ("MOROCCO", 0),
    ("MOZAMBIQUE", 0),
    ("PERU", 1),
    ("CHINA", 2),
    ("ROMANIA", 3),
    ("SAUDI ARABIA", 4),
    ("VIETNAM", 2),
    ("RUSSIA", 3),
    ("UNITED KINGDOM", 3),
    ("UNITED STATES", 1),
];
pub const SEGMENTS: [&str; 5] = ["AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"];
pub const PRIORITIES: [&str; 5] = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"];
pub const INSTRUCTIONS: [&str; 4] = ["DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"];
pub const MODES: [&str; 7] = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"];
pub const TYPE_SYLLABLE_1: [&str; 6] = ["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"];
pub const TYPE_SYLLABLE_2: [&str; 5] = ["ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"];
pub const TYPE_SYLLABLE_3: [&str; 5] = ["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"];
pub const CONTAINER_SYLLABLE_1: [&str; 5] = ["SM", "LG", "MED", "JUMBO", "WRAP"];
pub const CONTAINER_SYLLABLE_2: [&str; 8] = ["CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"];
pub const COLORS: [&str; 92] = [
    "almond",
    "antique",
    "aquamarine",
    "azure",
    "beige",
    "bisque",
    "black",
    "blanched",
    "blue",
    "blush",
    "brown",
    "burlywood",
    "burnished",
    "chartreuse",
    "chiffon",
    "chocolate",
    "coral",
    "cornflower",
    "cornsilk",
    "cream",
    "cyan",
    "dark",
    "deep",
    "dim",
    "dodger",
    "drab",
    "firebrick",
    "floral",
    "forest",
    "frosted",
    "gainsboro",
    "ghost",
    "goldenrod",
    "green",
    "grey",
    "honeydew",
    "hot",
    "indian",
    "ivory",
    "khaki",
    "lace",
    "lavender",
    "lawn",
    "lemon",
    "light",
    "lime",
    "linen",
    "magenta",
    "maroon",
    "medium",
    "metallic",
    "midnight",
    "mint",
    "misty",
    "moccasin",
    "navajo",
    "navy",
    "olive",
    "orange",
    "orchid",
    "pale",
    "papaya",
    "peach",
    "peru",
    "pink",
    "plum",
    "powder",
    "puff",
    "purple",
    "red",
    "rose",
    "rosy",
    "royal",
    "saddle",
    "salmon",
    "sandy",
    "seashell",
    "sienna",
    "sky",
    "slate",
    "smoke",
    "snow",
    "spring",
    "steel",
    "tan",
    "thistle",
    "tomato",
    "turquoise",
    "violet",
    "wheat",
    "white",
    "yellow",
];

const NOUNS: [&str; 45] = [
    "foxes",
    "ideas",
    "theodolites",
    "pinto beans",
    "instructions",
    "dependencies",
    "excuses",
    "platelets",
    "asymptotes",
    "courts",
    "dolphins",
    "multipliers",
    "sauternes",
    "warthogs",
    "frets",
    "dinos",
    "attainments",
    "somas",
    "Tiresias",
    "patterns",
    "forges",
    "braids",
    "hockey players",
    "frays",
    "warhorses",
    "dugouts",
    "notornis",
    "epitaphs",
    "pearls",
    "tithes",
    "waters",
    "orbits",
    "gifts",
    "sheaves",
    "depths",
    "sentiments",
    "decoys",
    "realms",
    "pains",
    "grouches",
    "escapades",
    "packages",
    "requests",
    "accounts",
    "deposits",
];
const VERBS: [&str; 40] = [
    "sleep",
    "wake",
    "are",
    "cajole",
    "haggle",
    "nag",
    "use",
    "boost",
    "affix",
    "detect",
    "integrate",
    "maintain",
    "nod",
    "was",
    "lose",
    "sublate",
    "solve",
    "thrash",
    "promise",
    "engage",
    "hinder",
    "print",
    "x-ray",
    "breach",
    "eat",
    "grow",
    "impress",
    "mold",
    "poach",
    "serve",
    "run",
    "dazzle",
    "snooze",
    "doze",
    "unwind",
    "kindle",
    "play",
    "hang",
    "believe",
    "doubt",
];
const ADJECTIVES: [&str; 29] = [
    "furious",
    "sly",
    "careful",
    "blithe",
    "quick",
    "fluffy",
    "slow",
    "quiet",
    "ruthless",
    "thin",
    "close",
    "dogged",
    "daring",
    "brave",
    "stealthy",
    "permanent",
    "enticing",
    "idle",
    "busy",
    "regular",
    "final",
    "ironic",
    "even",
    "bold",
    "silent",
    "special",
    "pending",
    "unusual",
    "express",
];
const ADVERBS: [&str; 28] = [
    "sometimes",
    "always",
    "never",
    "furiously",
    "slyly",
    "carefully",
    "blithely",
    "quickly",
    "fluffily",
    "slowly",
    "quietly",
    "ruthlessly",
    "thinly",
    "closely",
    "doggedly",
    "daringly",
    "bravely",
    "stealthily",
    "permanently",
    "enticingly",
    "idly",
    "busily",
    "regularly",
    "finally",
    "ironically",
    "evenly",
    "boldly",
    "silently",
];
const PREPOSITIONS: [&str; 47] = [
    "about",
    "above",
    "according to",
    "across",
    "after",
    "against",
    "along",
    "alongside of",
    "among",
    "around",
    "at",
    "atop",
    "before",
    "behind",
    "beneath",
    "beside",
    "besides",
    "between",
    "beyond",
    "by",
    "despite",
    "during",
    "except",
    "for",
    "from",
    "in place of",
    "inside",
    "instead of",
    "into",
    "near",
    "of",
    "on",
    "outside",
    "over",
    "past",
    "since",
    "through",
    "throughout",
    "to",
    "toward",
    "under",
    "until",
    "up",
    "upon",
    "without",
    "with",
    "within",
];
const AUXILIARIES: [&str; 18] = [
    "do",
    "may",
    "might",
    "shall",
    "will",
    "would",
    "can",
    "could",
    "should",
    "ought to",
    "must",
    "will have to",
    "shall have to",
    "could have to",
    "should have to",
    "must have to",
    "need to",
    "try to",
];
const TERMINATORS: [&str; 6] = [".", ";", ":", "?", "!", "--"];

/// Characters of v-strings (clause 4.2.2.7).
const VSTRING_ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,. ";

/// Per-table stream tags, so two tables never share a generator.
fn stream(seed: u64, table: Table, row: u64) -> Xoshiro256StarStar {
    let tag = (table as u64 + 1) << 56;
    Xoshiro256StarStar::seed_from_u64(mix64(seed ^ tag ^ row.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
}

fn pick<'a, R: Rng64>(rng: &mut R, words: &[&'a str]) -> &'a str {
    words[rng.below(words.len() as u64) as usize]
}

fn between_i64<R: Rng64>(rng: &mut R, lo: i64, hi: i64) -> i64 {
    lo + rng.below((hi - lo + 1) as u64) as i64
}

/// The table sizes of one scale factor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    pub sf: f64,
    pub suppliers: i64,
    pub customers: i64,
    pub parts: i64,
    pub orders: i64,
    pub clerks: i64,
    /// Orders one RF1 inserts and one RF2 deletes (SF × 1500, clause 2.5.2).
    pub refresh_orders: i64,
}

impl Scale {
    /// Scale factor `sf` in (0, 1000]; the error names the bound.
    pub fn new(sf: f64) -> Result<Scale, String> {
        if !(sf.is_finite() && sf > 0.0 && sf <= 1000.0) {
            return Err(format!("--sf {sf}: the scale factor must be in (0, 1000]"));
        }
        let n = |base: f64| ((base * sf).round() as i64).max(1);
        let orders = n(1_500_000.0);
        // RF pairs use the second 8 of every 32 keys: at most
        // orders / refresh_orders = 1000 pairs before they would wrap.
        Ok(Scale {
            sf,
            suppliers: n(10_000.0),
            customers: n(150_000.0),
            parts: n(200_000.0),
            orders,
            clerks: n(1_000.0),
            refresh_orders: n(1_500.0).min(orders),
        })
    }

    /// Rows of `table` (LINEITEM: expected).
    pub fn rows(&self, table: Table) -> u64 {
        match table {
            Table::Region => 5,
            Table::Nation => 25,
            Table::Supplier => self.suppliers as u64,
            Table::Customer => self.customers as u64,
            Table::Part => self.parts as u64,
            Table::PartSupp => 4 * self.parts as u64,
            Table::Orders => self.orders as u64,
            Table::Lineitem => 4 * self.orders as u64,
            Table::Meta => 0,
        }
    }

    /// Refresh pairs possible before RF1 keys would run out.
    pub fn refresh_pairs_max(&self) -> u64 {
        (self.orders / self.refresh_orders) as u64
    }
}

/// O_ORDERKEY of the `index`-th (0-based) order of the load.
pub fn load_orderkey(index: i64) -> i64 {
    (index / 8) * 32 + index % 8 + 1
}

/// O_ORDERKEY of the `j`-th new order of refresh pair `pair` (1-based):
/// the second 8 of each 32 keys, never used by the load.
pub fn refresh_orderkey(scale: &Scale, pair: u64, j: i64) -> i64 {
    let index = (pair as i64 - 1) * scale.refresh_orders + j;
    (index / 8) * 32 + 8 + index % 8 + 1
}

/// The generator: the text pool and the scale.
pub struct Generator {
    pub scale: Scale,
    pub seed: u64,
    pool: Arc<Vec<u8>>,
}

impl Generator {
    pub fn new(scale: Scale, seed: u64) -> Self {
        Self {
            scale,
            seed,
            pool: Arc::new(text_pool(seed, TEXT_POOL_BYTES)),
        }
    }

    fn text<R: Rng64>(&self, rng: &mut R, min: usize, max: usize) -> String {
        let len = min + rng.below((max - min + 1) as u64) as usize;
        let start = rng.below((self.pool.len() - len + 1) as u64) as usize;
        // The pool is ASCII, so any byte range is a string.
        String::from_utf8_lossy(&self.pool[start..start + len]).into_owned()
    }

    pub fn region(&self, key: i64) -> Region {
        let mut rng = stream(self.seed, Table::Region, key as u64);
        Region {
            regionkey: key,
            name: REGIONS[key as usize].to_string(),
            comment: self.text(&mut rng, 31, 115),
        }
    }

    pub fn nation(&self, key: i64) -> Nation {
        let mut rng = stream(self.seed, Table::Nation, key as u64);
        let (name, regionkey) = NATIONS[key as usize];
        Nation {
            nationkey: key,
            name: name.to_string(),
            regionkey,
            comment: self.text(&mut rng, 31, 114),
        }
    }

    pub fn supplier(&self, key: i64) -> Supplier {
        let mut rng = stream(self.seed, Table::Supplier, key as u64);
        let nationkey = between_i64(&mut rng, 0, 24);
        let mut comment = self.text(&mut rng, 25, 100);
        // 5 rows in 10,000 each: "Customer ... Complaints" / "Recommends".
        let draw = rng.below(10_000);
        let tail = match draw {
            0..=4 => Some("Complaints"),
            5..=9 => Some("Recommends"),
            _ => None,
        };
        if let Some(tail) = tail {
            // "Customer", up to 10 characters of text, then the tail,
            // written over the comment at a random place (its length kept).
            let filler = self.text(&mut rng, 0, 10);
            let phrase = format!("Customer {filler}{tail}");
            if comment.len() <= phrase.len() {
                comment = phrase;
            } else {
                let at = rng.below((comment.len() - phrase.len() + 1) as u64) as usize;
                comment = format!("{}{}{}", &comment[..at], phrase, &comment[at + phrase.len()..]);
            }
        }
        Supplier {
            suppkey: key,
            name: format!("Supplier#{key:09}"),
            address: vstring(&mut rng, 10, 40),
            nationkey,
            phone: phone(&mut rng, nationkey),
            acctbal: between_i64(&mut rng, -99_999, 999_999),
            comment,
        }
    }

    pub fn customer(&self, key: i64) -> Customer {
        let mut rng = stream(self.seed, Table::Customer, key as u64);
        let nationkey = between_i64(&mut rng, 0, 24);
        Customer {
            custkey: key,
            name: format!("Customer#{key:09}"),
            address: vstring(&mut rng, 10, 40),
            nationkey,
            phone: phone(&mut rng, nationkey),
            acctbal: between_i64(&mut rng, -99_999, 999_999),
            mktsegment: pick(&mut rng, &SEGMENTS).to_string(),
            comment: self.text(&mut rng, 29, 116),
        }
    }

    pub fn part(&self, key: i64) -> Part {
        let mut rng = stream(self.seed, Table::Part, key as u64);
        let mut words: Vec<&str> = Vec::with_capacity(5);
        while words.len() < 5 {
            let w = pick(&mut rng, &COLORS);
            if !words.contains(&w) {
                words.push(w);
            }
        }
        let m = between_i64(&mut rng, 1, 5);
        let n = between_i64(&mut rng, 1, 5);
        Part {
            partkey: key,
            name: words.join(" "),
            mfgr: format!("Manufacturer#{m}"),
            brand: format!("Brand#{m}{n}"),
            type_: format!(
                "{} {} {}",
                pick(&mut rng, &TYPE_SYLLABLE_1),
                pick(&mut rng, &TYPE_SYLLABLE_2),
                pick(&mut rng, &TYPE_SYLLABLE_3)
            ),
            size: between_i64(&mut rng, 1, 50) as i32,
            container: format!(
                "{} {}",
                pick(&mut rng, &CONTAINER_SYLLABLE_1),
                pick(&mut rng, &CONTAINER_SYLLABLE_2)
            ),
            retailprice: retail_price_cents(key),
            comment: self.text(&mut rng, 5, 22),
        }
    }

    /// The four PARTSUPP rows of part `partkey`, by supplier key.
    pub fn partsupps(&self, partkey: i64) -> Vec<PartSupp> {
        let mut rng = stream(self.seed, Table::PartSupp, partkey as u64);
        let mut rows: Vec<PartSupp> = (0..4)
            .map(|i| PartSupp {
                partkey,
                suppkey: part_supplier(&self.scale, partkey, i),
                availqty: between_i64(&mut rng, 1, 9_999) as i32,
                supplycost: between_i64(&mut rng, 100, 100_000),
                comment: self.text(&mut rng, 49, 198),
            })
            .collect();
        rows.sort_by_key(|r| r.suppkey);
        rows.dedup_by_key(|r| r.suppkey);
        rows
    }

    /// The `index`-th order of the load (0-based) and its lines.
    pub fn order(&self, index: i64) -> (Order, Vec<Lineitem>) {
        let mut rng = stream(self.seed, Table::Orders, index as u64);
        self.order_with(&mut rng, load_orderkey(index))
    }

    /// The `j`-th new order of refresh pair `pair` (1-based) and its lines.
    pub fn refresh_order(&self, pair: u64, j: i64) -> (Order, Vec<Lineitem>) {
        let key = refresh_orderkey(&self.scale, pair, j);
        let mut rng = stream(self.seed ^ 0x05ee_d0f4_ef4e_5400, Table::Orders, key as u64);
        self.order_with(&mut rng, key)
    }

    fn order_with<R: Rng64>(&self, rng: &mut R, orderkey: i64) -> (Order, Vec<Lineitem>) {
        let custkey = loop {
            let c = between_i64(rng, 1, self.scale.customers);
            if c % 3 != 0 || self.scale.customers < 3 {
                break c;
            }
        };
        let orderdate = START_DATE.add_days(between_i64(rng, 0, i64::from(END_DATE.0 - 151 - START_DATE.0)) as i32);
        let lines = between_i64(rng, 1, 7);
        let mut items = Vec::with_capacity(lines as usize);
        let mut total: i128 = 0;
        for n in 1..=lines {
            let partkey = between_i64(rng, 1, self.scale.parts);
            let suppkey = part_supplier(&self.scale, partkey, rng.below(4) as i64);
            let quantity = between_i64(rng, 1, 50);
            let discount = between_i64(rng, 0, 10);
            let tax = between_i64(rng, 0, 8);
            let shipdate = orderdate.add_days(between_i64(rng, 1, 121) as i32);
            let commitdate = orderdate.add_days(between_i64(rng, 30, 90) as i32);
            let receiptdate = shipdate.add_days(between_i64(rng, 1, 30) as i32);
            let returnflag = if receiptdate <= CURRENT_DATE {
                if rng.below(2) == 0 {
                    b'R'
                } else {
                    b'A'
                }
            } else {
                b'N'
            };
            let linestatus = if shipdate > CURRENT_DATE { b'O' } else { b'F' };
            let extendedprice = quantity * retail_price_cents(partkey);
            total += i128::from(extendedprice) * i128::from(100 + tax) * i128::from(100 - discount);
            items.push(Lineitem {
                orderkey,
                partkey,
                suppkey,
                linenumber: n as i32,
                quantity,
                extendedprice,
                discount,
                tax,
                returnflag,
                linestatus,
                shipdate,
                commitdate,
                receiptdate,
                shipinstruct: pick(rng, &INSTRUCTIONS).to_string(),
                shipmode: pick(rng, &MODES).to_string(),
                comment: self.text(rng, 10, 43),
            });
        }
        let orderstatus = if items.iter().all(|l| l.linestatus == b'F') {
            b'F'
        } else if items.iter().all(|l| l.linestatus == b'O') {
            b'O'
        } else {
            b'P'
        };
        let order = Order {
            orderkey,
            custkey,
            orderstatus,
            // Scale 6 (cents × hundredths²) back to cents, half away from 0.
            totalprice: ((total + 5_000) / 10_000) as i64,
            orderdate,
            orderpriority: pick(rng, &PRIORITIES).to_string(),
            clerk: format!("Clerk#{:09}", between_i64(rng, 1, self.scale.clerks)),
            shippriority: 0,
            comment: self.text(rng, 19, 78),
        };
        (order, items)
    }
}

/// P_RETAILPRICE in cents (clause 4.2.3).
pub fn retail_price_cents(partkey: i64) -> i64 {
    90_000 + ((partkey / 10) % 20_001) + 100 * (partkey % 1_000)
}

/// PS_SUPPKEY of the `i`-th (0..4) supplier of `partkey` (clause 4.2.3):
/// `(partkey + i × (S/4 + (partkey − 1)/S)) mod S + 1`.
pub fn part_supplier(scale: &Scale, partkey: i64, i: i64) -> i64 {
    let s = scale.suppliers;
    (partkey + i * (s / 4 + (partkey - 1) / s)) % s + 1
}

fn phone<R: Rng64>(rng: &mut R, nationkey: i64) -> String {
    format!(
        "{}-{}-{}-{}",
        nationkey + 10,
        between_i64(rng, 100, 999),
        between_i64(rng, 100, 999),
        between_i64(rng, 1000, 9999)
    )
}

fn vstring<R: Rng64>(rng: &mut R, min: usize, max: usize) -> String {
    let len = min + rng.below((max - min + 1) as u64) as usize;
    (0..len)
        .map(|_| char::from(VSTRING_ALPHABET[rng.below(VSTRING_ALPHABET.len() as u64) as usize]))
        .collect()
}

/// Text of the grammar of clause 4.2.2.14, `bytes` long.
pub fn text_pool(seed: u64, bytes: usize) -> Vec<u8> {
    let mut rng = Xoshiro256StarStar::seed_from_u64(mix64(seed ^ 0x7e47_9001));
    let mut pool = String::with_capacity(bytes + 256);
    while pool.len() < bytes {
        sentence(&mut rng, &mut pool);
        pool.push(' ');
    }
    pool.truncate(bytes);
    pool.into_bytes()
}

fn noun_phrase<R: Rng64>(rng: &mut R, out: &mut String) {
    match rng.below(4) {
        0 => out.push_str(pick(rng, &NOUNS)),
        1 => {
            out.push_str(pick(rng, &ADJECTIVES));
            out.push(' ');
            out.push_str(pick(rng, &NOUNS));
        }
        2 => {
            out.push_str(pick(rng, &ADJECTIVES));
            out.push_str(", ");
            out.push_str(pick(rng, &ADJECTIVES));
            out.push(' ');
            out.push_str(pick(rng, &NOUNS));
        }
        _ => {
            out.push_str(pick(rng, &ADVERBS));
            out.push(' ');
            out.push_str(pick(rng, &ADJECTIVES));
            out.push(' ');
            out.push_str(pick(rng, &NOUNS));
        }
    }
}

fn verb_phrase<R: Rng64>(rng: &mut R, out: &mut String) {
    let (aux, adverb) = match rng.below(4) {
        0 => (false, false),
        1 => (true, false),
        2 => (false, true),
        _ => (true, true),
    };
    if aux {
        out.push_str(pick(rng, &AUXILIARIES));
        out.push(' ');
    }
    out.push_str(pick(rng, &VERBS));
    if adverb {
        out.push(' ');
        out.push_str(pick(rng, &ADVERBS));
    }
}

fn prepositional_phrase<R: Rng64>(rng: &mut R, out: &mut String) {
    out.push_str(pick(rng, &PREPOSITIONS));
    out.push_str(" the ");
    noun_phrase(rng, out);
}

fn sentence<R: Rng64>(rng: &mut R, out: &mut String) {
    noun_phrase(rng, out);
    out.push(' ');
    match rng.below(5) {
        0 => verb_phrase(rng, out),
        1 => {
            verb_phrase(rng, out);
            out.push(' ');
            prepositional_phrase(rng, out);
        }
        2 => {
            verb_phrase(rng, out);
            out.push(' ');
            noun_phrase(rng, out);
        }
        3 => {
            prepositional_phrase(rng, out);
            out.push(' ');
            verb_phrase(rng, out);
            out.push(' ');
            noun_phrase(rng, out);
        }
        _ => {
            prepositional_phrase(rng, out);
            out.push(' ');
            verb_phrase(rng, out);
            out.push(' ');
            prepositional_phrase(rng, out);
        }
    }
    out.push_str(pick(rng, &TERMINATORS));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generator() -> Generator {
        let scale = Scale::new(0.01).expect("scale");
        Generator {
            scale,
            seed: 7,
            pool: Arc::new(text_pool(7, 1 << 16)),
        }
    }

    #[test]
    fn scale_sizes_follow_the_specification_and_bad_factors_are_named() {
        let s = Scale::new(1.0).expect("sf 1");
        assert_eq!(
            (s.suppliers, s.customers, s.parts, s.orders),
            (10_000, 150_000, 200_000, 1_500_000)
        );
        assert_eq!(s.refresh_orders, 1_500);
        assert_eq!(s.refresh_pairs_max(), 1_000);
        let small = Scale::new(0.01).expect("sf 0.01");
        assert_eq!((small.suppliers, small.orders, small.refresh_orders), (100, 15_000, 15));
        for bad in [0.0, -1.0, f64::NAN, 1001.0] {
            let e = Scale::new(bad).expect_err("rejected");
            assert!(e.contains("--sf"), "{e}");
        }
    }

    #[test]
    fn orders_and_lines_obey_the_population_rules() {
        let g = generator();
        let mut keys = std::collections::HashSet::new();
        for i in 0..2_000 {
            let (o, lines) = g.order(i);
            assert!(keys.insert(o.orderkey));
            assert!((o.orderkey - 1) % 32 < 8, "load keys use the first 8 of 32");
            assert_ne!(o.custkey % 3, 0);
            assert!(o.orderdate >= START_DATE && o.orderdate <= END_DATE.add_days(-151));
            assert!((1..=7).contains(&lines.len()));
            let mut total: i128 = 0;
            for l in &lines {
                assert_eq!(l.orderkey, o.orderkey);
                assert!((1..=50).contains(&l.quantity) && (0..=10).contains(&l.discount) && (0..=8).contains(&l.tax));
                assert_eq!(l.extendedprice, l.quantity * retail_price_cents(l.partkey));
                assert!((0..4).any(|i| part_supplier(&g.scale, l.partkey, i) == l.suppkey));
                let ship = l.shipdate.0 - o.orderdate.0;
                assert!((1..=121).contains(&ship));
                assert!((30..=90).contains(&(l.commitdate.0 - o.orderdate.0)));
                assert!((1..=30).contains(&(l.receiptdate.0 - l.shipdate.0)));
                assert_eq!(l.returnflag == b'N', l.receiptdate > CURRENT_DATE);
                assert_eq!(l.linestatus == b'O', l.shipdate > CURRENT_DATE);
                assert!((10..=43).contains(&l.comment.len()));
                total += i128::from(l.extendedprice) * i128::from(100 + l.tax) * i128::from(100 - l.discount);
            }
            assert!((i128::from(o.totalprice) * 10_000 - total).abs() <= 5_000);
            let all = |s| lines.iter().all(|l| l.linestatus == s);
            let status = if all(b'F') {
                b'F'
            } else if all(b'O') {
                b'O'
            } else {
                b'P'
            };
            assert_eq!(o.orderstatus, status);
        }
        // Deterministic per row, and refresh keys never collide with the load.
        assert_eq!(g.order(17), g.order(17));
        for pair in 1..=3 {
            for j in 0..g.scale.refresh_orders {
                let (o, _) = g.refresh_order(pair, j);
                assert!((8..16).contains(&((o.orderkey - 1) % 32)), "{}", o.orderkey);
                assert!(!keys.contains(&o.orderkey));
            }
        }
    }

    #[test]
    fn parts_suppliers_and_customers_obey_their_rules() {
        let g = generator();
        assert_eq!(retail_price_cents(1), 90_000 + 100);
        for k in 1..=200 {
            let p = g.part(k);
            let words: Vec<&str> = p.name.split(' ').collect();
            assert_eq!(words.len(), 5);
            assert!(words.iter().all(|w| COLORS.contains(w)));
            assert!(p.brand.starts_with("Brand#") && (1..=50).contains(&p.size));
            assert_eq!(p.retailprice, retail_price_cents(k));
            let ps = g.partsupps(k);
            assert_eq!(ps.len(), 4, "four distinct suppliers per part");
            assert!(ps.iter().all(|r| (1..=g.scale.suppliers).contains(&r.suppkey)));
        }
        for k in 1..=100 {
            let s = g.supplier(k);
            let cc: i64 = s.phone[..2].parse().expect("country code");
            assert_eq!(cc, s.nationkey + 10);
            assert!((-99_999..=999_999).contains(&s.acctbal));
            assert!(s.comment.len() <= 100);
            let c = g.customer(k);
            assert!(SEGMENTS.contains(&c.mktsegment.as_str()));
            assert!((10..=40).contains(&c.address.len()));
        }
        let pool = text_pool(1, 1 << 14);
        assert_eq!(pool.len(), 1 << 14);
        assert!(pool.is_ascii());
    }
}
