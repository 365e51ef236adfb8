//! Changed byte ranges between a page's before-image and its current bytes.
//!
//! A mini-transaction logs only what it changed: one `PageWrite` record per
//! range. Ranges closer than [`MERGE_GAP_BYTES`] are coalesced, because a
//! record costs a 28-byte header plus a 4-byte offset: logging a few
//! unchanged bytes is cheaper than a second record.
//!
//! Invariants: ranges are sorted, disjoint, separated by more than
//! `MERGE_GAP_BYTES` unchanged bytes, and together cover every changed byte.

use std::ops::Range;

/// Gaps up to this many unchanged bytes are logged rather than split
/// (record header 28 B + offset 4 B).
pub const MERGE_GAP_BYTES: usize = 32;

/// Word size of the fast comparison.
const WORD: usize = 8;

/// The changed ranges of `after` versus `before` (same length), coalesced.
pub fn changed_ranges(before: &[u8], after: &[u8]) -> Vec<Range<usize>> {
    assert_eq!(before.len(), after.len(), "diff of images of different sizes");
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let len = before.len();
    let mut i = 0;
    while i < len {
        // Skip equal words quickly.
        if i % WORD == 0 && i + WORD <= len && before[i..i + WORD] == after[i..i + WORD] {
            i += WORD;
            continue;
        }
        if before[i] == after[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < len && before[i] != after[i] {
            i += 1;
        }
        match ranges.last_mut() {
            Some(last) if start - last.end <= MERGE_GAP_BYTES => last.end = i,
            _ => ranges.push(start..i),
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn identical_images_have_no_ranges() {
        assert!(changed_ranges(&[7; 100], &[7; 100]).is_empty());
    }

    #[test]
    fn close_changes_coalesce_and_far_ones_do_not() {
        let before = vec![0u8; 1000];
        let mut after = before.clone();
        after[10] = 1;
        after[20] = 1; // 9 bytes apart: merged
        after[500] = 1;
        after[501] = 1;
        assert_eq!(changed_ranges(&before, &after), vec![10..21, 500..502]);
    }

    proptest! {
        #[test]
        fn ranges_cover_every_change_and_are_ordered(
            base in proptest::collection::vec(any::<u8>(), 1..600),
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..20),
        ) {
            let mut after = base.clone();
            for (idx, v) in &edits {
                after[idx.index(base.len())] = *v;
            }
            let ranges = changed_ranges(&base, &after);
            let mut rebuilt = base.clone();
            for r in &ranges {
                rebuilt[r.clone()].copy_from_slice(&after[r.clone()]);
            }
            prop_assert_eq!(&rebuilt, &after);
            for w in ranges.windows(2) {
                prop_assert!(w[1].start > w[0].end + MERGE_GAP_BYTES);
            }
        }
    }
}
