//! This machine's memory as Linux reports it (`/proc/meminfo`): how much a
//! buffer pool may take before its allocation would fail and abort the
//! process, or push the machine into swapping or the OOM killer.
//!
//! `None` where the file or the line cannot be read (another OS, a
//! sandbox): callers then skip their check rather than guess.

/// A `/proc/meminfo` line's value in bytes (`key` with its colon, e.g.
/// `"MemAvailable:"`; the kernel prints kB, meaning KiB).
fn meminfo_bytes(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Memory installed (`MemTotal`).
pub fn total_bytes() -> Option<u64> {
    meminfo_bytes("MemTotal:")
}

/// Memory that can be allocated now without swapping (`MemAvailable`:
/// free memory plus the page cache and slab the kernel can reclaim).
pub fn available_bytes() -> Option<u64> {
    meminfo_bytes("MemAvailable:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_memory_is_read_and_below_the_total() {
        if let (Some(total), Some(available)) = (total_bytes(), available_bytes()) {
            assert!(available > 0 && available <= total, "{available} of {total}");
        }
    }
}
