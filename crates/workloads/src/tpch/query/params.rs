//! Substitution parameters of the 22 queries (TPC-H 3.0.1, clause 2.4.N.3):
//! the validation values, a random draw by the specification's rules, and
//! a one-line description.
//!
//! The value lists (regions, nations, segments, modes, type and container
//! syllables, colours) are the population's, from [`super::super::gen`],
//! so a parameter always names something the generator can produce.
//!
//! Invariants: `Params::validation(q)` and `Params::random(q, ..)` give
//! `subst.query() == Some(q)` for `q` in `1..=22` and [`Subst::OutOfRange`]
//! otherwise; every random value lies in its clause's range (tested below
//! for every query across many seeds); lists drawn "without repetition"
//! (Q7's and Q12's pairs, Q16's sizes, Q22's country codes) hold distinct
//! values.

use crate::tpcc::random::Rng64;

use super::super::gen::{
    COLORS, CONTAINER_SYLLABLE_1, CONTAINER_SYLLABLE_2, MODES, NATIONS, REGIONS, SEGMENTS, TYPE_SYLLABLE_1,
    TYPE_SYLLABLE_2, TYPE_SYLLABLE_3,
};
use super::super::schema::Date;
use super::QUERIES;

/// Q13's WORD1 and WORD2 lists (clause 2.4.13.3).
pub const Q13_WORD1: [&str; 4] = ["special", "pending", "unusual", "express"];
pub const Q13_WORD2: [&str; 4] = ["packages", "requests", "accounts", "deposits"];

/// Country codes of phone numbers: nationkey + 10 (clause 4.2.2.9).
pub const COUNTRY_CODE_MIN: u8 = 10;
pub const COUNTRY_CODE_MAX: u8 = 34;

/// Q11's FRACTION as an exact ratio (the specification's value is
/// 0.0001 / SF, clause 2.4.11.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fraction {
    pub numerator: u64,
    pub denominator: u64,
}

impl Fraction {
    /// 0.0001 / `sf`, as 10^6 / round(sf × 10^10): exact for every scale
    /// factor with at most 6 decimals (0.01, 1, 10, 300, ...). A scale
    /// factor that is not positive gives the largest fraction, 10^6.
    pub fn for_scale(sf: f64) -> Fraction {
        let denominator = (sf * 1e10).round();
        let denominator = if denominator.is_finite() && denominator >= 1.0 {
            denominator as u64
        } else {
            1
        };
        Fraction {
            numerator: 1_000_000,
            denominator,
        }
    }

    pub fn as_f64(self) -> f64 {
        self.numerator as f64 / self.denominator as f64
    }
}

/// The substitution values of one query, named as in the specification.
#[derive(Clone, Debug, PartialEq)]
pub enum Subst {
    Q1 {
        delta_days: i32,
    },
    /// `type_syllable` is TYPE, matched as `p_type like '%TYPE'`.
    Q2 {
        size: i32,
        type_syllable: String,
        region: String,
    },
    Q3 {
        segment: String,
        date: Date,
    },
    Q4 {
        date: Date,
    },
    Q5 {
        region: String,
        date: Date,
    },
    /// DISCOUNT in hundredths.
    Q6 {
        date: Date,
        discount_hundredths: i64,
        quantity: i64,
    },
    Q7 {
        nation1: String,
        nation2: String,
    },
    Q8 {
        nation: String,
        region: String,
        type_: String,
    },
    Q9 {
        color: String,
    },
    Q10 {
        date: Date,
    },
    Q11 {
        nation: String,
        fraction: Fraction,
    },
    Q12 {
        shipmode1: String,
        shipmode2: String,
        date: Date,
    },
    Q13 {
        word1: String,
        word2: String,
    },
    Q14 {
        date: Date,
    },
    Q15 {
        date: Date,
    },
    /// `type_prefix` is TYPE, matched as `p_type not like 'TYPE%'`.
    Q16 {
        brand: String,
        type_prefix: String,
        sizes: [i32; 8],
    },
    Q17 {
        brand: String,
        container: String,
    },
    Q18 {
        quantity: i64,
    },
    Q19 {
        quantities: [i64; 3],
        brands: [String; 3],
    },
    Q20 {
        color: String,
        date: Date,
        nation: String,
    },
    Q21 {
        nation: String,
    },
    /// I1..I7, two-digit country codes.
    Q22 {
        country_codes: [u8; 7],
    },
    /// Asked for a query number outside `1..=22`; `run_query` refuses it.
    OutOfRange,
}

impl Subst {
    /// The query these values belong to.
    pub fn query(&self) -> Option<u8> {
        use Subst as S;
        Some(match self {
            S::Q1 { .. } => 1,
            S::Q2 { .. } => 2,
            S::Q3 { .. } => 3,
            S::Q4 { .. } => 4,
            S::Q5 { .. } => 5,
            S::Q6 { .. } => 6,
            S::Q7 { .. } => 7,
            S::Q8 { .. } => 8,
            S::Q9 { .. } => 9,
            S::Q10 { .. } => 10,
            S::Q11 { .. } => 11,
            S::Q12 { .. } => 12,
            S::Q13 { .. } => 13,
            S::Q14 { .. } => 14,
            S::Q15 { .. } => 15,
            S::Q16 { .. } => 16,
            S::Q17 { .. } => 17,
            S::Q18 { .. } => 18,
            S::Q19 { .. } => 19,
            S::Q20 { .. } => 20,
            S::Q21 { .. } => 21,
            S::Q22 { .. } => 22,
            S::OutOfRange => return None,
        })
    }
}

/// A query number and its substitution values.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub query: u8,
    pub subst: Subst,
}

const fn ymd(y: i32, m: u32, d: u32) -> Date {
    Date::ymd_const(y, m, d)
}

fn s(text: &str) -> String {
    text.to_string()
}

impl Params {
    /// The values of clause 2.4.N.3's "Query Validation".
    pub fn validation(query: u8) -> Params {
        use Subst as S;
        let subst = match query {
            1 => S::Q1 { delta_days: 90 },
            2 => S::Q2 {
                size: 15,
                type_syllable: s("BRASS"),
                region: s("EUROPE"),
            },
            3 => S::Q3 {
                segment: s("BUILDING"),
                date: ymd(1995, 3, 15),
            },
            4 => S::Q4 { date: ymd(1993, 7, 1) },
            5 => S::Q5 {
                region: s("ASIA"),
                date: ymd(1994, 1, 1),
            },
            6 => S::Q6 {
                date: ymd(1994, 1, 1),
                discount_hundredths: 6,
                quantity: 24,
            },
            7 => S::Q7 {
                nation1: s("FRANCE"),
                nation2: s("GERMANY"),
            },
            8 => S::Q8 {
                nation: s("BRAZIL"),
                region: s("AMERICA"),
                type_: s("ECONOMY ANODIZED STEEL"),
            },
            9 => S::Q9 { color: s("green") },
            10 => S::Q10 { date: ymd(1993, 10, 1) },
            11 => S::Q11 {
                nation: s("GERMANY"),
                fraction: Fraction {
                    numerator: 1,
                    denominator: 10_000,
                },
            },
            12 => S::Q12 {
                shipmode1: s("MAIL"),
                shipmode2: s("SHIP"),
                date: ymd(1994, 1, 1),
            },
            13 => S::Q13 {
                word1: s("special"),
                word2: s("requests"),
            },
            14 => S::Q14 { date: ymd(1995, 9, 1) },
            15 => S::Q15 { date: ymd(1996, 1, 1) },
            16 => S::Q16 {
                brand: s("Brand#45"),
                type_prefix: s("MEDIUM POLISHED"),
                sizes: [49, 14, 23, 45, 19, 3, 36, 9],
            },
            17 => S::Q17 {
                brand: s("Brand#23"),
                container: s("MED BOX"),
            },
            18 => S::Q18 { quantity: 300 },
            19 => S::Q19 {
                quantities: [1, 10, 20],
                brands: [s("Brand#12"), s("Brand#23"), s("Brand#34")],
            },
            20 => S::Q20 {
                color: s("forest"),
                date: ymd(1994, 1, 1),
                nation: s("CANADA"),
            },
            21 => S::Q21 {
                nation: s("SAUDI ARABIA"),
            },
            22 => S::Q22 {
                country_codes: [13, 31, 23, 29, 30, 18, 17],
            },
            _ => S::OutOfRange,
        };
        Params { query, subst }
    }

    /// A draw by the rules of clause 2.4.N.3 at scale factor `sf` (only
    /// Q11's FRACTION depends on it).
    pub fn random(query: u8, sf: f64, rng: &mut impl Rng64) -> Params {
        use Subst as S;
        let subst = match query {
            1 => S::Q1 {
                delta_days: rng.between(60, 120) as i32,
            },
            2 => S::Q2 {
                size: rng.between(1, 50) as i32,
                type_syllable: s(pick(rng, &TYPE_SYLLABLE_3)),
                region: s(pick(rng, &REGIONS)),
            },
            3 => S::Q3 {
                segment: s(pick(rng, &SEGMENTS)),
                date: ymd(1995, 3, 1).add_days(rng.below(31) as i32),
            },
            4 => S::Q4 {
                date: month_1993_to_1997_10(rng),
            },
            5 => S::Q5 {
                region: s(pick(rng, &REGIONS)),
                date: january_1993_to_1997(rng),
            },
            6 => S::Q6 {
                date: january_1993_to_1997(rng),
                discount_hundredths: rng.between(2, 9) as i64,
                quantity: rng.between(24, 25) as i64,
            },
            7 => {
                let [a, b] = distinct::<2>(rng, NATIONS.len());
                S::Q7 {
                    nation1: s(NATIONS[a].0),
                    nation2: s(NATIONS[b].0),
                }
            }
            8 => {
                let (nation, regionkey) = NATIONS[rng.below(NATIONS.len() as u64) as usize];
                S::Q8 {
                    nation: s(nation),
                    region: s(REGIONS[regionkey as usize]),
                    type_: format!(
                        "{} {} {}",
                        pick(rng, &TYPE_SYLLABLE_1),
                        pick(rng, &TYPE_SYLLABLE_2),
                        pick(rng, &TYPE_SYLLABLE_3)
                    ),
                }
            }
            9 => S::Q9 {
                color: s(pick(rng, &COLORS)),
            },
            10 => S::Q10 {
                date: ymd(1993, 2, 1).add_months(rng.below(24) as i32),
            },
            11 => S::Q11 {
                nation: s(pick_nation(rng)),
                fraction: Fraction::for_scale(sf),
            },
            12 => {
                let [a, b] = distinct::<2>(rng, MODES.len());
                S::Q12 {
                    shipmode1: s(MODES[a]),
                    shipmode2: s(MODES[b]),
                    date: january_1993_to_1997(rng),
                }
            }
            13 => S::Q13 {
                word1: s(pick(rng, &Q13_WORD1)),
                word2: s(pick(rng, &Q13_WORD2)),
            },
            14 => S::Q14 {
                date: ymd(1993, 1, 1).add_months(rng.below(60) as i32),
            },
            15 => S::Q15 {
                date: month_1993_to_1997_10(rng),
            },
            16 => S::Q16 {
                brand: brand(rng),
                type_prefix: format!("{} {}", pick(rng, &TYPE_SYLLABLE_1), pick(rng, &TYPE_SYLLABLE_2)),
                sizes: distinct::<8>(rng, 50).map(|i| i as i32 + 1),
            },
            17 => S::Q17 {
                brand: brand(rng),
                container: format!(
                    "{} {}",
                    pick(rng, &CONTAINER_SYLLABLE_1),
                    pick(rng, &CONTAINER_SYLLABLE_2)
                ),
            },
            18 => S::Q18 {
                quantity: rng.between(312, 315) as i64,
            },
            19 => S::Q19 {
                quantities: [
                    rng.between(1, 10) as i64,
                    rng.between(10, 20) as i64,
                    rng.between(20, 30) as i64,
                ],
                brands: [brand(rng), brand(rng), brand(rng)],
            },
            20 => S::Q20 {
                color: s(pick(rng, &COLORS)),
                date: january_1993_to_1997(rng),
                nation: s(pick_nation(rng)),
            },
            21 => S::Q21 {
                nation: s(pick_nation(rng)),
            },
            22 => {
                let span = usize::from(COUNTRY_CODE_MAX - COUNTRY_CODE_MIN) + 1;
                S::Q22 {
                    country_codes: distinct::<7>(rng, span).map(|i| COUNTRY_CODE_MIN + i as u8),
                }
            }
            _ => S::OutOfRange,
        };
        Params { query, subst }
    }

    /// The values as `NAME=value` pairs separated by `; `, e.g. `DELTA=90`.
    pub fn describe(&self) -> String {
        use Subst as S;
        let parts: Vec<String> = match &self.subst {
            S::Q1 { delta_days } => vec![format!("DELTA={delta_days}")],
            S::Q2 {
                size,
                type_syllable,
                region,
            } => {
                vec![
                    format!("SIZE={size}"),
                    format!("TYPE={type_syllable}"),
                    format!("REGION={region}"),
                ]
            }
            S::Q3 { segment, date } => vec![format!("SEGMENT={segment}"), format!("DATE={date}")],
            S::Q4 { date } | S::Q10 { date } | S::Q14 { date } | S::Q15 { date } => vec![format!("DATE={date}")],
            S::Q5 { region, date } => vec![format!("REGION={region}"), format!("DATE={date}")],
            S::Q6 {
                date,
                discount_hundredths,
                quantity,
            } => vec![
                format!("DATE={date}"),
                format!("DISCOUNT=0.{discount_hundredths:02}"),
                format!("QUANTITY={quantity}"),
            ],
            S::Q7 { nation1, nation2 } => vec![format!("NATION1={nation1}"), format!("NATION2={nation2}")],
            S::Q8 { nation, region, type_ } => {
                vec![
                    format!("NATION={nation}"),
                    format!("REGION={region}"),
                    format!("TYPE={type_}"),
                ]
            }
            S::Q9 { color } => vec![format!("COLOR={color}")],
            S::Q11 { nation, fraction } => vec![format!("NATION={nation}"), format!("FRACTION={}", fraction.as_f64())],
            S::Q12 {
                shipmode1,
                shipmode2,
                date,
            } => vec![
                format!("SHIPMODE1={shipmode1}"),
                format!("SHIPMODE2={shipmode2}"),
                format!("DATE={date}"),
            ],
            S::Q13 { word1, word2 } => vec![format!("WORD1={word1}"), format!("WORD2={word2}")],
            S::Q16 {
                brand,
                type_prefix,
                sizes,
            } => vec![
                format!("BRAND={brand}"),
                format!("TYPE={type_prefix}"),
                format!("SIZE1..8={}", join(sizes)),
            ],
            S::Q17 { brand, container } => vec![format!("BRAND={brand}"), format!("CONTAINER={container}")],
            S::Q18 { quantity } => vec![format!("QUANTITY={quantity}")],
            S::Q19 { quantities, brands } => vec![
                format!("QUANTITY1..3={}", join(quantities)),
                format!("BRAND1..3={}", join(brands)),
            ],
            S::Q20 { color, date, nation } => {
                vec![
                    format!("COLOR={color}"),
                    format!("DATE={date}"),
                    format!("NATION={nation}"),
                ]
            }
            S::Q21 { nation } => vec![format!("NATION={nation}")],
            S::Q22 { country_codes } => vec![format!("I1..7={}", join(country_codes))],
            S::OutOfRange => vec![format!("no query {} (queries are 1..={QUERIES})", self.query)],
        };
        parts.join("; ")
    }
}

fn join<T: std::fmt::Display>(items: &[T]) -> String {
    items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",")
}

fn pick<'a>(rng: &mut impl Rng64, list: &[&'a str]) -> &'a str {
    list[rng.below(list.len() as u64) as usize]
}

fn pick_nation(rng: &mut impl Rng64) -> &'static str {
    NATIONS[rng.below(NATIONS.len() as u64) as usize].0
}

/// `Brand#MN`, M and N uniform in 1..=5 (clause 2.4.16.3).
fn brand(rng: &mut impl Rng64) -> String {
    format!("Brand#{}{}", rng.between(1, 5), rng.between(1, 5))
}

/// January 1st of a year uniform in 1993..=1997.
fn january_1993_to_1997(rng: &mut impl Rng64) -> Date {
    ymd(1993 + rng.below(5) as i32, 1, 1)
}

/// The first day of a month uniform from January 1993 to October 1997
/// (58 months; Q4 and Q15).
fn month_1993_to_1997_10(rng: &mut impl Rng64) -> Date {
    ymd(1993, 1, 1).add_months(rng.below(58) as i32)
}

/// `N` distinct indexes uniform in `0..n` (a partial Fisher–Yates shuffle);
/// `n >= N`.
fn distinct<const N: usize>(rng: &mut impl Rng64, n: usize) -> [usize; N] {
    assert!(n >= N, "cannot draw {N} distinct values from {n}");
    let mut pool: Vec<usize> = (0..n).collect();
    let mut out = [0; N];
    for (i, slot) in out.iter_mut().enumerate() {
        let j = i + rng.below((n - i) as u64) as usize;
        pool.swap(i, j);
        *slot = pool[i];
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::tpcc::random::Xoshiro256StarStar;

    fn first_of_month(d: Date) -> bool {
        d.ymd().2 == 1
    }

    fn in_dates(d: Date, lo: Date, hi: Date) -> bool {
        lo <= d && d <= hi
    }

    fn is_brand(b: &str) -> bool {
        let digits = b.strip_prefix("Brand#").unwrap_or("");
        digits.len() == 2 && digits.bytes().all(|c| (b'1'..=b'5').contains(&c))
    }

    /// Checks one draw against clause 2.4.N.3; returns a description of
    /// what was drawn for the coverage check.
    fn check(p: &Params, sf: f64) -> String {
        use Subst as S;
        let nations: Vec<&str> = NATIONS.iter().map(|n| n.0).collect();
        assert_eq!(p.subst.query(), Some(p.query), "{p:?}");
        match &p.subst {
            S::Q1 { delta_days } => assert!((60..=120).contains(delta_days), "{p:?}"),
            S::Q2 {
                size,
                type_syllable,
                region,
            } => {
                assert!((1..=50).contains(size), "{p:?}");
                assert!(TYPE_SYLLABLE_3.contains(&type_syllable.as_str()), "{p:?}");
                assert!(REGIONS.contains(&region.as_str()), "{p:?}");
            }
            S::Q3 { segment, date } => {
                assert!(SEGMENTS.contains(&segment.as_str()), "{p:?}");
                assert!(in_dates(*date, ymd(1995, 3, 1), ymd(1995, 3, 31)), "{p:?}");
            }
            S::Q4 { date } | S::Q15 { date } => {
                assert!(
                    first_of_month(*date) && in_dates(*date, ymd(1993, 1, 1), ymd(1997, 10, 1)),
                    "{p:?}"
                );
            }
            S::Q5 { region, date } => {
                assert!(REGIONS.contains(&region.as_str()), "{p:?}");
                assert!(date.ymd().1 == 1 && date.ymd().2 == 1 && (1993..=1997).contains(&date.year()));
            }
            S::Q6 {
                date,
                discount_hundredths,
                quantity,
            } => {
                assert!(date.ymd().1 == 1 && date.ymd().2 == 1 && (1993..=1997).contains(&date.year()));
                assert!(
                    (2..=9).contains(discount_hundredths) && (24..=25).contains(quantity),
                    "{p:?}"
                );
            }
            S::Q7 { nation1, nation2 } => {
                assert!(nations.contains(&nation1.as_str()) && nations.contains(&nation2.as_str()));
                assert_ne!(nation1, nation2);
            }
            S::Q8 { nation, region, type_ } => {
                let (_, regionkey) = NATIONS.iter().find(|n| n.0 == nation).expect("a nation of the list");
                assert_eq!(region, REGIONS[*regionkey as usize], "{p:?}");
                let words: Vec<&str> = type_.split(' ').collect();
                assert_eq!(words.len(), 3, "{p:?}");
                assert!(TYPE_SYLLABLE_1.contains(&words[0]) && TYPE_SYLLABLE_2.contains(&words[1]));
                assert!(TYPE_SYLLABLE_3.contains(&words[2]), "{p:?}");
            }
            S::Q9 { color } => assert!(COLORS.contains(&color.as_str()), "{p:?}"),
            S::Q10 { date } => {
                assert!(
                    first_of_month(*date) && in_dates(*date, ymd(1993, 2, 1), ymd(1995, 1, 1)),
                    "{p:?}"
                );
            }
            S::Q11 { nation, fraction } => {
                assert!(nations.contains(&nation.as_str()), "{p:?}");
                assert!(
                    (fraction.as_f64() - 0.0001 / sf).abs() <= 1e-12 * (0.0001 / sf),
                    "{p:?}"
                );
            }
            S::Q12 {
                shipmode1,
                shipmode2,
                date,
            } => {
                assert!(MODES.contains(&shipmode1.as_str()) && MODES.contains(&shipmode2.as_str()));
                assert_ne!(shipmode1, shipmode2);
                assert!(date.ymd().1 == 1 && date.ymd().2 == 1 && (1993..=1997).contains(&date.year()));
            }
            S::Q13 { word1, word2 } => {
                assert!(
                    Q13_WORD1.contains(&word1.as_str()) && Q13_WORD2.contains(&word2.as_str()),
                    "{p:?}"
                );
            }
            S::Q14 { date } => {
                assert!(
                    first_of_month(*date) && in_dates(*date, ymd(1993, 1, 1), ymd(1997, 12, 1)),
                    "{p:?}"
                );
            }
            S::Q16 {
                brand,
                type_prefix,
                sizes,
            } => {
                assert!(is_brand(brand), "{p:?}");
                let words: Vec<&str> = type_prefix.split(' ').collect();
                assert!(words.len() == 2 && TYPE_SYLLABLE_1.contains(&words[0]) && TYPE_SYLLABLE_2.contains(&words[1]));
                assert!(sizes.iter().all(|s| (1..=50).contains(s)), "{p:?}");
                assert_eq!(sizes.iter().collect::<HashSet<_>>().len(), 8, "{p:?}");
            }
            S::Q17 { brand, container } => {
                assert!(is_brand(brand), "{p:?}");
                let words: Vec<&str> = container.split(' ').collect();
                assert!(words.len() == 2 && CONTAINER_SYLLABLE_1.contains(&words[0]));
                assert!(CONTAINER_SYLLABLE_2.contains(&words[1]), "{p:?}");
            }
            S::Q18 { quantity } => assert!((312..=315).contains(quantity), "{p:?}"),
            S::Q19 { quantities, brands } => {
                assert!((1..=10).contains(&quantities[0]), "{p:?}");
                assert!((10..=20).contains(&quantities[1]), "{p:?}");
                assert!((20..=30).contains(&quantities[2]), "{p:?}");
                assert!(brands.iter().all(|b| is_brand(b)), "{p:?}");
            }
            S::Q20 { color, date, nation } => {
                assert!(
                    COLORS.contains(&color.as_str()) && nations.contains(&nation.as_str()),
                    "{p:?}"
                );
                assert!(date.ymd().1 == 1 && date.ymd().2 == 1 && (1993..=1997).contains(&date.year()));
            }
            S::Q21 { nation } => assert!(nations.contains(&nation.as_str()), "{p:?}"),
            S::Q22 { country_codes } => {
                assert!(country_codes.iter().all(|c| (10..=34).contains(c)), "{p:?}");
                assert_eq!(country_codes.iter().collect::<HashSet<_>>().len(), 7, "{p:?}");
            }
            S::OutOfRange => panic!("{p:?} for a query in range"),
        }
        p.describe()
    }

    #[test]
    fn random_parameters_stay_in_their_clause_ranges_and_cover_them() {
        let mut seen: Vec<HashSet<String>> = vec![HashSet::new(); 23];
        let mut codes = HashSet::new();
        for seed in 0..10_000u64 {
            let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
            let sf = [0.01, 1.0, 10.0, 3.0][seed as usize % 4];
            for q in 1..=QUERIES {
                let p = Params::random(q, sf, &mut rng);
                seen[usize::from(q)].insert(check(&p, sf));
                if let Subst::Q22 { country_codes } = p.subst {
                    codes.extend(country_codes);
                }
            }
        }
        // The draws reach both ends of the ranges, so the ranges are
        // not narrower than the specification's either.
        let any = |q: usize, text: &str| seen[q].iter().any(|d| d.contains(text));
        assert!(any(1, "DELTA=60") && any(1, "DELTA=120"));
        assert!(any(2, "SIZE=1;") && any(2, "SIZE=50;") && any(2, "MIDDLE EAST"));
        assert!(any(3, "DATE=1995-03-01") && any(3, "DATE=1995-03-31"));
        assert!(any(4, "DATE=1993-01-01") && any(4, "DATE=1997-10-01"));
        assert!(any(6, "DISCOUNT=0.02") && any(6, "DISCOUNT=0.09") && any(6, "QUANTITY=25"));
        assert!(any(6, "DATE=1993-01-01") && any(6, "DATE=1997-01-01"));
        assert!(any(10, "DATE=1993-02-01") && any(10, "DATE=1995-01-01"));
        assert!(any(14, "DATE=1993-01-01") && any(14, "DATE=1997-12-01"));
        assert!(any(15, "DATE=1997-10-01"));
        assert!(any(16, "BRAND=Brand#11") && any(16, "BRAND=Brand#55"));
        assert!(any(18, "QUANTITY=312") && any(18, "QUANTITY=315"));
        assert!(any(19, "QUANTITY1..3=1,10,20") && any(19, "QUANTITY1..3=10,20,30"));
        assert_eq!(codes, (10..=34).collect::<HashSet<u8>>());
        assert!(seen[9].len() == COLORS.len(), "every colour is drawn");
        assert_eq!(seen[7].len(), 25 * 24, "every ordered pair of distinct nations");
    }

    #[test]
    fn validation_values_are_the_specification_s() {
        for q in 1..=QUERIES {
            let p = Params::validation(q);
            // Q18 validates with QUANTITY = 300, below the random range
            // [312, 315] (clause 2.4.18.3 says so).
            if q != 18 {
                check(&p, 1.0);
            }
        }
        assert_eq!(Params::validation(18).subst, Subst::Q18 { quantity: 300 });
        assert_eq!(Params::validation(1).describe(), "DELTA=90");
        assert_eq!(Params::validation(2).describe(), "SIZE=15; TYPE=BRASS; REGION=EUROPE");
        assert_eq!(
            Params::validation(6).describe(),
            "DATE=1994-01-01; DISCOUNT=0.06; QUANTITY=24"
        );
        assert_eq!(Params::validation(11).describe(), "NATION=GERMANY; FRACTION=0.0001");
        assert_eq!(Params::validation(22).describe(), "I1..7=13,31,23,29,30,18,17");
        assert_eq!(Params::validation(0).subst, Subst::OutOfRange);
        assert_eq!(Params::validation(23).subst.query(), None);
        let mut rng = Xoshiro256StarStar::seed_from_u64(1);
        assert_eq!(Params::random(23, 1.0, &mut rng).subst, Subst::OutOfRange);
    }

    #[test]
    fn fraction_is_exact_for_decimal_scale_factors() {
        assert_eq!(Fraction::for_scale(1.0).as_f64(), 0.0001);
        assert_eq!(
            Fraction::for_scale(0.01),
            Fraction {
                numerator: 1_000_000,
                denominator: 100_000_000
            }
        );
        assert_eq!(Fraction::for_scale(0.0).denominator, 1);
        assert_eq!(Fraction::for_scale(f64::NAN).denominator, 1);
    }
}
