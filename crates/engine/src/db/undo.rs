//! Logical undo entries and their redo-record encoding.
//!
//! Every row change of a transaction is preceded, in the redo stream, by an
//! [`RecordKind::Undo`] record naming the index, the key and the key's
//! before-image (a value, or "was absent"). Undoing an entry *sets the key
//! back to its before-image* through the B+tree. That operation is
//! idempotent, which is what makes the scheme simple:
//! - the undo record may reach the log without its change (a crash between
//!   the two, or a change that failed): restoring the before-image then
//!   writes what is already there;
//! - a rollback interrupted by a crash is simply undone again, whole, at
//!   recovery (no compensation records are needed: applying all entries of
//!   a transaction in reverse from any partially undone state ends at the
//!   first before-image of every key);
//! - strict 2PL guarantees no other transaction changed the key in between.
//!
//! Payload (little-endian): `u32 index_id`, `u8 had_value`, `u32 key_len`,
//! key bytes, then (if `had_value`) the value bytes to the end.

use crate::redo::{Record, RecordKind};
use flushwise_core::PageId;

/// One logical undo entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UndoEntry {
    pub index_id: u32,
    pub key: Vec<u8>,
    /// The key's value before the change; `None`: the key was absent.
    pub before: Option<Vec<u8>>,
}

impl UndoEntry {
    pub fn to_record(&self, txn_id: u64) -> Record {
        let mut p = Vec::with_capacity(9 + self.key.len() + self.before.as_ref().map_or(0, Vec::len));
        p.extend_from_slice(&self.index_id.to_le_bytes());
        p.push(u8::from(self.before.is_some()));
        p.extend_from_slice(&(self.key.len() as u32).to_le_bytes());
        p.extend_from_slice(&self.key);
        if let Some(v) = &self.before {
            p.extend_from_slice(v);
        }
        Record::new(RecordKind::Undo, txn_id, PageId::default(), p)
    }

    /// Decodes an `Undo` record's payload; `None` if malformed.
    pub fn from_record(record: &Record) -> Option<Self> {
        if record.kind != RecordKind::Undo {
            return None;
        }
        let p = &record.payload;
        let index_id = u32::from_le_bytes(p.get(0..4)?.try_into().ok()?);
        let had_value = match *p.get(4)? {
            0 => false,
            1 => true,
            _ => return None,
        };
        let key_len = u32::from_le_bytes(p.get(5..9)?.try_into().ok()?) as usize;
        let key_end = 9usize.checked_add(key_len)?;
        let key = p.get(9..key_end)?.to_vec();
        let rest = p.get(key_end..)?;
        let before = if had_value {
            Some(rest.to_vec())
        } else if rest.is_empty() {
            None
        } else {
            return None;
        };
        Some(Self { index_id, key, before })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn undo_entries_round_trip(
            index_id in any::<u32>(),
            key in proptest::collection::vec(any::<u8>(), 0..40),
            before in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)),
            txn in any::<u64>(),
        ) {
            let e = UndoEntry { index_id, key, before };
            let r = e.to_record(txn);
            prop_assert_eq!(r.txn_id, txn);
            prop_assert_eq!(UndoEntry::from_record(&r), Some(e));
        }
    }
}
