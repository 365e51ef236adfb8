//! Parsing of sizes ("4GiB", "512M", "16384") and durations ("90s", "5m",
//! "1h", "250ms") as users type them on the command line.
//!
//! Sizes accept B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB, all binary
//! (powers of 1024, as InnoDB's size options are). Errors say what was given
//! and what is accepted.

use flushwise_core::TimeUs;

/// The largest duration accepted, in microseconds (about 31 years).
const DURATION_US_MAX: u64 = 1_000_000_000_000_000;

/// A number as typed before its unit: digits with at most one point ("12",
/// "1.5", ".5", "3."), kept as text so it is scaled exactly; a float would
/// turn 9007199254740993 into ...992 and 1.001 s into 1000999 us.
struct Decimal<'a> {
    whole: &'a str,
    fraction: &'a str,
}

impl<'a> Decimal<'a> {
    fn parse(number: &'a str) -> Option<Self> {
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
        if (whole.is_empty() && fraction.is_empty()) || !digits(whole) || !digits(fraction) {
            return None;
        }
        Some(Self { whole, fraction })
    }

    /// `floor(self * multiplier)`, or `None` past `u64::MAX`.
    fn times(&self, multiplier: u64) -> Option<u64> {
        let mut whole: u64 = 0;
        for digit in self.whole.bytes() {
            whole = whole.checked_mul(10)?.checked_add(u64::from(digit - b'0'))?;
        }
        // floor(0.d1..dk * m) by Horner's rule from the last digit:
        // t = floor((d_i * m + t) / 10) stays below m and is exact at each
        // step, since floor((a + floor(y)) / 10) = floor((a + y) / 10).
        let m = u128::from(multiplier);
        let fraction = self
            .fraction
            .bytes()
            .rev()
            .fold(0u128, |t, digit| (u128::from(digit - b'0') * m + t) / 10);
        let total = u128::from(whole) * m + fraction;
        u64::try_from(total).ok()
    }
}

/// Splits typed text into its number and its unit (both trimmed).
fn number_and_unit(text: &str) -> (&str, String) {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    (number, unit.trim().to_ascii_lowercase())
}

pub fn parse_size_bytes(text: &str) -> Result<u64, String> {
    let (number, unit) = number_and_unit(text);
    let value = Decimal::parse(number).ok_or_else(|| {
        format!("'{text}' is not a size: expected a number with an optional unit such as 512M or 4GiB")
    })?;
    let multiplier: u64 = match unit.as_str() {
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
    value
        .times(multiplier)
        .ok_or_else(|| format!("'{text}' is out of range"))
}

pub fn parse_duration_us(text: &str) -> Result<TimeUs, String> {
    let (number, unit) = number_and_unit(text);
    let value = Decimal::parse(number)
        .ok_or_else(|| format!("'{text}' is not a duration: expected a number with a unit such as 90s, 5m or 1h"))?;
    let multiplier: u64 = match unit.as_str() {
        "us" => 1,
        "ms" => 1_000,
        "" | "s" | "sec" => 1_000_000,
        "m" | "min" => 60_000_000,
        "h" => 3_600_000_000,
        other => {
            return Err(format!(
                "'{text}': unknown duration unit '{other}': accepted units are us, ms, s, m, h"
            ))
        }
    };
    match value.times(multiplier) {
        Some(us) if us <= DURATION_US_MAX => Ok(us),
        _ => Err(format!("'{text}' is out of range")),
    }
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
    fn sizes_and_durations_are_exact_not_rounded_through_a_float() {
        // Found by the units fuzz target: both went through f64.
        assert_eq!(parse_size_bytes("13767920776714054802"), Ok(13767920776714054802));
        assert_eq!(parse_size_bytes("9007199254740993"), Ok(9007199254740993));
        assert_eq!(parse_size_bytes("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_size_bytes("18446744073709551616")
            .unwrap_err()
            .contains("out of range"));
        assert!(parse_size_bytes("16777216T").unwrap_err().contains("out of range"));
        assert_eq!(parse_size_bytes("0.3K"), Ok(307), "a fraction of a byte is dropped");
        assert_eq!(parse_duration_us("1.001s"), Ok(1_001_000));
        assert_eq!(parse_duration_us("0.000249s"), Ok(249));
        assert_eq!(parse_duration_us("1.000001s"), Ok(1_000_001));
        assert_eq!(parse_duration_us("1000000000s"), Ok(1_000_000_000_000_000));
        assert!(parse_duration_us("1000000000.000001s")
            .unwrap_err()
            .contains("out of range"));
        for bad in ["", ".", "1.2.3", "+5", "-1s", "inf", "nan"] {
            assert!(parse_size_bytes(bad).is_err(), "{bad:?}");
            assert!(parse_duration_us(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_size_bytes(".5K"), Ok(512));
        assert_eq!(parse_size_bytes("3."), Ok(3));
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
