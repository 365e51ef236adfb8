//! From command-line flags to the lab's engine settings
//! ([`flushwise_lab::engine_options`], which turns them into the engine's
//! `DbOptions` and the driver's `RunConfig` for the command line and the
//! Python package alike). The database directory itself (manifest, free
//! space, per-policy copy) is `flushwise_lab::database`.

use flushwise_core::policy::PolicySpec;
use flushwise_lab::engine_options::{self as lab, DbLocation, EngineSettings};

use flushwise_engine::db::DbOptions;
use flushwise_engine::storage::IoMode;

use flushwise_lab::database::Manifest;

use crate::args::{size_flag, DbLocationArgs, EngineRunArgs, OnOff};

/// A size from a constant of ours (its error names no flag).
pub fn size_flag_bytes(text: &str) -> Result<u64, String> {
    size_flag("size", text)
}

pub fn io_mode(text: &str) -> Result<IoMode, String> {
    lab::io_mode(text)
}

impl DbLocationArgs {
    /// The lab's description of this location.
    pub fn location(&self) -> DbLocation {
        DbLocation {
            dir: self.dir.clone(),
            redo_dir: self.redo_dir.clone(),
            io: self.io.clone(),
        }
    }
}

impl EngineRunArgs {
    /// The lab's settings for these flags, `tpcc run`'s defaults resolved.
    pub fn settings(&self) -> EngineSettings {
        EngineSettings {
            connections: self.connections,
            buffer_pool: self.buffer_pool().to_string(),
            redo: self.redo.clone(),
            device: self.device.clone(),
            doublewrite: self.doublewrite == OnOff::On,
            flush_log_at_commit: self.flush_log_at_commit,
            warmup: self.warmup().to_string(),
            duration: self.duration().to_string(),
            report_interval: self.report_interval.clone(),
            seed: self.seed,
            keying_think: self.keying_think,
            max_recovery_time: self.max_recovery_time.clone(),
        }
    }
}

/// Options to open a prepared database with the run's engine settings.
pub fn run_options(
    location: &DbLocationArgs,
    engine: &EngineRunArgs,
    policy: &PolicySpec,
    manifest: &Manifest,
) -> Result<DbOptions, String> {
    lab::run_options(&location.location(), &engine.settings(), policy, manifest)
}
