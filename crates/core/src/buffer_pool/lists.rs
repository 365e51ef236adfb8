//! The LRU (young and old sublists around InnoDB's midpoint) and the flush
//! list of [`BufferPool`]: where a page enters, when an access makes it
//! young, how the old sublist is kept at `old_blocks_pct`, and the flush
//! list's order by oldest modification (invariants 1, 3 and 6 of the parent
//! module).

use super::*;
use lru_index::Sublist;

pub(super) struct LruLinks<'a>(pub(super) &'a [Frame]);
pub(super) struct LruLinksMut<'a>(pub(super) &'a mut [Frame]);
pub(super) struct FlushLinks<'a>(pub(super) &'a [Frame]);
pub(super) struct FlushLinksMut<'a>(pub(super) &'a mut [Frame]);

impl Links for LruLinks<'_> {
    fn link(&self, i: u32) -> &Link {
        &self.0[i as usize].lru
    }
}
impl Links for LruLinksMut<'_> {
    fn link(&self, i: u32) -> &Link {
        &self.0[i as usize].lru
    }
}
impl LinksMut for LruLinksMut<'_> {
    fn link_mut(&mut self, i: u32) -> &mut Link {
        &mut self.0[i as usize].lru
    }
}
impl Links for FlushLinks<'_> {
    fn link(&self, i: u32) -> &Link {
        &self.0[i as usize].flush
    }
}
impl Links for FlushLinksMut<'_> {
    fn link(&self, i: u32) -> &Link {
        &self.0[i as usize].flush
    }
}
impl LinksMut for FlushLinksMut<'_> {
    fn link_mut(&mut self, i: u32) -> &mut Link {
        &mut self.0[i as usize].flush
    }
}

impl BufferPool {
    pub(super) fn lru_tail(&self) -> u32 {
        if self.old.tail != NIL {
            self.old.tail
        } else {
            self.young.tail
        }
    }

    pub(super) fn lru_prev(&self, index: u32) -> u32 {
        let f = &self.frames[index as usize];
        if f.lru.prev != NIL {
            f.lru.prev
        } else if f.in_old {
            self.young.tail
        } else {
            NIL
        }
    }

    /// Removes a resident, clean, unfixed page from the LRU and the page
    /// table, leaving the frame on no list (the caller reuses or frees it).
    pub(super) fn unlink_resident(&mut self, index: u32) {
        let f = &self.frames[index as usize];
        debug_assert!(f.replaceable());
        let page = f.page;
        self.page_table.remove(&page);
        self.lru_remove(index);
        let f = &mut self.frames[index as usize];
        f.resident = false;
        f.newest_modification = Lsn::ZERO;
        f.page = PageId::default();
        self.freed_page_clock += 1;
        self.counters.evictions += 1;
        if let Some(fast) = &self.fast {
            fast.publish_freed_page_clock(self.freed_page_clock);
        }
    }

    pub(super) fn remove_from_pool(&mut self, index: u32) {
        let page = self.frames[index as usize].page;
        self.page_table.remove(&page);
        self.lru_remove(index);
        let f = &mut self.frames[index as usize];
        f.resident = false;
        f.page = PageId::default();
        self.free.push(index);
    }

    /// `buf_page_peek_if_too_old` + `buf_page_make_young`.
    pub(super) fn on_access(&mut self, index: u32, now_us: TimeUs) {
        if self.freed_page_clock == 0 {
            // Nothing evicted yet: the pool is filling, order is irrelevant.
            return;
        }
        // buf_page_peek_if_too_old; buf_page_peek_if_young: young enough
        // while fewer than a quarter of the young sublist's worth of pages
        // were evicted since. The rule is what a FastHits shell is told.
        let too_old = self.access_rule(FrameId(index)).moves(now_us, self.freed_page_clock);
        if too_old {
            self.lru_remove(index);
            {
                let mut links = LruLinksMut(&mut self.frames);
                self.young.push_head(&mut links, index);
            }
            let flags = self.frames[index as usize].victim_flags();
            self.lru_index.push_head(index, Sublist::Young, flags);
            let f = &mut self.frames[index as usize];
            f.in_old = false;
            f.freed_page_clock = self.freed_page_clock;
            self.counters.pages_made_young += 1;
            self.publish_rule(index);
            self.rebalance_old();
        }
    }

    pub(super) fn lru_insert_new(&mut self, index: u32) {
        let use_old = self.lru_len() >= self.config.lru_old_min_len;
        let sublist = if use_old { Sublist::Old } else { Sublist::Young };
        let flags = self.frames[index as usize].victim_flags();
        self.lru_index.push_head(index, sublist, flags);
        {
            let mut links = LruLinksMut(&mut self.frames);
            if use_old {
                self.old.push_head(&mut links, index);
            } else {
                self.young.push_head(&mut links, index);
            }
        }
        self.frames[index as usize].in_old = use_old;
        self.publish_rule(index);
        self.rebalance_old();
    }

    pub(super) fn lru_remove(&mut self, index: u32) {
        let in_old = self.frames[index as usize].in_old;
        self.lru_index.remove(index);
        {
            let mut links = LruLinksMut(&mut self.frames);
            if in_old {
                self.old.remove(&mut links, index);
            } else {
                self.young.remove(&mut links, index);
            }
        }
        self.frames[index as usize].in_old = false;
        self.rebalance_old();
    }

    /// Tells the LRU index `index`'s victim flags where the frame (on the
    /// LRU) may have gained one or lost [`lru_index::LRU_FLUSHABLE`]: its
    /// last core fix released, an I/O started or ended, its first
    /// modification. A flag it gained is recorded at once; a bitset flag it
    /// lost stays until a search clears it, so a fix, which only takes
    /// those away, need not call this, and a hit's unfix costs a byte compare.
    pub(super) fn refresh_victim_flags(&mut self, index: u32) {
        let flags = self.frames[index as usize].victim_flags();
        self.lru_index.note_flags(index, flags);
    }

    /// `buf_LRU_old_adjust_len`: keep the old sublist at its share.
    pub(super) fn rebalance_old(&mut self) {
        let len = self.lru_len();
        if len < self.config.lru_old_min_len {
            loop {
                let mut links = LruLinksMut(&mut self.frames);
                let Some(i) = self.old.pop_head(&mut links) else { break };
                self.young.push_tail(&mut links, i);
                links.0[i as usize].in_old = false;
                self.lru_index.move_across_midpoint(i);
                self.publish_rule(i);
            }
            return;
        }
        let target = (u64::from(len) * self.old_ratio_1024 / OLD_RATIO_DIV) as u32;
        while self.old.len + OLD_TOLERANCE < target {
            let mut links = LruLinksMut(&mut self.frames);
            let Some(i) = self.young.pop_tail(&mut links) else {
                break;
            };
            self.old.push_head(&mut links, i);
            links.0[i as usize].in_old = true;
            self.lru_index.move_across_midpoint(i);
            self.publish_rule(i);
        }
        while self.old.len > target + OLD_TOLERANCE {
            let mut links = LruLinksMut(&mut self.frames);
            let Some(i) = self.old.pop_head(&mut links) else { break };
            self.young.push_tail(&mut links, i);
            links.0[i as usize].in_old = false;
            self.lru_index.move_across_midpoint(i);
            self.publish_rule(i);
        }
    }

    /// Inserts a newly dirty frame by oldest modification. Pages usually
    /// arrive in LSN order, so this stops at the head at once.
    pub(super) fn flush_insert_sorted(&mut self, index: u32) {
        let lsn = self.frames[index as usize].oldest_modification;
        let mut links = FlushLinksMut(&mut self.frames);
        let mut before = NIL; // last node (from head) whose lsn > ours
        let mut cursor = self.flush.head;
        while cursor != NIL && links.0[cursor as usize].oldest_modification > lsn {
            before = cursor;
            cursor = links.0[cursor as usize].flush.next;
        }
        if before == NIL {
            self.flush.push_head(&mut links, index);
        } else {
            self.flush.insert_after(&mut links, before, index);
        }
    }
}
