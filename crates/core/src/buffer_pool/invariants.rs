//! The parent module's invariants, checked in full
//! ([`BufferPool::check_invariants`]), and views of the lists for tests and
//! debugging.

use super::*;

impl BufferPool {
    /// Panics if any invariant of the module documentation is broken.
    pub fn check_invariants(&self) {
        let young = self.young.check(&LruLinks(&self.frames), "young LRU");
        let old = self.old.check(&LruLinks(&self.frames), "old LRU");
        let flush = self.flush.check(&FlushLinks(&self.frames), "flush list");
        // 2. counts
        assert_eq!(
            self.free.len() + young.len() + old.len(),
            self.frames.len(),
            "free + LRU = frames"
        );
        assert_eq!(self.page_table.len(), young.len() + old.len(), "page table = LRU");
        let mut on_free = vec![false; self.frames.len()];
        for &i in &self.free {
            assert!(!on_free[i as usize], "frame {i} twice on the free list");
            on_free[i as usize] = true;
        }
        for &i in &young {
            assert!(!self.frames[i as usize].in_old, "young frame {i} flagged old");
        }
        for &i in &old {
            assert!(self.frames[i as usize].in_old, "old frame {i} not flagged old");
        }
        let mut pending_reads = 0;
        let mut pending_writes = [0u32; WriteKind::ALL.len()];
        for (i, f) in self.frames.iter().enumerate() {
            if on_free[i] {
                // 1. free frames
                assert!(
                    !f.resident && f.fix_count == 0 && f.io == Io::None,
                    "free frame {i} busy"
                );
                assert!(
                    !f.lru.on_list && !f.flush.on_list && !f.is_dirty(),
                    "free frame {i} listed"
                );
                continue;
            }
            assert!(f.resident, "frame {i} neither free nor resident");
            assert_eq!(
                self.page_table.get(&f.page),
                Some(&(i as u32)),
                "page table for frame {i}"
            );
            assert!(f.lru.on_list, "resident frame {i} not on the LRU");
            // 3. flush list membership
            assert_eq!(f.flush.on_list, f.is_dirty(), "frame {i}: flush list iff dirty");
            // 4. LSN order
            if f.is_dirty() {
                assert!(f.oldest_modification <= f.newest_modification, "frame {i} lsn order");
            }
            assert!(f.newest_modification <= self.redo.current_lsn, "frame {i} ahead of log");
            // 8. the FastHits shell's view of the LRU rule
            if let Some(published) = self
                .fast
                .as_ref()
                .and_then(|g| g.published_access_rule(FrameId(i as u32)))
            {
                assert_eq!(
                    published,
                    self.access_rule(FrameId(i as u32)),
                    "frame {i}: access rule held by the shell"
                );
            }
            match f.io {
                Io::None => assert_eq!(f.remodified_lsn, Lsn::ZERO),
                Io::Read => {
                    pending_reads += 1;
                    assert!(!f.is_dirty(), "frame {i} dirty while being read");
                }
                Io::Write(kind) => {
                    // 5. writing frames are dirty
                    pending_writes[kind.index()] += 1;
                    assert!(f.is_dirty(), "frame {i} written while clean");
                }
            }
        }
        let mut prev = Lsn::MAX;
        for &i in &flush {
            let lsn = self.frames[i as usize].oldest_modification;
            assert!(lsn <= prev, "flush list out of order at frame {i}");
            prev = lsn;
        }
        // 6. old sublist share
        let len = self.lru_len();
        if len < self.config.lru_old_min_len {
            assert_eq!(self.old.len, 0, "old sublist below the minimum LRU length");
        } else {
            let target = (u64::from(len) * self.old_ratio_1024 / OLD_RATIO_DIV) as u32;
            assert!(
                self.old.len + OLD_TOLERANCE >= target && self.old.len <= target + OLD_TOLERANCE,
                "old sublist {} vs target {target}",
                self.old.len
            );
        }
        if let Some(clock) = self.fast.as_ref().and_then(|g| g.published_freed_page_clock()) {
            assert_eq!(clock, self.freed_page_clock, "freed-page clock held by the shell");
        }
        // 7. pending I/O
        assert_eq!(pending_reads, self.pending_reads, "pending reads");
        assert_eq!(pending_writes, self.pending_writes, "pending writes");
        // 9. the LRU index mirrors the LRU and every frame's victim flags
        self.lru_index
            .check(&young, &old, |i| self.frames[i as usize].victim_flags());
        assert!(
            self.redo.checkpoint_lsn <= self.checkpoint_candidate(),
            "checkpoint passed a dirty page"
        );
    }

    /// States of the `n` frames at the LRU tail, tail first (diagnostics).
    pub fn tail_states(&self, n: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut cursor = self.lru_tail();
        while cursor != NIL && out.len() < n {
            let f = &self.frames[cursor as usize];
            let pinned = self.fast.as_ref().is_some_and(|g| g.is_pinned(FrameId(cursor)));
            out.push(format!(
                "{}:fix{}{}:{:?}:dirty{}:old{}",
                f.page,
                f.fix_count,
                if pinned { "+pin" } else { "" },
                f.io,
                f.is_dirty(),
                f.in_old
            ));
            cursor = self.lru_prev(cursor);
        }
        out
    }

    /// The LRU from head (most recent) to tail, for tests and reference models.
    pub fn lru_pages(&self) -> Vec<PageId> {
        let mut v: Vec<PageId> = self
            .young
            .to_vec(&LruLinks(&self.frames))
            .iter()
            .map(|&i| self.frames[i as usize].page)
            .collect();
        v.extend(
            self.old
                .to_vec(&LruLinks(&self.frames))
                .iter()
                .map(|&i| self.frames[i as usize].page),
        );
        v
    }

    /// The flush list from newest to oldest, for tests and reference models.
    pub fn flush_list_pages(&self) -> Vec<PageId> {
        self.flush
            .to_vec(&FlushLinks(&self.frames))
            .iter()
            .map(|&i| self.frames[i as usize].page)
            .collect()
    }
}
