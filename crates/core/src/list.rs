//! Intrusive doubly-linked lists of frames.
//!
//! The buffer pool keeps three lists over the same frame array (young LRU,
//! old LRU, flush list), so links live in the frames and a list is only a
//! head, a tail and a length. Every operation is O(1).
//!
//! Invariants (checked by [`FrameList::check`]): walking `next` from `head`
//! visits exactly `len` frames and ends at `tail`; `prev` mirrors `next`; a
//! frame that is not on the list has both links `NIL` and `on_list == false`.

/// "No frame" in a link.
pub const NIL: u32 = u32::MAX;

/// Links of one frame for one list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    pub prev: u32,
    pub next: u32,
    pub on_list: bool,
}

impl Default for Link {
    fn default() -> Self {
        Self {
            prev: NIL,
            next: NIL,
            on_list: false,
        }
    }
}

/// Head (most recent end) and tail (oldest end) of a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameList {
    pub head: u32,
    pub tail: u32,
    pub len: u32,
}

impl Default for FrameList {
    fn default() -> Self {
        Self {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

/// Gives a list read access to one of the link fields of every frame.
pub trait Links {
    fn link(&self, index: u32) -> &Link;
}

/// Gives a list write access to one of the link fields of every frame.
pub trait LinksMut: Links {
    fn link_mut(&mut self, index: u32) -> &mut Link;
}

impl FrameList {
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push_head<L: LinksMut + ?Sized>(&mut self, links: &mut L, index: u32) {
        debug_assert!(!links.link(index).on_list, "frame {index} already on list");
        let old_head = self.head;
        *links.link_mut(index) = Link {
            prev: NIL,
            next: old_head,
            on_list: true,
        };
        if old_head == NIL {
            self.tail = index;
        } else {
            links.link_mut(old_head).prev = index;
        }
        self.head = index;
        self.len += 1;
    }

    pub fn push_tail<L: LinksMut + ?Sized>(&mut self, links: &mut L, index: u32) {
        debug_assert!(!links.link(index).on_list, "frame {index} already on list");
        let old_tail = self.tail;
        *links.link_mut(index) = Link {
            prev: old_tail,
            next: NIL,
            on_list: true,
        };
        if old_tail == NIL {
            self.head = index;
        } else {
            links.link_mut(old_tail).next = index;
        }
        self.tail = index;
        self.len += 1;
    }

    /// Inserts `index` right after `after` (towards the tail).
    pub fn insert_after<L: LinksMut + ?Sized>(&mut self, links: &mut L, after: u32, index: u32) {
        debug_assert!(links.link(after).on_list);
        let next = links.link(after).next;
        if next == NIL {
            self.push_tail(links, index);
            return;
        }
        *links.link_mut(index) = Link {
            prev: after,
            next,
            on_list: true,
        };
        links.link_mut(after).next = index;
        links.link_mut(next).prev = index;
        self.len += 1;
    }

    pub fn remove<L: LinksMut + ?Sized>(&mut self, links: &mut L, index: u32) {
        let link = *links.link(index);
        debug_assert!(link.on_list, "frame {index} not on list");
        if link.prev == NIL {
            self.head = link.next;
        } else {
            links.link_mut(link.prev).next = link.next;
        }
        if link.next == NIL {
            self.tail = link.prev;
        } else {
            links.link_mut(link.next).prev = link.prev;
        }
        *links.link_mut(index) = Link::default();
        self.len -= 1;
    }

    pub fn pop_tail<L: LinksMut + ?Sized>(&mut self, links: &mut L) -> Option<u32> {
        let tail = self.tail;
        if tail == NIL {
            return None;
        }
        self.remove(links, tail);
        Some(tail)
    }

    pub fn pop_head<L: LinksMut + ?Sized>(&mut self, links: &mut L) -> Option<u32> {
        let head = self.head;
        if head == NIL {
            return None;
        }
        self.remove(links, head);
        Some(head)
    }

    /// Collects the members from head to tail (for checks and tests).
    pub fn to_vec<L: Links + ?Sized>(&self, links: &L) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.len as usize);
        let mut cursor = self.head;
        while cursor != NIL && out.len() <= self.len as usize {
            out.push(cursor);
            cursor = links.link(cursor).next;
        }
        out
    }

    /// Panics unless the list is well formed; returns its members head to tail.
    pub fn check<L: Links + ?Sized>(&self, links: &L, name: &str) -> Vec<u32> {
        let members = self.to_vec(links);
        assert_eq!(members.len(), self.len as usize, "{name}: length mismatch");
        assert_eq!(members.first().copied().unwrap_or(NIL), self.head, "{name}: head");
        assert_eq!(members.last().copied().unwrap_or(NIL), self.tail, "{name}: tail");
        let mut prev = NIL;
        for &m in &members {
            let link = links.link(m);
            assert!(link.on_list, "{name}: member {m} not flagged on list");
            assert_eq!(link.prev, prev, "{name}: prev link of {m}");
            prev = m;
        }
        members
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Vec2(Vec<Link>);
    impl Links for Vec2 {
        fn link(&self, i: u32) -> &Link {
            &self.0[i as usize]
        }
    }
    impl LinksMut for Vec2 {
        fn link_mut(&mut self, i: u32) -> &mut Link {
            &mut self.0[i as usize]
        }
    }

    #[test]
    fn push_remove_pop_keep_order() {
        let mut links = Vec2(vec![Link::default(); 5]);
        let mut list = FrameList::default();
        list.push_head(&mut links, 1);
        list.push_head(&mut links, 2);
        list.push_tail(&mut links, 3);
        list.insert_after(&mut links, 2, 4);
        assert_eq!(list.check(&links, "t"), vec![2, 4, 1, 3]);
        list.remove(&mut links, 4);
        assert_eq!(list.check(&links, "t"), vec![2, 1, 3]);
        assert_eq!(list.pop_tail(&mut links), Some(3));
        assert_eq!(list.pop_head(&mut links), Some(2));
        assert_eq!(list.check(&links, "t"), vec![1]);
        assert!(!links.link(3).on_list);
    }
}
