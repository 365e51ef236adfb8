//! Machine-readable page-cleaner iterations: one [`IterationRecord`] per
//! finished iteration, with every input of Lee et al.'s Table 2 the policy
//! read, its parameters before and after, and the rules that fired, so that
//! anyone can re-derive each transition of Algorithms 1-3 without our code.
//!
//! The shells write one JSON object per line (`--decisions FILE.jsonl`);
//! [`IterationRecord::to_json`] is the one encoder, so the simulator and the
//! engine write the same schema. The schema (version [`SCHEMA_VERSION`]):
//!
//! | field | meaning | Lee et al. |
//! |---|---|---|
//! | `schema` | schema version | |
//! | `policy`, `cleaner`, `iteration` | policy name, cleaner slot, iteration number of this driver (from 0) | |
//! | `started_us`, `ended_us` | iteration start and end, shell time (virtual in the simulator) | |
//! | `t_flushing_us` | start to last write completed | T_flushing |
//! | `np_lru` | pages written by the LRU batch | NP_LRU |
//! | `lru_evicted`, `lru_scanned` | clean pages the LRU batch evicted; pages it scanned | |
//! | `lru_chunks` | LRU chunks run (each at most 100 written pages) | |
//! | `np_flush` | pages written by the flush-list batch | NP_flush |
//! | `np_req_flush` | pages the flush-list phase was asked for (adaptive flushing's recommendation for InnoDB policies) | NP_req_flush |
//! | `np_clean` | pages users scanned for a clean victim since the previous iteration | NP_clean |
//! | `np_dirty` | pages users' single-page flushes scanned (the total) | NP_dirty (`self-tuning:np_dirty=total`) |
//! | `single_page_flush_calls` | passes that reached a single-page flush (`buf_pool_wait_free`); `np_dirty / single_page_flush_calls` rounded up is NP_dirty per call (the default) | |
//! | `lru_scans_failed` | users whose first clean-victim scan found nothing and turned `try_LRU_scan` off (5.6.15) | |
//! | `lru_scans_skipped` | users that found the free list empty and skipped the clean-victim scan because `try_LRU_scan` was off: they went straight to a single-page flush (or, MariaDB, to a wait) | |
//! | `np_sync_rec` | users' synchronous recoverability writes | NP_sync_rec |
//! | `sync_replacement_writes` | users' single-page flushes | |
//! | `lru_len` | LRU length at the end | \|LRU\| |
//! | `free_len_start`, `free_len_end` | free list at the start and the end | \|free\| |
//! | `lru_time_limited`, `flush_time_limited` | a phase stopped at its time limit (Percona) | |
//! | `params_before`, `params_after` | the policy's parameters before and after `end_iteration` (`p_scan` = Pscan, `p_io` = Pio, `np_lru_stable`, ...) | |
//! | `sleep_us` | the sleep chosen (`null`: until woken) | |
//! | `rules` | names of the rules that fired during the iteration, in order | |
//!
//! Invariant: the encoder writes valid JSON for every record (non-finite
//! numbers become `null`; names are escaped).

use std::fmt::Write as _;

use crate::policy::IterationReport;
use crate::types::TimeUs;

/// Version of the JSON schema above.
pub const SCHEMA_VERSION: u32 = 1;

/// One finished page-cleaner iteration (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct IterationRecord {
    pub policy: &'static str,
    pub iteration: u64,
    pub ended_us: TimeUs,
    pub report: IterationReport,
    pub lru_chunks: u32,
    pub params_before: Vec<(&'static str, f64)>,
    pub params_after: Vec<(&'static str, f64)>,
    pub sleep_us: Option<TimeUs>,
    pub rules: Vec<&'static str>,
}

impl IterationRecord {
    /// The record as one line of JSON (no trailing newline).
    pub fn to_json(&self) -> String {
        let r = &self.report;
        let mut s = String::with_capacity(512);
        let _ = write!(
            s,
            "{{\"schema\":{SCHEMA_VERSION},\"policy\":{},\"cleaner\":{},\"iteration\":{},\
             \"started_us\":{},\"ended_us\":{},\"t_flushing_us\":{},\
             \"np_lru\":{},\"lru_evicted\":{},\"lru_scanned\":{},\"lru_chunks\":{},\
             \"np_flush\":{},\"np_req_flush\":{},\"np_clean\":{},\"np_dirty\":{},\"single_page_flush_calls\":{},\
             \"lru_scans_failed\":{},\"lru_scans_skipped\":{},\"np_sync_rec\":{},\
             \"sync_replacement_writes\":{},\"lru_len\":{},\"free_len_start\":{},\"free_len_end\":{},\
             \"lru_time_limited\":{},\"flush_time_limited\":{}",
            json_str(self.policy),
            r.cleaner,
            self.iteration,
            r.started_us,
            self.ended_us,
            r.flushing_time_us,
            r.np_lru,
            r.lru_evicted,
            r.lru_scanned,
            self.lru_chunks,
            r.np_flush,
            r.flush_requested,
            r.np_clean(),
            r.np_dirty(),
            r.user.wait_free,
            r.user.lru_scans_failed,
            r.user.lru_scans_skipped,
            r.np_sync_rec(),
            r.user.sync_replacement_writes,
            r.lru_len,
            r.free_len_at_start,
            r.free_len,
            r.lru_time_limited,
            r.flush_time_limited,
        );
        s.push_str(",\"params_before\":");
        json_params(&mut s, &self.params_before);
        s.push_str(",\"params_after\":");
        json_params(&mut s, &self.params_after);
        match self.sleep_us {
            Some(us) => {
                let _ = write!(s, ",\"sleep_us\":{us}");
            }
            None => s.push_str(",\"sleep_us\":null"),
        }
        s.push_str(",\"rules\":[");
        for (i, rule) in self.rules.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&json_str(rule));
        }
        s.push_str("]}");
        s
    }
}

fn json_params(s: &mut String, params: &[(&'static str, f64)]) {
    s.push('{');
    for (i, (name, value)) in params.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&json_str(name));
        s.push(':');
        s.push_str(&json_number(*value));
    }
    s.push('}');
}

/// A JSON number; integral values without a fraction, non-finite as null.
fn json_number(v: f64) -> String {
    if !v.is_finite() {
        "null".to_string()
    } else if v.fract() == 0.0 && v.abs() < 9.0e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn json_str(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_encodes_every_table_2_input_as_json() {
        let mut report = IterationReport {
            cleaner: 0,
            started_us: 1_000,
            flushing_time_us: 250,
            np_lru: 7,
            np_flush: 9,
            flush_requested: 12,
            lru_len: 900,
            free_len: 100,
            free_len_at_start: 3,
            ..IterationReport::default()
        };
        report.user.clean_victim_scanned = 40;
        report.user.dirty_victim_scanned = 5;
        report.user.sync_recoverability_writes = 2;
        let rec = IterationRecord {
            policy: "self-tuning",
            iteration: 4,
            ended_us: 1_250,
            report,
            lru_chunks: 1,
            params_before: vec![("p_scan", 1024.0), ("ratio", 0.5)],
            params_after: vec![("p_scan", 1029.0), ("bad", f64::NAN)],
            sleep_us: Some(999_750),
            rules: vec!["lru_batch", "sync_replacement_raises_scan_depth"],
        };
        let json = rec.to_json();
        for needle in [
            "\"np_lru\":7",
            "\"np_flush\":9",
            "\"np_req_flush\":12",
            "\"np_clean\":40",
            "\"np_dirty\":5",
            "\"np_sync_rec\":2",
            "\"lru_len\":900",
            "\"free_len_start\":3",
            "\"free_len_end\":100",
            "\"t_flushing_us\":250",
            "\"params_before\":{\"p_scan\":1024,\"ratio\":0.5}",
            "\"params_after\":{\"p_scan\":1029,\"bad\":null}",
            "\"sleep_us\":999750",
            "\"rules\":[\"lru_batch\",\"sync_replacement_raises_scan_depth\"]",
        ] {
            assert!(json.contains(needle), "{needle} missing in {json}");
        }
        assert!(json.starts_with('{') && json.ends_with('}'));
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
