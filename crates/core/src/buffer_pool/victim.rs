//! Finding frames: a user's free-frame search (`buf_LRU_get_free_block`:
//! the free list, the clean-victim scan, the single-page flush) and the
//! page cleaner's LRU and flush-list batches, with the write orders they
//! start. Every eviction goes through `claim_victim`, which asks a fast-hit
//! shell first (invariant 8 of the parent module).

use super::*;

impl BufferPool {
    /// Finds a frame for a missing page (`buf_LRU_get_free_block`).
    pub(super) fn take_free_frame(&mut self, attempt: u32) -> Result<u32, FixOutcome> {
        if self.free_rule.single_page_flush == crate::free_page_path::SinglePageFlush::FreeMarginBatch {
            return self.take_free_frame_5_1(attempt);
        }
        if let Some(index) = self.free.pop() {
            if self.takeable_below_wake() {
                self.wake_pending = true;
            }
            return Ok(index);
        }
        let waits_for_cleaner =
            self.free_rule.single_page_flush == crate::free_page_path::SinglePageFlush::WaitForCleaner;
        if waits_for_cleaner && attempt > 0 {
            // MariaDB 10.5+ `buf_LRU_get_free_block`: a user that has waited
            // takes only from the free list, waking the cleaner each round.
            if self.wake.on_sync_replacement {
                self.wake_pending = true;
            }
            return Err(FixOutcome::NoFrame);
        }
        if self.try_lru_scan || attempt > 0 {
            // buf_LRU_free_from_common_LRU_list: the first scan is bounded
            // (5.6.15: srv_LRU_scan_depth; 5.7: 100), a retry scans all.
            let limit = if attempt > 0 {
                u32::MAX
            } else {
                self.free_rule.user_scan_depth
            };
            if let Some(index) = self.take_clean_victim(limit) {
                // Only a cleaner that counts the clean tail watches these
                // takes (InnoDB's and MariaDB's wake on the free list's).
                if self.wake.takeable_depth_pages > 0 && self.takeable_below_wake() {
                    self.wake_pending = true;
                }
                return Ok(index);
            }
            if attempt == 0 {
                self.try_lru_scan = false;
                self.counters.lru_scans_failed += 1;
            }
        } else {
            self.counters.lru_scans_skipped += 1;
        }
        if waits_for_cleaner {
            // MariaDB 10.5+: no user write; wake the page cleaner
            // (`page_cleaner_wakeup(true)`) and wait for a frame
            // (`done_free`). One wait counted per request.
            self.counters.wait_free += 1;
            if self.wake.on_sync_replacement {
                self.wake_pending = true;
            }
            return Err(FixOutcome::NoFrame);
        }
        // Single-page flush: the first flushable page from the tail that
        // nobody has fixed (InnoDB 5.6 `buf_flush_ready_for_flush` with
        // BUF_FLUSH_SINGLE_PAGE requires `buf_fix_count == 0`: the user
        // may hold latches on its own fixed pages, and writing one of them
        // would wait on itself).
        self.counters.wait_free += 1;
        let (flushable, scanned) = self.find_single_page_flush();
        self.counters.dirty_victim_scanned += u64::from(scanned);
        if let Some(index) = flushable {
            let order = self.start_write(index, WriteKind::SyncReplacement);
            self.frames[index as usize].evict_after_write = true;
            if self.wake.on_sync_replacement {
                self.wake_pending = true;
            }
            return Err(FixOutcome::SyncReplacementWrite(order));
        }
        // Nothing to flush: InnoDB's next iteration follows at once (it only
        // sleeps from the third) and scans the whole LRU for a clean victim.
        if attempt == 0 {
            if let Some(index) = self.take_clean_victim(u32::MAX) {
                return Ok(index);
            }
        }
        Err(FixOutcome::NoFrame)
    }

    /// InnoDB 5.1's free-frame search for a missing page (MySQL 5.1.45
    /// `buf0rea.c` `buf_read_page` and `buf0lru.c` `buf_LRU_get_free_block`,
    /// both calling `buf0flu.c` `buf_flush_free_margin`). 5.1 checks the
    /// margin after the read; checking it before taking the frame makes the
    /// same user wait for the same batch, one read earlier.
    fn take_free_frame_5_1(&mut self, attempt: u32) -> Result<u32, FixOutcome> {
        let margin = crate::free_page_path::FreeMargin::for_pool(self.config.frames);
        let to_flush = margin.pages_to_flush(self.replaceable_near_tail(&margin));
        if to_flush > 0 {
            // The batch's writes count as pending from the moment it is
            // answered, before its user takes them.
            if self.pending_writes[WriteKind::UserLruBatch.index()] > 0 {
                // `buf_flush_batch` finds an LRU batch running and returns
                // ULINT_UNDEFINED: `buf_flush_wait_batch_end`.
                if attempt == 0 {
                    self.counters.wait_free += 1;
                }
                return Err(FixOutcome::NoFrame);
            }
            let writes = self.user_lru_batch_writes(to_flush);
            if !writes.is_empty() {
                if attempt == 0 {
                    self.counters.wait_free += 1;
                }
                self.user_lru_batch = writes;
                return Err(FixOutcome::UserLruBatch);
            }
        }
        if let Some(index) = self.free.pop() {
            return Ok(index);
        }
        // buf_LRU_search_and_free_block: try n scans 100 + n x |pool| / 10 deep.
        let limit = crate::free_page_path::FreeMargin::search_depth(self.config.frames, attempt.saturating_add(1));
        if let Some(index) = self.take_clean_victim(limit) {
            return Ok(index);
        }
        // Nothing replaceable and nothing to write (every page fixed or
        // under I/O): wait for an unfix or a write and search again.
        if attempt == 0 {
            self.counters.wait_free += 1;
        }
        Err(FixOutcome::NoFrame)
    }

    /// A user's clean-victim scan `limit` deep, counted in NP_clean; the
    /// victim found, if any, leaves the LRU.
    fn take_clean_victim(&mut self, limit: u32) -> Option<u32> {
        let (victim, scanned) = self.find_clean_victim(limit);
        self.counters.clean_victim_scanned += u64::from(scanned);
        let index = victim?;
        self.unlink_resident(index);
        Some(index)
    }

    /// `buf_flush_LRU_recommendation`'s count: free frames plus replaceable
    /// pages within the search length of the LRU tail, counted up to the
    /// margin plus the extra margin. The LRU index counts them (a population
    /// count of its exact [`lru_index::REPLACEABLE`] bits) instead of
    /// walking them on every miss.
    fn replaceable_near_tail(&mut self, margin: &crate::free_page_path::FreeMargin) -> u32 {
        #[cfg(test)]
        if self.linear_victim_search {
            return self.replaceable_near_tail_linear(margin);
        }
        if !self.lru_index.replaceable_exact() {
            let frames = &self.frames;
            self.lru_index
                .keep_replaceable_exact(|index| frames[index as usize].victim_flags());
        }
        // 5.1 stops counting at the margin plus the extra margin (and
        // does not count at all when the free list alone reaches it).
        let cap = margin.margin_pages + margin.extra_pages;
        let free = self.free_len();
        if free >= cap {
            return free;
        }
        (free + self.lru_index.replaceable_near_tail(margin.search_len_pages)).min(cap)
    }

    /// What users can take without writing: the free list plus the pages
    /// within `depth` of the LRU tail that an LRU batch would not write
    /// (clean, or already being written), `flushwise`'s reserve (its rule
    /// 2). Fixed clean pages count too (a user skips them; there are a few
    /// at most). Counted from the LRU index's exact [`lru_index::LRU_FLUSHABLE`]
    /// bits in O(log n); before the index keeps them (a pool's first graced
    /// LRU walk starts it), only the free list counts.
    pub fn takeable_without_write(&self, depth: u32) -> u32 {
        let depth = depth.min(self.lru_len());
        if depth == 0 || !self.lru_index.tracks_lru_flushable() {
            return self.free_len();
        }
        #[cfg(test)]
        if self.linear_victim_search {
            return self.takeable_without_write_linear(depth);
        }
        let through = self.lru_index.place_at_rank(depth);
        let dirty = self.lru_index.lru_flushable_through(through);
        self.free_len() + depth - dirty
    }

    /// The reference for [`Self::takeable_without_write`]: a walk.
    #[cfg(test)]
    fn takeable_without_write_linear(&self, depth: u32) -> u32 {
        let mut count = self.free_len();
        let mut cursor = self.lru_tail();
        let mut distance = 0;
        while cursor != NIL && distance < depth {
            if !self.frames[cursor as usize].flushable() {
                count += 1;
            }
            distance += 1;
            cursor = self.lru_prev(cursor);
        }
        count
    }

    /// Whether a user's taking a frame leaves what the cleaner watches
    /// ([`WakeThresholds::free_pages_below`], counting the clean tail to
    /// [`WakeThresholds::takeable_depth_pages`]) below its threshold.
    fn takeable_below_wake(&self) -> bool {
        let Some(low) = self.wake.free_pages_below else {
            return false;
        };
        self.free_len() < low
            && (self.wake.takeable_depth_pages == 0
                || self.takeable_without_write(self.wake.takeable_depth_pages) < low)
    }

    /// The reference for [`Self::replaceable_near_tail`]: 5.1's walk.
    #[cfg(test)]
    fn replaceable_near_tail_linear(&self, margin: &crate::free_page_path::FreeMargin) -> u32 {
        let cap = margin.margin_pages + margin.extra_pages;
        let mut count = self.free_len();
        let mut cursor = self.lru_tail();
        let mut distance = 0;
        while cursor != NIL && count < cap && distance < margin.search_len_pages {
            if self.frames[cursor as usize].replaceable() {
                count += 1;
            }
            distance += 1;
            cursor = self.lru_prev(cursor);
        }
        count
    }

    /// The writes of a user's LRU batch (`buf_flush_batch(BUF_FLUSH_LRU,
    /// min_n)`): from the LRU tail, dirty pages without I/O that nobody has
    /// fixed (`buf_flush_ready_for_flush` with BUF_FLUSH_LRU), until
    /// `min_n` are written or the list ends. 5.1 also writes each victim's
    /// old, unfixed dirty neighbours within `BUF_FLUSH_AREA` and counts
    /// them towards `min_n`; neighbours are not modelled (no policy here
    /// flushes neighbours), so a batch writes the same number of pages,
    /// all from the tail.
    fn user_lru_batch_writes(&mut self, min_n: u32) -> Vec<WriteOrder> {
        #[cfg(test)]
        if self.linear_victim_search {
            return self.user_lru_batch_writes_linear(min_n);
        }
        let mut writes = Vec::new();
        let mut after = None;
        while (writes.len() as u32) < min_n {
            let Some((index, _)) = self.next_flagged_fresh(lru_index::SINGLE_PAGE_FLUSHABLE, after) else {
                break;
            };
            // A write keeps the frame's LRU place, so the search goes on
            // from it.
            after = Some(index);
            if self.single_page_flushable(index) {
                writes.push(self.start_write(index, WriteKind::UserLruBatch));
            }
        }
        self.try_lru_scan = true;
        writes
    }

    /// The reference for [`Self::user_lru_batch_writes`]: 5.1's walk.
    #[cfg(test)]
    fn user_lru_batch_writes_linear(&mut self, min_n: u32) -> Vec<WriteOrder> {
        let mut writes = Vec::new();
        let mut cursor = self.lru_tail();
        while cursor != NIL && (writes.len() as u32) < min_n {
            let prev = self.lru_prev(cursor);
            if self.single_page_flushable(cursor) {
                writes.push(self.start_write(cursor, WriteKind::UserLruBatch));
            }
            cursor = prev;
        }
        self.try_lru_scan = true;
        writes
    }

    /// The writes of the user LRU batch `fix` answered
    /// [`FixOutcome::UserLruBatch`] with; the caller writes them all.
    pub fn take_user_lru_batch(&mut self) -> Vec<WriteOrder> {
        std::mem::take(&mut self.user_lru_batch)
    }

    /// A user's clean-victim scan (`buf_LRU_free_from_common_LRU_list`):
    /// the first frame from the LRU tail, at most `limit` deep, that
    /// `claim_victim` accepts, and the pages a walk from the tail examines
    /// to find it (all `min(limit, |LRU|)` when there is none). The LRU
    /// index yields the replaceable frames in tail order, so only they are
    /// offered to a fast-hit shell, as the walk would offer them.
    pub(super) fn find_clean_victim(&mut self, limit: u32) -> (Option<u32>, u32) {
        #[cfg(test)]
        if self.linear_victim_search {
            return self.find_clean_victim_linear(limit);
        }
        let mut after = None;
        while let Some((index, rank)) = self.lru_index.first_from_tail(lru_index::REPLACEABLE, after) {
            if rank > limit {
                break;
            }
            after = Some(index);
            let flags = self.frames[index as usize].victim_flags();
            if flags & lru_index::REPLACEABLE == 0 {
                // A stale flag (the frame was fixed, dirtied or put under
                // I/O since): the walk passes it; the index forgets it.
                self.lru_index.set_flags(index, flags);
                continue;
            }
            if self.claim_victim(index) {
                return (Some(index), rank);
            }
            // Vetoed by the fast-hit shell: the walk goes on past it.
        }
        (None, limit.min(self.lru_len()))
    }

    /// A user's single-page flush victim (`buf_flush_single_page_from_LRU`):
    /// the first `single_page_flushable` frame from the LRU tail, and the
    /// pages a walk from the tail examines to find it (NP_dirty; all of the
    /// LRU when there is none).
    pub(super) fn find_single_page_flush(&mut self) -> (Option<u32>, u32) {
        #[cfg(test)]
        if self.linear_victim_search {
            return self.find_single_page_flush_linear();
        }
        let mut after = None;
        while let Some((index, rank)) = self.next_flagged_fresh(lru_index::SINGLE_PAGE_FLUSHABLE, after) {
            after = Some(index);
            // The index knows the core's state; a fast-hit shell's pin is
            // asked here, as the walk asks it.
            if self.single_page_flushable(index) {
                return (Some(index), rank);
            }
        }
        (None, self.lru_len())
    }

    /// The first frame from the tail, closer to the head than `after`, that
    /// holds `flag` in fact, with its rank; the stale flags it passes
    /// (fixed, cleaned or put under I/O since) the index forgets.
    fn next_flagged_fresh(&mut self, flag: u8, mut after: Option<u32>) -> Option<(u32, u32)> {
        while let Some((index, rank)) = self.lru_index.first_from_tail(flag, after) {
            let flags = self.frames[index as usize].victim_flags();
            if flags & flag != 0 {
                return Some((index, rank));
            }
            self.lru_index.set_flags(index, flags);
            after = Some(index);
        }
        None
    }

    /// The reference for [`Self::find_clean_victim`]: InnoDB's walk.
    #[cfg(test)]
    fn find_clean_victim_linear(&mut self, limit: u32) -> (Option<u32>, u32) {
        let mut cursor = self.lru_tail();
        let mut scanned = 0;
        while cursor != NIL && scanned < limit {
            scanned += 1;
            if self.claim_victim(cursor) {
                return (Some(cursor), scanned);
            }
            cursor = self.lru_prev(cursor);
        }
        (None, scanned)
    }

    /// The reference for [`Self::find_single_page_flush`]: InnoDB's walk.
    #[cfg(test)]
    fn find_single_page_flush_linear(&mut self) -> (Option<u32>, u32) {
        let mut cursor = self.lru_tail();
        let mut scanned = 0;
        while cursor != NIL {
            scanned += 1;
            if self.single_page_flushable(cursor) {
                return (Some(cursor), scanned);
            }
            cursor = self.lru_prev(cursor);
        }
        (None, scanned)
    }

    /// Tests only: answer the victim searches with the reference walks.
    #[cfg(test)]
    pub(crate) fn use_linear_victim_search(&mut self) {
        self.linear_victim_search = true;
    }

    /// True if the replaceable frame `index` may be evicted now: the
    /// [`FastHits`] shell, if any, holds no pin on it (a veto is counted).
    pub(super) fn claim_victim(&mut self, index: u32) -> bool {
        let f = &self.frames[index as usize];
        if !f.replaceable() {
            return false;
        }
        let Some(fast) = &self.fast else { return true };
        if fast.try_evict(FrameId(index), f.page) {
            true
        } else {
            self.counters.pin_vetoes += 1;
            false
        }
    }

    /// Flushable and fixed by nobody, through the core or a shell pin.
    pub(super) fn single_page_flushable(&self, index: u32) -> bool {
        let f = &self.frames[index as usize];
        f.flushable() && f.fix_count == 0 && !self.fast.as_ref().is_some_and(|fast| fast.is_pinned(FrameId(index)))
    }

    /// Tells the [`FastHits`] shell the access rule of `index`.
    pub(super) fn publish_rule(&self, index: u32) {
        if let Some(fast) = &self.fast {
            fast.publish_access_rule(FrameId(index), self.access_rule(FrameId(index)));
        }
    }

    pub(super) fn start_write(&mut self, index: u32, kind: WriteKind) -> WriteOrder {
        debug_assert!(self.frames[index as usize].flushable());
        self.frames[index as usize].io = Io::Write(kind);
        // The frame is no longer LRU-flushable (exact in the index).
        self.refresh_victim_flags(index);
        let f = &mut self.frames[index as usize];
        f.remodified_lsn = Lsn::ZERO;
        // 5.7 evicts an LRU-batch page when its write completes; in 5.6.15
        // it stays on the LRU, clean, for a later chunk or a user to evict.
        f.evict_after_write =
            kind == WriteKind::LruBatch && self.free_rule.lru_written_pages == LruWrittenPages::EvictOnCompletion;
        self.pending_writes[kind.index()] += 1;
        match kind {
            WriteKind::LruBatch => self.counters.lru_batch_flush_pages += 1,
            WriteKind::FlushList => self.counters.flush_list_pages += 1,
            WriteKind::CleanerClean => self.counters.cleaner_clean_pages += 1,
            WriteKind::SyncReplacement | WriteKind::UserLruBatch => self.counters.sync_replacement_writes += 1,
            WriteKind::SyncRecoverability => self.counters.sync_recoverability_writes += 1,
        }
        WriteOrder {
            frame: FrameId(index),
            page: f.page,
            page_lsn: f.newest_modification,
            kind,
        }
    }

    /// Evicts a replaceable page to the free list.
    pub(super) fn evict(&mut self, index: u32) {
        self.unlink_resident(index);
        self.free.push(index);
    }

    /// One chunk of the LRU batch (`buf_flush_LRU_list_batch`): from the
    /// tail, until `max_pages` pages were *written*, the free list reaches
    /// `free_target`, `scan_limit` pages were scanned, or the LRU is down to
    /// `BUF_LRU_MIN_LEN`. Clean pages met on the way are evicted without
    /// counting against `max_pages` (5.6.15 counts only written pages).
    pub fn lru_batch_chunk(&mut self, max_pages: u32, free_target: u32, scan_limit: u32, mode: LruMode) -> LruChunk {
        self.lru_walk(max_pages, free_target, scan_limit, mode, None)
    }

    /// One chunk of `flushwise`'s LRU phase with a grace for dirty pages
    /// (its rule 9): [`Self::lru_batch_chunk`] in [`LruMode::EvictToFree`],
    /// except that within `depth` of the tail a dirty page first accessed
    /// after `grace_cutoff_us` is passed over, not written: clean pages and
    /// dirty pages past their grace above it are taken instead. Past
    /// `depth` every page is taken in LRU order, as InnoDB would, so the
    /// grace never leaves the free list short; the walk's stop conditions
    /// are InnoDB's (`max_pages` written, the free list at `free_target`,
    /// the LRU at its minimum length).
    pub fn lru_batch_chunk_graced(
        &mut self,
        max_pages: u32,
        free_target: u32,
        grace_cutoff_us: TimeUs,
        depth: u32,
    ) -> LruChunk {
        // Tracked in the walking reference too, so that both answer
        // `takeable_without_write` alike from the same step on.
        if !self.lru_index.tracks_lru_flushable() {
            let frames = &self.frames;
            self.lru_index
                .track_lru_flushable(|index| frames[index as usize].victim_flags());
        }
        #[cfg(test)]
        if self.linear_victim_search {
            return self.lru_walk(
                max_pages,
                free_target,
                u32::MAX,
                LruMode::EvictToFree,
                Some((grace_cutoff_us, depth)),
            );
        }
        self.lru_walk_graced(max_pages, free_target, grace_cutoff_us, depth)
    }

    /// The walk both chunks share; `grace` is rule 9's (cutoff, depth).
    /// The graced chunk is answered by [`Self::lru_walk_graced`] outside
    /// tests, which compare the two.
    fn lru_walk(
        &mut self,
        max_pages: u32,
        free_target: u32,
        scan_limit: u32,
        mode: LruMode,
        grace: Option<(TimeUs, u32)>,
    ) -> LruChunk {
        let mut chunk = LruChunk::default();
        let mut cursor = self.lru_tail();
        let mut count = 0;
        while cursor != NIL
            && count < max_pages
            && chunk.scanned < scan_limit
            && self.free_len() < free_target
            && self.lru_len() > self.config.lru_min_len
        {
            let prev = self.lru_prev(cursor);
            chunk.scanned += 1;
            let f = &self.frames[cursor as usize];
            let flushable = f.flushable();
            let in_grace = grace
                .is_some_and(|(cutoff_us, depth)| flushable && chunk.scanned <= depth && f.first_access_us > cutoff_us);
            if in_grace {
                self.counters.lru_grace_passed_pages += 1;
            } else if mode == LruMode::EvictToFree && self.claim_victim(cursor) {
                // Evictions do not count against `max_pages`: 5.6.15
                // `buf_flush_LRU_list_batch` counts only the pages it
                // writes (`count < max`); evictions are bounded by
                // `free_len < srv_LRU_scan_depth` (`free_target`).
                self.evict(cursor);
                self.counters.lru_batch_evict_pages += 1;
                chunk.evicted += 1;
            } else if flushable {
                let kind = match mode {
                    LruMode::EvictToFree => WriteKind::LruBatch,
                    LruMode::CleanOnly => WriteKind::CleanerClean,
                };
                chunk.writes.push(self.start_write(cursor, kind));
                count += 1;
            }
            cursor = prev;
        }
        // buf_flush_end: the end of any batch tells users a tail scan may pay again.
        self.try_lru_scan = true;
        chunk
    }

    /// [`Self::lru_batch_chunk_graced`] answered from the LRU index, with
    /// the walk's decisions and counts but without visiting the pages it
    /// passes over (in the engine's main regime about a quarter of the pool
    /// a walk, to take a dozen). The walk takes, in tail order, every page
    /// the fast-hit shell lets it evict (flagged [`lru_index::REPLACEABLE`])
    /// and every dirty page without I/O ([`lru_index::LRU_FLUSHABLE`]) that
    /// lies past `depth` or was first accessed by the cutoff; it passes the
    /// other LRU-flushable pages within `depth` and ignores the rest.
    ///
    /// Positions are the walk's scan counts: a page's rank from the tail
    /// plus the pages evicted so far (all of them nearer the tail). Places
    /// in the index are not kept across steps: an eviction rebalances the
    /// sublists, which moves pages across the midpoint and may recompact
    /// a sublist (the LRU order stays). The walk's stop conditions change
    /// only when it takes a page, so a walk that stops has scanned up to
    /// the last page it took; the pages it passed are then the
    /// LRU-flushable ones left between the tail and there (or the depth,
    /// if nearer): it wrote the others.
    fn lru_walk_graced(&mut self, max_pages: u32, free_target: u32, grace_cutoff_us: TimeUs, depth: u32) -> LruChunk {
        let mut chunk = LruChunk::default();
        let len_before = self.lru_len();
        // The position of the last page visited, and of the last taken.
        let mut visited = 0;
        let mut taken = 0;
        let mut evicted_within_depth = 0;
        let mut exhausted = false;
        let mut count = 0;
        while count < max_pages && self.free_len() < free_target && self.lru_len() > self.config.lru_min_len {
            // The place of the page at a position still on the LRU or, if
            // it was evicted, of the nearest one tailward of it.
            let place_at = |pool: &Self, position: u32| match position - chunk.evicted {
                0 => None,
                rank => pool.lru_index.place_at_rank(rank),
            };
            let from = place_at(self, visited);
            // Pages past the depth are taken whatever their first access.
            let past_from = if visited < depth {
                place_at(self, depth.min(len_before))
            } else {
                from
            };
            let evicted = chunk.evicted;
            let candidates = [
                self.lru_index.next_flagged(lru_index::REPLACEABLE, from),
                // (Within the depth only: none is left once the walk is past it.)
                (visited < depth)
                    .then(|| self.lru_index.next_lru_flushable(from, grace_cutoff_us))
                    .flatten()
                    .filter(|&(_, rank, _)| rank + evicted <= depth),
                self.lru_index.next_lru_flushable(past_from, TimeUs::MAX),
            ];
            let Some((index, rank)) = candidates
                .into_iter()
                .flatten()
                .map(|(index, rank, _)| (index, rank))
                .min_by_key(|&(_, rank)| rank)
            else {
                exhausted = true;
                break;
            };
            let position = rank + chunk.evicted;
            visited = position;
            let f = &self.frames[index as usize];
            let flushable = f.flushable();
            let in_grace = flushable && position <= depth && f.first_access_us > grace_cutoff_us;
            if in_grace {
                // Met through a stale clean-victim flag: passed (and
                // counted below with the others).
                let flags = f.victim_flags();
                self.lru_index.set_flags(index, flags);
            } else if self.claim_victim(index) {
                self.evict(index);
                self.counters.lru_batch_evict_pages += 1;
                chunk.evicted += 1;
                if position <= depth {
                    evicted_within_depth += 1;
                }
                taken = position;
            } else if flushable {
                chunk.writes.push(self.start_write(index, WriteKind::LruBatch));
                count += 1;
                taken = position;
            } else {
                // A stale flag (fixed, or under I/O), or a fast-hit veto.
                let flags = self.frames[index as usize].victim_flags();
                self.lru_index.set_flags(index, flags);
            }
        }
        chunk.scanned = if exhausted { len_before } else { taken };
        // The pages passed: LRU-flushable ones left within the scan and the
        // depth, now at ranks up to that position less the pages evicted
        // nearer the tail.
        let passed_within = chunk.scanned.min(depth);
        let evicted_before = if chunk.scanned <= depth {
            chunk.evicted
        } else {
            evicted_within_depth
        };
        if let Some(through) = self.lru_index.place_at_rank(passed_within - evicted_before) {
            self.counters.lru_grace_passed_pages += u64::from(self.lru_index.lru_flushable_through(Some(through)));
        }
        self.try_lru_scan = true;
        chunk
    }

    /// A flush-list batch (`buf_do_flush_list_batch`): from the oldest end,
    /// up to `max_pages` writes of pages whose oldest modification is below
    /// `lsn_limit`. Returns the writes and the number of pages scanned.
    pub fn flush_list_batch(&mut self, max_pages: u32, lsn_limit: Lsn, kind: WriteKind) -> (Vec<WriteOrder>, u32) {
        let mut writes = Vec::new();
        let mut scanned = 0;
        let mut cursor = self.flush.tail;
        while cursor != NIL && (writes.len() as u32) < max_pages {
            let f = &self.frames[cursor as usize];
            if f.oldest_modification >= lsn_limit {
                break;
            }
            let prev = f.flush.prev;
            scanned += 1;
            if f.flushable() {
                writes.push(self.start_write(cursor, kind));
            }
            cursor = prev;
        }
        self.try_lru_scan = true;
        (writes, scanned)
    }
}
