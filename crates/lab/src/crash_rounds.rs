//! `tpcc crash`'s rounds: one SIGKILL of a TPC-C run and the timed
//! recovery that followed, and their JSON lines, CSV and table.

use serde::Serialize;

use crate::render::{flatten, render_table, Csv};

/// One crash and its recovery.
#[derive(Serialize)]
pub struct CrashRound {
    pub round: u32,
    pub policy: String,
    pub killed_after_s: f64,
    /// Wall time of the reopen, s.
    pub recovery_s: f64,
    pub redo_bytes_applied: u64,
    pub records_applied: u64,
    pub losers_rolled_back: u64,
    pub pages_repaired_from_doublewrite: u64,
    /// Redo applied per second of recovery, MB/s.
    pub redo_apply_mb_per_s: f64,
    /// The recovery costs the killed run's policy planned with: the open's
    /// fixed part, s, and the redo apply rate beyond it, MiB/s (`None`: the
    /// policy does not bound recovery time).
    pub planned_fixed_s: Option<f64>,
    pub planned_redo_apply_mib_per_s: Option<f64>,
    /// ... and the wall time per page recovery reads ahead, us.
    pub planned_page_read_us: Option<f64>,
    /// Where they came from: `measured` (this database's earlier opens and
    /// recoveries), `given` or `default` (`fixed/rate/page` when they
    /// differ).
    pub planned_from: Option<String>,
    /// Where the recovery time went, s (`RecoveryPhases`): the redo log's
    /// scan, redo apply, the free-page scan (every page of the database,
    /// whatever the redo), loser rollback, the final checkpoint, the rest.
    pub log_scan_s: f64,
    /// The pages the redo names read ahead (`redo_pages_read` of the
    /// `redo_pages_named`), s.
    pub redo_read_ahead_s: f64,
    pub redo_pages_named: u64,
    pub redo_pages_read: u64,
    /// Pages read ahead while the redo was applied (part of `redo_apply_s`).
    pub redo_pages_read_while_applying: u64,
    pub redo_apply_s: f64,
    pub free_page_scan_s: f64,
    pub undo_s: f64,
    pub checkpoint_s: f64,
    pub other_s: f64,
    pub max_recovery_s: Option<f64>,
    pub within_bound: Option<bool>,
}

pub fn json_lines(rounds: &[CrashRound]) -> Result<String, String> {
    let mut out = String::new();
    for r in rounds {
        out.push_str(&serde_json::to_string(r).map_err(|e| format!("cannot encode a round: {e}"))?);
        out.push('\n');
    }
    Ok(out)
}

pub fn csv(rounds: &[CrashRound]) -> String {
    let mut csv = Csv::default();
    for r in rounds {
        csv.push(flatten(r));
    }
    csv.render()
}

pub fn table(rounds: &[CrashRound]) -> String {
    let header: Vec<String> = [
        "round",
        "killed after s",
        "recovery s",
        "redo bytes applied",
        "records applied",
        "losers",
        "redo MB/s",
        "planned fixed s + MiB/s + us/page",
        "pages named / read ahead + while applying",
        "scan / read-ahead / apply / free pages / undo / ckpt / other s",
        "bound",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = rounds
        .iter()
        .map(|r| {
            vec![
                r.round.to_string(),
                format!("{:.1}", r.killed_after_s),
                format!("{:.2}", r.recovery_s),
                r.redo_bytes_applied.to_string(),
                r.records_applied.to_string(),
                r.losers_rolled_back.to_string(),
                format!("{:.1}", r.redo_apply_mb_per_s),
                match (
                    r.planned_fixed_s,
                    r.planned_redo_apply_mib_per_s,
                    r.planned_page_read_us,
                    &r.planned_from,
                ) {
                    (Some(fixed), Some(rate), Some(page), Some(from)) => {
                        format!("{fixed:.2} + {rate:.1} + {page:.0} ({from})")
                    }
                    _ => "-".to_string(),
                },
                format!(
                    "{} / {} + {}",
                    r.redo_pages_named, r.redo_pages_read, r.redo_pages_read_while_applying
                ),
                format!(
                    "{:.2} / {:.2} / {:.2} / {:.2} / {:.2} / {:.2} / {:.2}",
                    r.log_scan_s,
                    r.redo_read_ahead_s,
                    r.redo_apply_s,
                    r.free_page_scan_s,
                    r.undo_s,
                    r.checkpoint_s,
                    r.other_s
                ),
                match (r.max_recovery_s, r.within_bound) {
                    (Some(b), Some(true)) => format!("held ({b} s)"),
                    (Some(b), _) => format!("PAST ({b} s)"),
                    _ => "-".to_string(),
                },
            ]
        })
        .collect();
    render_table(&header, &rows)
}
