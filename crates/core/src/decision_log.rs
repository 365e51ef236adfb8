//! A bounded log of the decisions flushing policies take, with their reasons.
//!
//! Every rule a policy fires ("sync replacement writes: raise Pscan by
//! NP_dirty") can be recorded with the numbers behind it, so a user can see
//! *why* the cleaner flushed what it did. The log is a ring: it keeps the
//! newest `capacity` entries and counts what it dropped (TigerBeetle: a limit
//! on everything). Recording is off unless enabled, so the hot path does not
//! format strings nobody reads.

use std::collections::VecDeque;

use crate::types::TimeUs;

/// One decision: which rule fired, when, and with what numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub time_us: TimeUs,
    pub policy: &'static str,
    pub cleaner: u32,
    /// Stable rule name, e.g. `sync_replacement_raise_scan_depth`.
    pub rule: &'static str,
    /// The numbers behind it, human readable.
    pub detail: String,
}

#[derive(Clone, Debug)]
pub struct DecisionLog {
    entries: VecDeque<Decision>,
    capacity: usize,
    enabled: bool,
    dropped: u64,
    /// Rules fired since the page-cleaner driver last took them, by cleaner
    /// (kept whether or not the log is on, while `track_rules` is on; the
    /// driver takes them at every iteration's end, so this stays small).
    fired: Vec<(u32, &'static str)>,
    track_rules: bool,
}

impl DecisionLog {
    pub fn new(capacity: usize, enabled: bool) -> Self {
        Self {
            entries: VecDeque::with_capacity(capacity.min(1024)),
            capacity: capacity.max(1),
            enabled,
            dropped: 0,
            fired: Vec::new(),
            track_rules: false,
        }
    }

    /// Keeps the names of fired rules for [`Self::take_fired`] (the
    /// page-cleaner driver turns this on for its iteration records).
    pub fn set_track_rules(&mut self, on: bool) {
        self.track_rules = on;
        if !on {
            self.fired.clear();
        }
    }

    /// The rules `cleaner` fired since the last call, in order.
    pub fn take_fired(&mut self, cleaner: u32) -> Vec<&'static str> {
        let mut mine = Vec::new();
        self.fired.retain(|&(c, rule)| {
            if c == cleaner {
                mine.push(rule);
                false
            } else {
                true
            }
        });
        mine
    }

    pub fn disabled() -> Self {
        Self::new(1, false)
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    pub fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
    }

    /// Records a decision; `detail` is only evaluated when the log is on.
    pub fn record(
        &mut self,
        time_us: TimeUs,
        policy: &'static str,
        cleaner: u32,
        rule: &'static str,
        detail: impl FnOnce() -> String,
    ) {
        if self.track_rules {
            self.fired.push((cleaner, rule));
        }
        if !self.enabled {
            return;
        }
        if self.entries.len() == self.capacity {
            self.entries.pop_front();
            self.dropped += 1;
        }
        self.entries.push_back(Decision {
            time_us,
            policy,
            cleaner,
            rule,
            detail: detail(),
        });
    }

    /// Takes every entry recorded so far.
    pub fn drain(&mut self) -> Vec<Decision> {
        self.entries.drain(..).collect()
    }

    pub fn entries(&self) -> impl DoubleEndedIterator<Item = &Decision> + ExactSizeIterator {
        self.entries.iter()
    }

    /// Entries lost because the ring was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}
