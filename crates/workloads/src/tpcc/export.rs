//! CSV export of the nine tables: `OUT_DIR/<table>.csv` for warehouse,
//! district, customer, history, new_order, oorder, order_line, item and
//! stock.
//!
//! Format (RFC 4180): a header of the spec's lower-case column names
//! (clause 1.3; `s_dist_01` … `s_dist_10`), one line per row in key order,
//! `\n` line ends. SQL NULL (o_carrier_id, ol_delivery_d) is an empty
//! field; a string with a comma, a double quote or a line break is quoted
//! with its quotes doubled. Money is a decimal with two places
//! (`-10.00`), rates with four (`0.1234`), dates ISO-8601 in UTC with
//! microseconds (`2024-05-01T12:00:00.000000Z`). HISTORY's synthetic key
//! column `h_seq` is not exported (the spec table has no such column).
//!
//! Rows are read in chunks of [`EXPORT_CHUNK_ROWS`], one read transaction
//! each, so memory stays bounded for any database size.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Bound;
use std::path::{Path, PathBuf};

use super::check::money;
use super::load::require_loaded;
use super::schema::*;
use super::store::{ScanDirection, ScanLock, TpccStore, TpccTxn};
use super::TpccError;

/// Rows per read transaction.
pub const EXPORT_CHUNK_ROWS: usize = 10_000;

/// One exported file.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ExportedTable {
    pub table: &'static str,
    pub path: PathBuf,
    pub rows: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct ExportReport {
    pub out_dir: PathBuf,
    pub tables: Vec<ExportedTable>,
}

/// The header of each table's CSV.
pub fn header(table: Index) -> Vec<String> {
    let cols: &[&str] = match table {
        Index::Warehouse => &[
            "w_id",
            "w_name",
            "w_street_1",
            "w_street_2",
            "w_city",
            "w_state",
            "w_zip",
            "w_tax",
            "w_ytd",
        ],
        Index::District => &[
            "d_id",
            "d_w_id",
            "d_name",
            "d_street_1",
            "d_street_2",
            "d_city",
            "d_state",
            "d_zip",
            "d_tax",
            "d_ytd",
            "d_next_o_id",
        ],
        Index::Customer => &[
            "c_id",
            "c_d_id",
            "c_w_id",
            "c_first",
            "c_middle",
            "c_last",
            "c_street_1",
            "c_street_2",
            "c_city",
            "c_state",
            "c_zip",
            "c_phone",
            "c_since",
            "c_credit",
            "c_credit_lim",
            "c_discount",
            "c_balance",
            "c_ytd_payment",
            "c_payment_cnt",
            "c_delivery_cnt",
            "c_data",
        ],
        Index::History => &[
            "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data",
        ],
        Index::NewOrder => &["no_o_id", "no_d_id", "no_w_id"],
        Index::Oorder => &[
            "o_id",
            "o_d_id",
            "o_w_id",
            "o_c_id",
            "o_entry_d",
            "o_carrier_id",
            "o_ol_cnt",
            "o_all_local",
        ],
        Index::OrderLine => &[
            "ol_o_id",
            "ol_d_id",
            "ol_w_id",
            "ol_number",
            "ol_i_id",
            "ol_supply_w_id",
            "ol_delivery_d",
            "ol_quantity",
            "ol_amount",
            "ol_dist_info",
        ],
        Index::Item => &["i_id", "i_im_id", "i_name", "i_price", "i_data"],
        Index::Stock => {
            let mut v: Vec<String> = vec!["s_i_id".into(), "s_w_id".into(), "s_quantity".into()];
            v.extend((1..=10).map(|i| format!("s_dist_{i:02}")));
            v.extend(["s_ytd", "s_order_cnt", "s_remote_cnt", "s_data"].map(String::from));
            return v;
        }
        _ => &[],
    };
    cols.iter().map(|c| c.to_string()).collect()
}

/// A CSV field: quoted when it must be.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Ten-thousandths as "0.1234".
fn rate(v: u16) -> String {
    format!("{}.{:04}", v / 10_000, v % 10_000)
}

/// Microseconds since the epoch as ISO-8601 UTC.
pub fn iso8601_us(us: u64) -> String {
    let secs = us / 1_000_000;
    let micros = us % 1_000_000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn address(a: &Address) -> [String; 5] {
    [&a.street_1, &a.street_2, &a.city, &a.state, &a.zip].map(|s| csv_field(s))
}

/// The CSV fields of one stored row of `table`.
fn fields(table: Index, v: &[u8]) -> Result<Vec<String>, TpccError> {
    let s = |x: &str| csv_field(x);
    Ok(match table {
        Index::Warehouse => {
            let r = Warehouse::decode(v)?;
            let mut f = vec![r.w_id.to_string(), s(&r.w_name)];
            f.extend(address(&r.w_address));
            f.extend([rate(r.w_tax), money(r.w_ytd)]);
            f
        }
        Index::District => {
            let r = District::decode(v)?;
            let mut f = vec![r.d_id.to_string(), r.d_w_id.to_string(), s(&r.d_name)];
            f.extend(address(&r.d_address));
            f.extend([rate(r.d_tax), money(r.d_ytd), r.d_next_o_id.to_string()]);
            f
        }
        Index::Customer => {
            let r = Customer::decode(v)?;
            let mut f = vec![
                r.c_id.to_string(),
                r.c_d_id.to_string(),
                r.c_w_id.to_string(),
                s(&r.c_first),
                s(&r.c_middle),
                s(&r.c_last),
            ];
            f.extend(address(&r.c_address));
            f.extend([
                s(&r.c_phone),
                iso8601_us(r.c_since),
                s(&r.c_credit),
                money(r.c_credit_lim),
                rate(r.c_discount),
                money(r.c_balance),
                money(r.c_ytd_payment),
                r.c_payment_cnt.to_string(),
                r.c_delivery_cnt.to_string(),
                s(&r.c_data),
            ]);
            f
        }
        Index::History => {
            let r = History::decode(v)?;
            vec![
                r.h_c_id.to_string(),
                r.h_c_d_id.to_string(),
                r.h_c_w_id.to_string(),
                r.h_d_id.to_string(),
                r.h_w_id.to_string(),
                iso8601_us(r.h_date),
                money(r.h_amount),
                s(&r.h_data),
            ]
        }
        Index::NewOrder => {
            let r = NewOrder::decode(v)?;
            vec![r.no_o_id.to_string(), r.no_d_id.to_string(), r.no_w_id.to_string()]
        }
        Index::Oorder => {
            let r = Order::decode(v)?;
            vec![
                r.o_id.to_string(),
                r.o_d_id.to_string(),
                r.o_w_id.to_string(),
                r.o_c_id.to_string(),
                iso8601_us(r.o_entry_d),
                r.o_carrier_id.map(|c| c.to_string()).unwrap_or_default(),
                r.o_ol_cnt.to_string(),
                r.o_all_local.to_string(),
            ]
        }
        Index::OrderLine => {
            let r = OrderLine::decode(v)?;
            vec![
                r.ol_o_id.to_string(),
                r.ol_d_id.to_string(),
                r.ol_w_id.to_string(),
                r.ol_number.to_string(),
                r.ol_i_id.to_string(),
                r.ol_supply_w_id.to_string(),
                r.ol_delivery_d.map(iso8601_us).unwrap_or_default(),
                r.ol_quantity.to_string(),
                money(r.ol_amount),
                s(&r.ol_dist_info),
            ]
        }
        Index::Item => {
            let r = Item::decode(v)?;
            vec![
                r.i_id.to_string(),
                r.i_im_id.to_string(),
                s(&r.i_name),
                money(r.i_price),
                s(&r.i_data),
            ]
        }
        Index::Stock => {
            let r = Stock::decode(v)?;
            let mut f = vec![r.s_i_id.to_string(), r.s_w_id.to_string(), r.s_quantity.to_string()];
            f.extend(r.s_dist.iter().map(|d| s(d)));
            f.extend([
                r.s_ytd.to_string(),
                r.s_order_cnt.to_string(),
                r.s_remote_cnt.to_string(),
                s(&r.s_data),
            ]);
            f
        }
        _ => Vec::new(),
    })
}

/// Calls `f` on every entry of `index` in key order, in chunks of
/// [`EXPORT_CHUNK_ROWS`] read by one transaction each.
pub fn for_each_row(
    store: &impl TpccStore,
    index: Index,
    mut f: impl FnMut(&[u8], &[u8]) -> Result<(), TpccError>,
) -> Result<u64, TpccError> {
    let mut after: Option<Vec<u8>> = None;
    let mut rows = 0u64;
    loop {
        let mut txn = store.begin();
        let start = match &after {
            Some(k) => Bound::Excluded(k.as_slice()),
            None => Bound::Unbounded,
        };
        let chunk = txn.range(
            index,
            start,
            Bound::Unbounded,
            ScanDirection::Forward,
            Some(EXPORT_CHUNK_ROWS),
            ScanLock::Shared,
        )?;
        txn.commit()?;
        for (k, v) in &chunk {
            f(k, v)?;
        }
        rows += chunk.len() as u64;
        if chunk.len() < EXPORT_CHUNK_ROWS {
            return Ok(rows);
        }
        after = chunk.into_iter().last().map(|(k, _)| k);
    }
}

/// Writes the nine tables to `out_dir` (created if missing).
pub fn export(store: &impl TpccStore, out_dir: &Path) -> Result<ExportReport, TpccError> {
    require_loaded(store)?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| TpccError::Io { path, source }
    };
    std::fs::create_dir_all(out_dir).map_err(io(out_dir))?;
    let mut tables = Vec::new();
    for table in TABLES {
        let path = out_dir.join(format!("{}.csv", table.name()));
        let file = File::create(&path).map_err(io(&path))?;
        let mut out = BufWriter::new(file);
        writeln!(out, "{}", header(table).join(",")).map_err(io(&path))?;
        let rows = for_each_row(store, table, |_, v| {
            writeln!(out, "{}", fields(table, v)?.join(",")).map_err(io(&path))
        })?;
        out.flush().map_err(io(&path))?;
        tables.push(ExportedTable {
            table: table.name(),
            path,
            rows,
        });
    }
    Ok(ExportReport {
        out_dir: out_dir.to_path_buf(),
        tables,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_iso_8601_utc() {
        assert_eq!(iso8601_us(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(iso8601_us(951_782_400_000_001), "2000-02-29T00:00:00.000001Z");
        assert_eq!(iso8601_us(1_700_000_000_123_456), "2023-11-14T22:13:20.123456Z");
    }

    #[test]
    fn fields_with_commas_or_quotes_are_quoted() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(money(-1000), "-10.00");
        assert_eq!(money(5), "0.05");
        assert_eq!(rate(1234), "0.1234");
    }

    #[test]
    fn every_table_has_a_header() {
        for t in TABLES {
            assert!(!header(t).is_empty(), "{t:?}");
        }
        assert_eq!(header(Index::Stock).len(), 17);
        assert_eq!(header(Index::Customer).len(), 21);
    }
}
