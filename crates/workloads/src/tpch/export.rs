//! CSV export of the eight tables: `OUT_DIR/<table>.csv` (region, nation,
//! supplier, customer, part, partsupp, orders, lineitem), what the DuckDB
//! answer check loads.
//!
//! Format (RFC 4180, as the TPC-C export): a header of the specification's
//! lower-case column names ([`Row::COLUMNS`]), one line per row in
//! primary-key order, `\n` line ends; a field with a comma, a double quote
//! or a line break is quoted with its quotes doubled. Money, discount and
//! tax are decimals with two places, dates `YYYY-MM-DD`, one-letter flags
//! their letter. Rows stream from an unlocked scan, so memory stays bounded
//! for any scale factor; export a database no run is using.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use flushwise_engine::db::Database;

use crate::tpcc::export::csv_field;

use super::access::TpchDb;
use super::load::require_loaded;
use super::schema::{Customer, Lineitem, Nation, Order, Part, PartSupp, Region, Row, Supplier, Table};
use super::TpchError;

/// One exported file.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ExportedTable {
    pub table: &'static str,
    pub path: PathBuf,
    pub rows: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct ExportReport {
    pub tables: Vec<ExportedTable>,
}

fn write_table<R: Row>(tables: &TpchDb<'_>, out_dir: &Path) -> Result<ExportedTable, TpchError> {
    let path = out_dir.join(format!("{}.csv", R::TABLE.name()));
    let io = |source| TpchError::Io {
        path: path.clone(),
        source,
    };
    let mut out = BufWriter::new(File::create(&path).map_err(io)?);
    writeln!(out, "{}", R::COLUMNS.join(",")).map_err(io)?;
    let mut rows = 0u64;
    let mut failed = None;
    tables.scan(|r: R| {
        let line: Vec<String> = r.csv_fields().iter().map(|f| csv_field(f)).collect();
        match writeln!(out, "{}", line.join(",")) {
            Ok(()) => {
                rows += 1;
                true
            }
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(io(e));
    }
    out.flush().map_err(io)?;
    out.get_ref().sync_all().map_err(io)?;
    Ok(ExportedTable {
        table: R::TABLE.name(),
        path: path.clone(),
        rows,
    })
}

/// Writes every table to `out_dir` (created if missing).
pub fn export(db: &Database, out_dir: &Path) -> Result<ExportReport, TpchError> {
    require_loaded(db)?;
    std::fs::create_dir_all(out_dir).map_err(|source| TpchError::Io {
        path: out_dir.to_path_buf(),
        source,
    })?;
    let tables = TpchDb::new(db)?;
    let mut report = ExportReport { tables: Vec::new() };
    for table in Table::DATA {
        let t = match table {
            Table::Region => write_table::<Region>(&tables, out_dir)?,
            Table::Nation => write_table::<Nation>(&tables, out_dir)?,
            Table::Supplier => write_table::<Supplier>(&tables, out_dir)?,
            Table::Customer => write_table::<Customer>(&tables, out_dir)?,
            Table::Part => write_table::<Part>(&tables, out_dir)?,
            Table::PartSupp => write_table::<PartSupp>(&tables, out_dir)?,
            Table::Orders => write_table::<Order>(&tables, out_dir)?,
            Table::Lineitem => write_table::<Lineitem>(&tables, out_dir)?,
            Table::Meta => continue,
        };
        report.tables.push(t);
    }
    Ok(report)
}
