//! This machine's disk as a calibrated device preset: measure (the
//! engine's `calibrate` module), fit the model (core's
//! `device::calibration`), check that the preset reads back as the same
//! model, write it. One procedure for `flushwise device calibrate` (which
//! prints the comparison) and `lab run fidelity` (which calibrates into its
//! `--dir` unless a preset is there).

use std::path::Path;
use std::sync::atomic::AtomicBool;

use flushwise_core::device::calibration::{self, Comparison, Measurements, Pattern};
use flushwise_core::device::{CalibratedConfig, DeviceSpec};
use flushwise_engine::calibrate::{self, CalibrateError, CalibrateOptions};
use flushwise_sim::preset::{CalibratedPreset, Provenance};

use crate::database::{free_bytes, human_bytes};
use crate::COMMIT;

/// Room left beside the test files: the preset, and not filling the disk.
pub const FREE_SPACE_MARGIN_BYTES: u64 = 64 << 20;

/// A finished calibration, written to its preset file.
pub struct Calibration {
    pub measurements: Measurements,
    /// The fitted model, named after the preset's path.
    pub config: CalibratedConfig,
    /// Measured vs model, every point.
    pub comparisons: Vec<Comparison>,
    /// Mean |IOPS error| over the mixed points with the model without
    /// cross-kind weights.
    pub mixed_error_alike: f64,
    /// The preset as written.
    pub text: String,
    /// The device the shells build from the preset.
    pub spec: DeviceSpec,
    pub provenance: Provenance,
}

/// Fails unless the test files of `options` fit in its directory's
/// filesystem with a margin.
pub fn require_free_space(options: &CalibrateOptions) -> Result<(), String> {
    let needed = options.needed_bytes() + FREE_SPACE_MARGIN_BYTES;
    let free = free_bytes(&options.dir)?;
    if free < needed {
        return Err(format!(
            "{}: calibrate needs about {} free for its test files ({} data file, {} log file) but the filesystem has {}; free some space, choose another --dir, or give a smaller --file-size",
            options.dir.display(),
            human_bytes(needed),
            human_bytes(options.file_size_bytes),
            human_bytes(options.log_file_bytes),
            human_bytes(free)
        ));
    }
    Ok(())
}

/// Measures the disk under `options.dir`, fits the model and writes the
/// preset to `out_path`. `Ok(None)`: `stop` was raised (the test files are
/// removed, no preset is written). Progress lines go to `progress`.
pub fn calibrate_into(
    options: &CalibrateOptions,
    out_path: &Path,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<Calibration>, String> {
    let measurements = match calibrate::calibrate(options, stop, progress) {
        Ok(m) => m,
        Err(CalibrateError::Interrupted) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let mut config = calibration::fit(&measurements).map_err(|e| format!("cannot fit the model: {e}"))?;
    let comparisons = calibration::compare(&config, &measurements).map_err(|e| e.to_string())?;
    // The mixed points as the model without cross-kind weights predicts them.
    let (_, mixed_error_alike) = mean_abs_iops_errors(
        &calibration::compare(&config.without_cross_kind_weights(), &measurements).map_err(|e| e.to_string())?,
    );
    let dir_text = std::fs::canonicalize(&options.dir)
        .unwrap_or_else(|_| options.dir.clone())
        .display()
        .to_string();
    let provenance = Provenance {
        dir: dir_text,
        filesystem: calibrate::filesystem_of(&options.dir),
        commit: COMMIT.to_string(),
        io: options.io.to_string(),
        file_size_bytes: options.file_size_bytes,
        duration_per_point_ms: u64::try_from(options.duration_per_point.as_millis()).unwrap_or(u64::MAX),
    };
    let preset = CalibratedPreset {
        config: config.clone(),
        provenance: Some(provenance.clone()),
        measurements: Some(measurements.clone()),
    };
    let text = preset.to_toml()?;
    // What the shells will build from the file: the same model, or a bug.
    let label = out_path.display().to_string();
    let spec = flushwise_sim::device::calibrated_spec(&text, &label)
        .map_err(|e| format!("the preset does not read back: {e}"))?;
    std::fs::write(out_path, &text)
        .map_err(|e| format!("--out {}: cannot write the preset: {e}", out_path.display()))?;
    config.name = label;
    Ok(Some(Calibration {
        measurements,
        config,
        comparisons,
        mixed_error_alike,
        text,
        spec,
        provenance,
    }))
}

/// Mean |relative IOPS error| over the single-direction points (they fit
/// the bases and same-kind slopes) and over the mixed ones (they fit the
/// cross-kind weights).
pub fn mean_abs_iops_errors(comparisons: &[Comparison]) -> (f64, f64) {
    let mean = |mixed: bool| {
        let errors: Vec<f64> = comparisons
            .iter()
            .filter(|c| (c.pattern == Pattern::Mixed) == mixed)
            .flat_map(|c| [c.read, c.write])
            .flatten()
            .map(|d| d.iops_error().abs())
            .collect();
        if errors.is_empty() {
            0.0
        } else {
            errors.iter().sum::<f64>() / errors.len() as f64
        }
    };
    (mean(false), mean(true))
}
