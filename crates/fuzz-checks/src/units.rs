//! The command line's sizes and durations (`64MiB`, `10s`):
//! `flushwise_sim::units::{parse_size_bytes, parse_duration_us}`, which the
//! CLI's flags, `--warmup` and `--kill-after` go through.
//!
//! Modes (low bit of the first byte):
//! - 0: the rest as typed text (lossily made UTF-8, as the shell would
//!   refuse anything else);
//! - 1: a value written the ways a person writes it (plain bytes, a whole
//!   number of a unit, an exact decimal of KiB/MiB/GiB; microseconds,
//!   decimal milliseconds and seconds, whole minutes and hours) must parse
//!   to exactly that value.
//!
//! Properties: the parsers never panic; surrounding blanks change nothing;
//! a duration is at most 10^15 us; every written form parses exactly.

use arbitrary::Unstructured;
use flushwise_sim::units::{parse_duration_us, parse_size_bytes};

/// The largest duration accepted, in microseconds (about 31 years).
const DURATION_US_MAX: u64 = 1_000_000_000_000_000;

pub fn check(data: &[u8]) {
    let Some((mode, rest)) = crate::split_mode(data) else {
        return;
    };
    if mode & 1 == 0 {
        let text = String::from_utf8_lossy(rest);
        typed(&text);
    } else {
        let _ = written(rest);
    }
}

fn typed(text: &str) {
    let padded = format!(" {text}\t");
    let size = parse_size_bytes(text);
    assert_eq!(
        size.as_ref().ok(),
        parse_size_bytes(&padded).as_ref().ok(),
        "blanks changed a size"
    );
    if let Err(e) = size {
        assert!(e.contains(text), "{e}");
    }
    let duration = parse_duration_us(text);
    assert_eq!(
        duration.as_ref().ok(),
        parse_duration_us(&padded).as_ref().ok(),
        "blanks changed a duration"
    );
    match duration {
        Ok(us) => assert!(us <= DURATION_US_MAX, "{text} gave {us} us"),
        Err(e) => assert!(e.contains(text), "{e}"),
    }
}

fn assert_size(text: &str, bytes: u64) {
    assert_eq!(parse_size_bytes(text), Ok(bytes), "size {text:?}");
}

fn assert_duration(text: &str, us: u64) {
    assert_eq!(parse_duration_us(text), Ok(us), "duration {text:?}");
}

/// `numerator / 2^(10 * power)` as an exact decimal (every such fraction
/// has one, of at most `10 * power` digits).
fn binary_fraction(value: u64, power: u32) -> String {
    let shift = 10 * power;
    let whole = value >> shift;
    let part = u128::from(value & ((1u64 << shift) - 1));
    if part == 0 {
        return whole.to_string();
    }
    let digits = part * 5u128.pow(shift);
    let text = format!("{digits:0width$}", width = shift as usize);
    format!("{whole}.{}", text.trim_end_matches('0'))
}

fn written(rest: &[u8]) -> arbitrary::Result<()> {
    let mut u = Unstructured::new(rest);
    let bytes = u.arbitrary::<u64>()?;
    let count = u.arbitrary::<u32>()?;
    let us = u.int_in_range(0..=DURATION_US_MAX)?;

    assert_size(&bytes.to_string(), bytes);
    assert_size(&format!("{bytes}B"), bytes);
    for (power, units) in [
        (1u32, ["K", "KiB", "kb"]),
        (2, ["M", "MiB", "mb"]),
        (3, ["G", "GiB", "gb"]),
    ] {
        for unit in units {
            assert_size(&format!("{}{unit}", binary_fraction(bytes, power)), bytes);
            let whole = u64::from(count) << (10 * power);
            assert_size(&format!("{count}{unit}"), whole);
        }
    }
    let tebibytes = count >> 8;
    assert_size(&format!("{tebibytes}TiB"), u64::from(tebibytes) << 40);

    assert_duration(&format!("{us}us"), us);
    assert_duration(&format!("{}.{:03}ms", us / 1_000, us % 1_000), us);
    assert_duration(&format!("{}.{:06}s", us / 1_000_000, us % 1_000_000), us);
    if us % 1_000_000 == 0 {
        assert_duration(&(us / 1_000_000).to_string(), us);
    }
    let minutes = us / 60_000_000;
    assert_duration(&format!("{minutes}m"), minutes * 60_000_000);
    assert_duration(&format!("{}h", minutes / 60), minutes / 60 * 3_600_000_000);
    Ok(())
}
