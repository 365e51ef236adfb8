//! `trace record-model`, `trace oracle-general` and `trace info`.
//!
//! A damaged trace is never summarised as if it were whole: the reader's
//! error (which names the byte offset where the damage was found) becomes
//! the command's one-line error and exit code 2.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter};
use std::path::Path;

use flushwise_tpcc_model::{TpccModel, TpccModelConfig, TpccRefGen};
use flushwise_trace::oracle_general::{self, ExportOptions};
use flushwise_trace::{TraceEvent, TraceHeader, TraceReader, TraceWriter, FORMAT_VERSION};

use crate::args::{page_size_flag, InfoArgs, OracleGeneralArgs, RecordModelArgs};
use flushwise_lab::COMMIT;

fn open_trace(path: &Path) -> Result<TraceReader<BufReader<File>>, String> {
    let file = File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
    TraceReader::new(BufReader::with_capacity(1 << 20, file)).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn record_model(args: &RecordModelArgs) -> Result<(), String> {
    if args.connections == 0 {
        return Err("--connections 0: at least one connection is needed".into());
    }
    if args.transactions == 0 {
        return Err("--transactions 0: at least one transaction is needed".into());
    }
    let page_size_bytes = page_size_flag(&args.page_size)?;
    let model = TpccModel::new(TpccModelConfig {
        warehouses: args.warehouses,
        page_size_bytes,
        seed: args.seed,
        ..TpccModelConfig::default()
    })
    .map_err(|e| format!("--warehouses {} / --page-size {}: {e}", args.warehouses, args.page_size))?;
    let description = format!(
        "tpcc-model warehouses={} connections={} transactions={} seed={} page_size={} commit={}",
        args.warehouses, args.connections, args.transactions, args.seed, page_size_bytes, COMMIT
    );
    let file = File::create(&args.out).map_err(|e| format!("--out {}: cannot create: {e}", args.out.display()))?;
    let out_err = |e: flushwise_trace::TraceError| format!("--out {}: {e}", args.out.display());
    let mut writer = TraceWriter::new(
        BufWriter::with_capacity(1 << 20, file),
        &TraceHeader::new(page_size_bytes, description),
    )
    .map_err(out_err)?;
    for record in TpccRefGen::new(model, args.connections, args.transactions) {
        writer.write(&record).map_err(out_err)?;
    }
    let records = writer.records_written();
    writer.finish().map_err(out_err)?;
    println!(
        "wrote {} records ({} transactions, {} agents) to {}",
        records,
        args.transactions,
        args.connections,
        args.out.display()
    );
    Ok(())
}

pub fn oracle_general(args: &OracleGeneralArgs) -> Result<(), String> {
    let reader = open_trace(&args.input)?;
    let mut out = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&args.output)
        .map_err(|e| format!("{}: cannot create: {e}", args.output.display()))?;
    let summary = oracle_general::export(reader, &mut out, ExportOptions::default())
        .map_err(|e| format!("{}: {e}", args.input.display()))?;
    println!(
        "wrote {} oracleGeneral requests ({} distinct pages) to {}",
        summary.requests,
        summary.distinct_pages,
        args.output.display()
    );
    Ok(())
}

pub fn info(args: &InfoArgs) -> Result<(), String> {
    let mut reader = open_trace(&args.file)?;
    let header = reader.header().clone();
    let (mut records, mut fixes, mut unfixes, mut modified, mut redo_bytes) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut begins, mut commits, mut rollbacks) = (0u64, 0u64, 0u64);
    let mut agents: HashSet<u32> = HashSet::new();
    let mut pages: HashSet<u64> = HashSet::new();
    for record in reader.by_ref() {
        let record = record.map_err(|e| format!("{}: {e}", args.file.display()))?;
        records += 1;
        agents.insert(record.agent);
        match record.event {
            TraceEvent::Fix { page, .. } => {
                fixes += 1;
                pages.insert(page.as_u64());
            }
            TraceEvent::Unfix {
                modified: m,
                redo_bytes: r,
                ..
            } => {
                unfixes += 1;
                modified += u64::from(m);
                redo_bytes += u64::from(r);
            }
            TraceEvent::TxnBegin { .. } => begins += 1,
            TraceEvent::TxnCommit { .. } => commits += 1,
            TraceEvent::TxnRollback { .. } => rollbacks += 1,
        }
    }
    let lines = [
        ("file", args.file.display().to_string()),
        ("format version", FORMAT_VERSION.to_string()),
        ("page size", format!("{} bytes", header.page_size_bytes)),
        ("description", header.description.clone()),
        ("records", records.to_string()),
        ("agents", agents.len().to_string()),
        ("fixes (requests)", fixes.to_string()),
        ("distinct pages", pages.len().to_string()),
        ("unfixes / modified", format!("{unfixes} / {modified}")),
        ("redo bytes", redo_bytes.to_string()),
        ("transactions begun", begins.to_string()),
        ("commits / rollbacks", format!("{commits} / {rollbacks}")),
        (
            "status",
            "intact (trailer and every block checksum verified)".to_string(),
        ),
    ];
    for (k, v) in lines {
        println!("{k:<20}  {v}");
    }
    Ok(())
}
