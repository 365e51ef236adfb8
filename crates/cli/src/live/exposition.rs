//! A [`LiveSample`] in the Prometheus text format (0.0.4), through the
//! official Rust client (`prometheus-client`).
//!
//! Names: InnoDB's where one exists (`innodb_buffer_pool_reads`, ...), the
//! client adding `_total` to every counter as Prometheus requires, so the
//! counter of `Innodb_buffer_pool_reads` is `innodb_buffer_pool_reads_total`;
//! flushwise's own figures are `flushwise_*` with their unit in the name.
//!
//! Labels: `policy` on every series (a `compare` runs one policy after the
//! other; the label names the one running). Counters also carry `phase`:
//! `warmup` or `measured`, split where the run's measurement began, so
//! `phase="measured"` is exactly what the run's result reports and the sum
//! over both phases is the whole run; each series only grows. Transaction
//! counters add `type` and `outcome`; policy parameters `param`; redo
//! margins `margin`. The latency histogram covers the measured window, as
//! the result's latency does.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

use flushwise_core::PoolCounters;
use flushwise_sim::live::{LATENCY_BOUNDS_US, TXN_TYPES};
use flushwise_sim::metrics::TxnCounts;
use flushwise_sim::LiveSample;

/// `Content-Type` of what [`render`] returns.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

type Labels = Vec<(&'static str, String)>;

/// The exposition of `sample`.
pub fn render(sample: &LiveSample) -> Result<String, String> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(SampleCollector(sample.clone())));
    let mut text = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut text, &registry)
        .map_err(|_| "cannot render the metrics".to_string())?;
    Ok(text)
}

/// Reads one sample at scrape time.
#[derive(Debug)]
struct SampleCollector(LiveSample);

/// One pool counter: its name (before `_total`), help, how to read it
/// from the counters.
struct PoolCounter {
    name: &'static str,
    help: &'static str,
    value: fn(&PoolCounters) -> u64,
}

const POOL_COUNTERS: [PoolCounter; 10] = [
    PoolCounter {
        name: "innodb_buffer_pool_read_requests",
        help: "Page requests (fixes) by user threads (Innodb_buffer_pool_read_requests).",
        value: |c| c.requests,
    },
    PoolCounter {
        name: "innodb_buffer_pool_reads",
        help: "Pages read from the device for misses (Innodb_buffer_pool_reads).",
        value: |c| c.reads,
    },
    PoolCounter {
        name: "innodb_buffer_pool_pages_flushed",
        help: "Pages written, every kind: background and synchronous (Innodb_buffer_pool_pages_flushed).",
        value: |c| c.async_writes() + c.sync_writes(),
    },
    PoolCounter {
        name: "innodb_buffer_pool_wait_free",
        help: "Times a user thread found no free frame and had to wait or flush (Innodb_buffer_pool_wait_free).",
        value: |c| c.wait_free,
    },
    PoolCounter {
        name: "flushwise_sync_replacement_writes",
        help:
            "Synchronous replacement writes: a user thread wrote a dirty victim to free a frame (single-page flushes).",
        value: |c| c.sync_replacement_writes,
    },
    PoolCounter {
        name: "flushwise_sync_recoverability_writes",
        help: "Synchronous recoverability writes: a user thread flushed past the redo sync margin (sync preflush).",
        value: |c| c.sync_recoverability_writes,
    },
    PoolCounter {
        name: "flushwise_async_writes",
        help: "Background writes by the page cleaners (LRU batch, flush list, cleaning).",
        value: |c| c.async_writes(),
    },
    PoolCounter {
        name: "flushwise_lru_batch_flush_pages",
        help: "Dirty pages written by the LRU batch (buffer_LRU_batch_flush_total_pages).",
        value: |c| c.lru_batch_flush_pages,
    },
    PoolCounter {
        name: "flushwise_flush_list_pages",
        help: "Pages written by the flush-list batch (buffer_flush_adaptive_total_pages).",
        value: |c| c.flush_list_pages,
    },
    PoolCounter {
        name: "flushwise_user_stalls",
        help: "Times a user thread was held up for a free frame or redo space.",
        value: |c| c.user_stalls,
    },
];

fn labels(policy: &str, more: &[(&'static str, &str)]) -> Labels {
    let mut l: Labels = vec![("policy", policy.to_string())];
    l.extend(more.iter().map(|(k, v)| (*k, v.to_string())));
    l
}

/// One metric family: a descriptor, then one series per label set.
fn family<M: EncodeMetric>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<Unit>,
    metric_type: MetricType,
    series: Vec<(Labels, M)>,
) -> Result<(), std::fmt::Error> {
    let mut metric = encoder.encode_descriptor(name, help, unit.as_ref(), metric_type)?;
    for (set, value) in &series {
        value.encode(metric.encode_family(set)?)?;
    }
    Ok(())
}

fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    series: Vec<(Labels, f64)>,
) -> Result<(), std::fmt::Error> {
    let series = series.into_iter().map(|(l, v)| (l, ConstGauge::new(v))).collect();
    family(encoder, name, help, None, MetricType::Gauge, series)
}

fn txn_series(policy: &str, phase: &str, t: &TxnCounts) -> Vec<(Labels, ConstCounter<u64>)> {
    let mut out = Vec::new();
    for (i, name) in TXN_TYPES.iter().enumerate() {
        // `other` only exists in traces, `query` and `refresh` in TPC-H;
        // leave them out when nothing ran.
        if matches!(*name, "other" | "query" | "refresh") && t.committed[i] + t.rolled_back[i] == 0 {
            continue;
        }
        for (outcome, n) in [("committed", t.committed[i]), ("rolled_back", t.rolled_back[i])] {
            out.push((
                labels(policy, &[("phase", phase), ("type", name), ("outcome", outcome)]),
                ConstCounter::new(n),
            ));
        }
    }
    out
}

impl Collector for SampleCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let s = &self.0;
        let p = s.policy.as_str();
        let pool_warmup = s.pool_warmup();
        let phases = [("warmup", &pool_warmup), ("measured", &s.pool_measured)];

        family(
            &mut encoder,
            "flushwise_run_info",
            "The run being watched: its shell (simulator or engine), seed and configuration hash.",
            None,
            MetricType::Gauge,
            vec![(
                labels(
                    p,
                    &[
                        ("shell", &s.shell),
                        ("seed", &s.seed.to_string()),
                        ("config_hash", &s.config_hash),
                    ],
                ),
                ConstGauge::new(1i64),
            )],
        )?;
        gauge(
            &mut encoder,
            "flushwise_run_elapsed_seconds",
            "Time since the run began, warm-up included (simulated seconds in the simulator).",
            vec![(labels(p, &[]), s.time_s)],
        )?;
        gauge(
            &mut encoder,
            "flushwise_warming_up",
            "1 while the run warms up (not measured), 0 once the measurement began.",
            vec![(labels(p, &[]), f64::from(u8::from(s.warmup)))],
        )?;
        gauge(
            &mut encoder,
            "flushwise_run_finished",
            "1 once the run is over: the values are its final ones.",
            vec![(labels(p, &[]), f64::from(u8::from(s.finished)))],
        )?;

        for c in &POOL_COUNTERS {
            let series = phases
                .iter()
                .map(|(phase, counters)| (labels(p, &[("phase", phase)]), ConstCounter::new((c.value)(counters))))
                .collect();
            family(&mut encoder, c.name, c.help, None, MetricType::Counter, series)?;
        }
        let log = [
            ("warmup", s.log_written_warmup_bytes()),
            ("measured", s.log_written_measured_bytes),
        ];
        family(
            &mut encoder,
            "innodb_os_log_written",
            "Redo bytes generated (LSN advance; Innodb_os_log_written).",
            None,
            MetricType::Counter,
            log.iter()
                .map(|(phase, b)| (labels(p, &[("phase", phase)]), ConstCounter::new(*b)))
                .collect(),
        )?;
        family(
            &mut encoder,
            "flushwise_user_stall",
            "Time user threads were held up for a free frame or redo space.",
            Some(Unit::Seconds),
            MetricType::Counter,
            phases
                .iter()
                .map(|(phase, c)| {
                    (
                        labels(p, &[("phase", phase)]),
                        ConstCounter::new(c.user_stall_us() as f64 / 1e6),
                    )
                })
                .collect(),
        )?;
        let txns_warmup = s.txns_warmup();
        let mut txns = txn_series(p, "warmup", &txns_warmup);
        txns.extend(txn_series(p, "measured", &s.txns_measured));
        family(
            &mut encoder,
            "flushwise_transactions",
            "Transactions finished, by type and outcome (New-Order's business rollbacks are rolled_back).",
            None,
            MetricType::Counter,
            txns,
        )?;

        gauge(
            &mut encoder,
            "innodb_buffer_pool_pages_total",
            "Frames in the buffer pool (Innodb_buffer_pool_pages_total).",
            vec![(labels(p, &[]), s.pages_total as f64)],
        )?;
        gauge(
            &mut encoder,
            "innodb_buffer_pool_pages_dirty",
            "Dirty pages, the flush list's length (Innodb_buffer_pool_pages_dirty).",
            vec![(labels(p, &[]), s.pages_dirty as f64)],
        )?;
        gauge(
            &mut encoder,
            "innodb_buffer_pool_pages_free",
            "Frames on the free list (Innodb_buffer_pool_pages_free).",
            vec![(labels(p, &[]), s.pages_free as f64)],
        )?;
        gauge(
            &mut encoder,
            "innodb_checkpoint_age",
            "Bytes of redo since the last checkpoint (Innodb_checkpoint_age).",
            vec![(labels(p, &[]), s.checkpoint_age_bytes as f64)],
        )?;
        gauge(
            &mut encoder,
            "innodb_checkpoint_max_age",
            "Bytes of checkpoint age at which a synchronous checkpoint is due (Innodb_checkpoint_max_age).",
            vec![(labels(p, &[]), s.margins.max_checkpoint_age_bytes as f64)],
        )?;
        let m = &s.margins;
        gauge(
            &mut encoder,
            "flushwise_redo_margin_bytes",
            "InnoDB 5.6's redo margins (log_calc_max_ages): max_modified_age_async (adaptive flushing's 100 % point), \
             max_modified_age_sync (writers flush synchronously beyond it), max_checkpoint_age_async, max_checkpoint_age.",
            [
                ("max_modified_age_async", m.max_modified_age_async_bytes),
                ("max_modified_age_sync", m.max_modified_age_sync_bytes),
                ("max_checkpoint_age_async", m.max_checkpoint_age_async_bytes),
                ("max_checkpoint_age", m.max_checkpoint_age_bytes),
            ]
            .iter()
            .map(|(margin, b)| (labels(p, &[("margin", margin)]), *b as f64))
            .collect(),
        )?;
        gauge(
            &mut encoder,
            "flushwise_policy_parameter",
            "The page-cleaning policy's parameters as they stand (e.g. Pscan, Pio, or what flushwise learned).",
            s.parameters
                .iter()
                .map(|(k, v)| (labels(p, &[("param", k)]), *v))
                .collect(),
        )?;

        let mut latency = encoder.encode_descriptor(
            "flushwise_transaction_latency",
            "Transaction latency over the measured window, first attempt's begin to the final commit or rollback.",
            Some(&Unit::Seconds),
            MetricType::Histogram,
        )?;
        for l in &s.latency {
            let set = labels(p, &[("type", &l.txn_type)]);
            let mut below = 0;
            let buckets: Vec<(f64, u64)> = LATENCY_BOUNDS_US
                .iter()
                .zip(&l.at_most)
                .map(|(&bound, &at_most)| {
                    // The encoder adds the buckets up itself.
                    let in_bucket = at_most.saturating_sub(below);
                    below = at_most.max(below);
                    (bound as f64 / 1e6, in_bucket)
                })
                .collect();
            latency.encode_family(&set)?.encode_histogram::<NoLabelSet>(
                l.sum_us as f64 / 1e6,
                l.count,
                &buckets,
                None,
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flushwise_core::RedoMargins;
    use flushwise_sim::LatencyBuckets;

    fn sample() -> LiveSample {
        let mut run = PoolCounters {
            requests: 1_000,
            reads: 70,
            lru_batch_flush_pages: 5,
            flush_list_pages: 6,
            sync_replacement_writes: 3,
            sync_recoverability_writes: 2,
            wait_free: 4,
            free_frame_stall_us: 1_500_000,
            redo_space_stall_us: 500_000,
            ..PoolCounters::default()
        };
        let measured = PoolCounters {
            requests: 600,
            reads: 40,
            sync_replacement_writes: 1,
            free_frame_stall_us: 250_000,
            ..PoolCounters::default()
        };
        run.user_stalls = 9;
        let mut txns_run = TxnCounts::default();
        txns_run.committed[0] = 10;
        txns_run.rolled_back[0] = 1;
        txns_run.committed[1] = 12;
        let mut txns_measured = TxnCounts::default();
        txns_measured.committed[0] = 6;
        txns_measured.committed[1] = 7;
        LiveSample {
            shell: "simulator".into(),
            policy: "mysql56:pscan=1024".into(),
            seed: 7,
            config_hash: "00ff".into(),
            time_s: 12.5,
            warmup: false,
            finished: true,
            pool_run: run,
            pool_measured: measured,
            txns_run,
            txns_measured,
            log_written_run_bytes: 9_000,
            log_written_measured_bytes: 4_000,
            latency: vec![LatencyBuckets {
                txn_type: "new_order".into(),
                count: 6,
                sum_us: 30_000,
                at_most: LATENCY_BOUNDS_US
                    .iter()
                    .map(|&b| if b < 5_000 { 2 } else { 6 })
                    .collect(),
            }],
            pages_total: 4096,
            pages_dirty: 1000,
            pages_free: 32,
            checkpoint_age_bytes: 123_456,
            margins: RedoMargins {
                group_capacity_bytes: 1,
                max_modified_age_async_bytes: 100,
                max_modified_age_sync_bytes: 200,
                max_checkpoint_age_async_bytes: 300,
                max_checkpoint_age_bytes: 400,
            },
            parameters: vec![("pscan".into(), 1024.0), ("pio".into(), 200.0)],
            decisions: Vec::new(),
        }
    }

    /// (name with labels, value) of every sample line.
    fn lines(text: &str) -> Vec<(String, f64)> {
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(|l| {
                let (name, value) = l.rsplit_once(' ').expect("name value");
                (name.to_string(), value.parse().expect("a number"))
            })
            .collect()
    }

    fn value(text: &str, series: &str) -> f64 {
        lines(text)
            .into_iter()
            .find(|(n, _)| n == series)
            .unwrap_or_else(|| panic!("no {series} in\n{text}"))
            .1
    }

    #[test]
    fn innodb_counters_get_total_and_both_phases_with_the_policy() {
        let text = render(&sample()).unwrap();
        let l = r#"{policy="mysql56:pscan=1024",phase="measured"}"#;
        assert_eq!(value(&text, &format!("innodb_buffer_pool_reads_total{l}")), 40.0);
        assert_eq!(
            value(
                &text,
                r#"innodb_buffer_pool_reads_total{policy="mysql56:pscan=1024",phase="warmup"}"#
            ),
            30.0
        );
        assert_eq!(
            value(&text, &format!("innodb_buffer_pool_read_requests_total{l}")),
            600.0
        );
        assert_eq!(
            value(&text, &format!("flushwise_sync_replacement_writes_total{l}")),
            1.0
        );
        assert_eq!(value(&text, &format!("flushwise_user_stall_seconds_total{l}")), 0.25);
        assert_eq!(value(&text, &format!("innodb_os_log_written_total{l}")), 4000.0);
        // Pages flushed = background + synchronous, over the whole run.
        let flushed: f64 = lines(&text)
            .iter()
            .filter(|(n, _)| n.starts_with("innodb_buffer_pool_pages_flushed_total{"))
            .map(|(_, v)| v)
            .sum();
        assert_eq!(flushed, 16.0);
        assert!(text.contains("# TYPE innodb_buffer_pool_reads_total counter"), "{text}");
        assert!(text.contains("# TYPE innodb_buffer_pool_pages_dirty gauge"), "{text}");
    }

    #[test]
    fn transactions_split_by_type_outcome_and_phase() {
        let text = render(&sample()).unwrap();
        let t = |phase: &str, ty: &str, outcome: &str| {
            value(
                &text,
                &format!(
                    r#"flushwise_transactions_total{{policy="mysql56:pscan=1024",phase="{phase}",type="{ty}",outcome="{outcome}"}}"#
                ),
            )
        };
        assert_eq!(t("measured", "new_order", "committed"), 6.0);
        assert_eq!(t("warmup", "new_order", "committed"), 4.0);
        assert_eq!(t("warmup", "new_order", "rolled_back"), 1.0);
        assert_eq!(t("measured", "payment", "committed"), 7.0);
        assert!(!text.contains(r#"type="other""#), "{text}");
    }

    #[test]
    fn gauges_margins_parameters_and_latency_histogram() {
        let text = render(&sample()).unwrap();
        let p = r#"policy="mysql56:pscan=1024""#;
        assert_eq!(value(&text, &format!("innodb_buffer_pool_pages_dirty{{{p}}}")), 1000.0);
        assert_eq!(value(&text, &format!("innodb_buffer_pool_pages_total{{{p}}}")), 4096.0);
        assert_eq!(value(&text, &format!("innodb_checkpoint_age{{{p}}}")), 123_456.0);
        assert_eq!(value(&text, &format!("innodb_checkpoint_max_age{{{p}}}")), 400.0);
        assert_eq!(
            value(
                &text,
                &format!(r#"flushwise_redo_margin_bytes{{{p},margin="max_modified_age_sync"}}"#)
            ),
            200.0
        );
        assert_eq!(
            value(&text, &format!(r#"flushwise_policy_parameter{{{p},param="pscan"}}"#)),
            1024.0
        );
        let h = |suffix: &str| value(&text, &format!(r#"flushwise_transaction_latency_seconds{suffix}"#));
        assert_eq!(h(&format!(r#"_bucket{{{p},type="new_order",le="0.001"}}"#)), 2.0);
        assert_eq!(h(&format!(r#"_bucket{{{p},type="new_order",le="0.005"}}"#)), 6.0);
        assert_eq!(h(&format!(r#"_bucket{{{p},type="new_order",le="+Inf"}}"#)), 6.0);
        assert_eq!(h(&format!(r#"_count{{{p},type="new_order"}}"#)), 6.0);
        assert_eq!(h(&format!(r#"_sum{{{p},type="new_order"}}"#)), 0.03);
        assert!(text.contains("# TYPE flushwise_transaction_latency_seconds histogram"));
    }

    #[test]
    fn every_series_line_parses_and_every_family_is_declared_once() {
        let text = render(&sample()).unwrap();
        let mut declared = std::collections::HashSet::new();
        for l in text.lines().filter(|l| l.starts_with("# TYPE ")) {
            let name = l.split(' ').nth(2).unwrap().to_string();
            assert!(declared.insert(name.clone()), "{name} declared twice");
        }
        for (series, _) in lines(&text) {
            let name = series.split('{').next().unwrap();
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| name.strip_suffix(s).filter(|f| declared.contains(*f)))
                .unwrap_or(name);
            assert!(declared.contains(family), "{name} has no # TYPE line");
            assert!(
                series.contains(r#"policy="mysql56:pscan=1024""#),
                "{series} lacks the policy"
            );
        }
    }
}
