//! Parsing of sizes ("4GiB", "512M", "16384") and durations ("90s", "5m",
//! "1h", "250ms") as users type them on the command line.
//!
//! Sizes accept B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB, all binary
//! (powers of 1024, as InnoDB's size options are). Errors say what was given
//! and what is accepted.

use flushwise_core::TimeUs;

pub fn parse_size_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a size: expected a number with an optional unit such as 512M or 4GiB"))?;
    let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "'{text}': unknown size unit '{other}': accepted units are B, K, KiB, M, MiB, G, GiB, T, TiB"
            ))
        }
    };
    let bytes = value * multiplier as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("'{text}' is out of range"));
    }
    Ok(bytes as u64)
}

pub fn parse_duration_us(text: &str) -> Result<TimeUs, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a duration: expected a number with a unit such as 90s, 5m or 1h"))?;
    let multiplier: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "us" => 1.0,
        "ms" => 1e3,
        "" | "s" | "sec" => 1e6,
        "m" | "min" => 60e6,
        "h" => 3600e6,
        other => {
            return Err(format!(
                "'{text}': unknown duration unit '{other}': accepted units are us, ms, s, m, h"
            ))
        }
    };
    let us = value * multiplier;
    if !us.is_finite() || !(0.0..=1e15).contains(&us) {
        return Err(format!("'{text}' is out of range"));
    }
    Ok(us as TimeUs)
}

/// "1.5 GiB"-style rendering for reports.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size_bytes("16384").unwrap(), 16384);
        assert_eq!(parse_size_bytes("512M").unwrap(), 512 << 20);
        assert_eq!(parse_size_bytes("4GiB").unwrap(), 4 << 30);
        assert_eq!(parse_size_bytes("1.5g").unwrap(), 3 << 29);
    }

    #[test]
    fn bad_size_names_the_input_and_the_accepted_units() {
        let err = parse_size_bytes("12QB").unwrap_err();
        assert!(err.contains("12QB") && err.contains("GiB"), "{err}");
        assert!(parse_size_bytes("lots").unwrap_err().contains("not a size"));
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration_us("90s").unwrap(), 90_000_000);
        assert_eq!(parse_duration_us("5m").unwrap(), 300_000_000);
        assert_eq!(parse_duration_us("250ms").unwrap(), 250_000);
        assert!(parse_duration_us("3 fortnights")
            .unwrap_err()
            .contains("accepted units"));
    }
}
