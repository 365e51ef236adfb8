//! Device names as the shells take them: a preset (`ssd`, `wd-1tb-7200`,
//! ...), `free-writes:NAME`, or `calibrated:PATH`, a preset file written by
//! `flushwise device calibrate`. Core cannot read a file, so this is where
//! a calibrated preset is read; the engine's runs name devices the same
//! way (`flushwise_lab::database::device_flag` calls [`resolve_device`]).
//!
//! Reproducibility: a run's configuration records a calibrated device as
//! `calibrated:PATH#HASH` ([`pin_device`]), HASH being the FNV-1a of the
//! preset's text, so the configuration hash changes when the file does,
//! and a later run of the same configuration refuses a file that changed
//! meanwhile instead of silently using other numbers.

use flushwise_core::device::{split_calibrated_name, DeviceSpec, FsyncCost, FREE_WRITES_PREFIX};

use crate::preset::{content_hash, CalibratedPreset};

/// The device a preset's text describes; `label` is how the shell names
/// the file (its path). The device describes itself as
/// `calibrated(LABEL#HASH)`, HASH being [`content_hash`] of `text`, so a
/// run's configuration names the very preset it used.
/// Its `fdatasync` cost is the preset's measured model (`[measured]
/// fsync_mean_us` alone, each `[[fsync_beside]]` point at its count of
/// its kind; free without measurements), which the simulator charges where the
/// engine fsyncs the log (see `simulation.rs`); a data file's starts at
/// `data_fsync_mean_us` instead where the preset has it.
pub fn calibrated_spec(text: &str, label: &str) -> Result<DeviceSpec, String> {
    let preset = CalibratedPreset::from_toml(text, &format!("{label}#{}", content_hash(text)))?;
    let (fsync, data_fsync) = match &preset.measurements {
        Some(m) => (m.fsync_cost()?, m.data_fsync_cost()?),
        None => (FsyncCost::default(), FsyncCost::default()),
    };
    Ok(DeviceSpec::calibrated(preset.config)
        .map_err(|e| e.to_string())?
        .with_fsync(fsync)
        .with_data_fsync(data_fsync))
}

/// `(the free-writes prefix as written, or "", the rest of the name)`.
fn split_free_writes(name: &str) -> (&str, &str) {
    match name
        .get(..FREE_WRITES_PREFIX.len())
        .filter(|p| p.eq_ignore_ascii_case(FREE_WRITES_PREFIX))
    {
        Some(prefix) => (prefix, &name[FREE_WRITES_PREFIX.len()..]),
        None => ("", name),
    }
}

/// Reads a calibrated preset: its text and the device it describes.
fn read_calibrated(path: &str) -> Result<(String, DeviceSpec), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("calibrated:{path}: cannot read the preset: {e}"))?;
    let spec = calibrated_spec(&text, path).map_err(|e| format!("calibrated:{path}: {e}"))?;
    Ok((text, spec))
}

/// The device a name stands for; a calibrated preset is read from its
/// file (and, when the name is pinned, must still have the hash it had).
pub fn resolve_device(name: &str) -> Result<DeviceSpec, String> {
    let trimmed = name.trim();
    let (prefix, inner) = split_free_writes(trimmed);
    if !prefix.is_empty() && split_calibrated_name(inner).is_some() {
        return resolve_device(inner)?.with_free_writes().map_err(|e| e.to_string());
    }
    match split_calibrated_name(trimmed) {
        Some((path, pinned)) => {
            let (text, spec) = read_calibrated(path)?;
            match pinned {
                Some(hash) if !hash.eq_ignore_ascii_case(&content_hash(&text)) => Err(format!(
                    "calibrated:{path}: the preset changed since this run was configured (its hash was {hash}, now {}); name it again as calibrated:{path} to use the new one",
                    content_hash(&text)
                )),
                _ => Ok(spec),
            }
        }
        None => DeviceSpec::parse(trimmed).map_err(|e| e.to_string()),
    }
}

/// The name a configuration records: `calibrated:PATH#HASH` for a
/// calibrated preset (read now), the name unchanged otherwise.
pub fn pin_device(name: &str) -> Result<String, String> {
    let (prefix, rest) = split_free_writes(name.trim());
    match split_calibrated_name(rest) {
        Some((path, _)) => {
            let (text, _) = read_calibrated(path)?;
            Ok(format!("{prefix}calibrated:{path}#{}", content_hash(&text)))
        }
        None => Ok(name.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRESET: &str = "format_version = 1\n[model]\nread_base_latency_us = 120\nwrite_base_latency_us = 100\n\
        read_latency_per_outstanding_us = 14\nwrite_latency_per_outstanding_us = 12\ntransfer_us_per_mib = 600\n";

    #[test]
    fn a_calibrated_name_is_read_pinned_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("disk.toml");
        std::fs::write(&path, PRESET).unwrap();
        let name = format!("calibrated:{}", path.display());
        let spec = resolve_device(&name).unwrap();
        assert_eq!(spec.kind(), "calibrated");
        let pinned = pin_device(&name).unwrap();
        assert_eq!(pinned, format!("{name}#{}", content_hash(PRESET)));
        assert_eq!(resolve_device(&pinned).unwrap().describe(), spec.describe());
        assert!(spec.describe().contains(&content_hash(PRESET)), "{}", spec.describe());
        let free = resolve_device(&format!("free-writes:{pinned}")).unwrap();
        assert!(free.writes_are_free());
        assert_eq!(pin_device("ssd").unwrap(), "ssd");

        std::fs::write(&path, PRESET.replace("120", "130")).unwrap();
        let err = resolve_device(&pinned).unwrap_err();
        assert!(err.contains("changed since this run was configured"), "{err}");
        assert!(resolve_device(&name).is_ok(), "the unpinned name takes the new file");
    }

    #[test]
    fn a_calibrated_device_charges_its_measured_fsync_and_the_models_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("disk.toml");
        std::fs::write(&path, PRESET).unwrap();
        let name = format!("calibrated:{}", path.display());
        let fsync_us = |name: &str| resolve_device(name).map(|d| d.fsync_us());
        assert_eq!(fsync_us(&name).unwrap(), 0, "no [measured] table: nothing known");
        let measured = format!(
            "{PRESET}[measured]\nrequest_bytes = 16384\nsequential_write_mb_per_s = 900.0\nfsync_mean_us = 765.4\nfsync_p99_us = 4000.0\n"
        );
        std::fs::write(&path, measured).unwrap();
        assert_eq!(fsync_us(&name).unwrap(), 765);
        assert_eq!(fsync_us(&pin_device(&name).unwrap()).unwrap(), 765);
        assert_eq!(fsync_us(&format!("free-writes:{name}")).unwrap(), 0);
        for model in ["ssd", "wd-1tb-7200", "samsung-850-pro"] {
            assert_eq!(fsync_us(model).unwrap(), 0, "{model}");
        }
        // With points beside data writers, the curve through them.
        let beside = format!(
            "{PRESET}[measured]\nrequest_bytes = 16384\nsequential_write_mb_per_s = 900.0\nfsync_mean_us = 100.0\nfsync_p99_us = 400.0\n\
             [[fsync_beside]]\nkind = \"write\"\nin_flight = 4\niops = 20000.0\nmean_latency_us = 400.0\np99_latency_us = 900.0\n\
             [[fsync_beside]]\nkind = \"read\"\nin_flight = 2\niops = 20000.0\nmean_latency_us = 300.0\np99_latency_us = 900.0\n"
        );
        std::fs::write(&path, beside).unwrap();
        let spec = resolve_device(&name).unwrap();
        assert_eq!(spec.fsync_us(), 100);
        assert_eq!(spec.fsync_cost().beside_us(0, 2), 250);
        assert_eq!(spec.fsync_cost().beside_us(0, 4), 400);
        assert_eq!(spec.fsync_cost().beside_us(2, 4), 600);
        let zero = format!(
            "{PRESET}[measured]\nrequest_bytes = 16384\nsequential_write_mb_per_s = 900.0\nfsync_mean_us = 100.0\nfsync_p99_us = 400.0\n\
             [[fsync_beside]]\nkind = \"write\"\nin_flight = 0\niops = 1.0\nmean_latency_us = 400.0\np99_latency_us = 900.0\n"
        );
        std::fs::write(&path, zero).unwrap();
        let err = resolve_device(&name).unwrap_err();
        assert!(
            err.contains("disk.toml") && err.contains("in_flight must be >= 1"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_or_bad_preset_names_the_file() {
        let err = resolve_device("calibrated:/nonexistent/x.toml").unwrap_err();
        assert!(
            err.contains("/nonexistent/x.toml") && err.contains("cannot read"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, PRESET.replace("transfer_us_per_mib = 600\n", "")).unwrap();
        let err = resolve_device(&format!("calibrated:{}", path.display())).unwrap_err();
        assert!(err.contains("bad.toml") && err.contains("transfer_us_per_mib"), "{err}");
        let err = resolve_device("floppy").unwrap_err();
        assert!(err.contains("calibrated:PATH"), "{err}");
    }
}
