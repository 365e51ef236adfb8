//! Owned, zeroed, 4096-byte-aligned byte buffers for direct I/O.
//!
//! O_DIRECT requires the buffer address, the file offset and the transfer
//! length to be multiples of the logical block size; 4096 covers every
//! device we target (512 B and 4 KiB sectors). [`AlignedBuf`] is the only
//! place in the engine that uses `unsafe`: one allocation, one
//! deallocation, and the two slice views of the allocation.
//!
//! Invariants:
//! - `ptr` points to an allocation of `layout` (size a multiple of
//!   [`ALIGNMENT`], at least one block, alignment [`ALIGNMENT`]) that this
//!   buffer owns alone and frees exactly once, in `Drop`;
//! - `len <= layout.size()`, and all `layout.size()` bytes are initialised
//!   (zeroed at allocation), so any `len`-prefix is a valid `[u8]`.

use std::alloc::{self, Layout};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Alignment (and length granularity) of direct I/O, in bytes; a power of two.
pub const ALIGNMENT: usize = 4096;

/// True if `n` is a multiple of [`ALIGNMENT`].
pub const fn is_aligned(n: u64) -> bool {
    n & (ALIGNMENT as u64 - 1) == 0
}

/// True if the slice starts at an [`ALIGNMENT`]-aligned address.
pub fn is_addr_aligned(bytes: &[u8]) -> bool {
    (bytes.as_ptr() as usize) & (ALIGNMENT - 1) == 0
}

/// A heap buffer of `len` zeroed bytes starting at a 4096-aligned address.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    layout: Layout,
}

// SAFETY: `AlignedBuf` owns its allocation exclusively (no aliasing, no
// interior mutability, no thread-bound state), exactly like `Vec<u8>`, so it
// may move to and be shared by reference between threads.
unsafe impl Send for AlignedBuf {}
// SAFETY: see `Send`: shared references only hand out `&[u8]`.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zeroed bytes at a 4096-aligned address.
    ///
    /// Panics, like `Vec::with_capacity`, if `len` rounded up to a block
    /// overflows `isize`; aborts via `handle_alloc_error` if the allocator
    /// fails.
    pub fn zeroed(len: usize) -> Self {
        let capacity = len
            .max(1)
            .checked_next_multiple_of(ALIGNMENT)
            .filter(|c| *c <= isize::MAX as usize - ALIGNMENT)
            .unwrap_or_else(|| panic!("aligned buffer of {len} bytes is too large"));
        let layout = match Layout::from_size_align(capacity, ALIGNMENT) {
            Ok(layout) => layout,
            Err(e) => panic!("aligned buffer layout for {len} bytes: {e}"),
        };
        // SAFETY: `layout` has a non-zero size (at least ALIGNMENT bytes) and
        // a power-of-two alignment, as `alloc_zeroed` requires.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            alloc::handle_alloc_error(layout)
        };
        Self { ptr, len, layout }
    }

    /// A zeroed aligned buffer holding a copy of `bytes`.
    pub fn copy_from(bytes: &[u8]) -> Self {
        let mut buf = Self::zeroed(bytes.len());
        buf.copy_from_slice(bytes);
        buf
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sets every byte to zero.
    pub fn fill_zero(&mut self) {
        self.as_mut().fill(0);
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `layout.size() >= len` initialised bytes
        // (zeroed at allocation) owned by `self`; the returned borrow is tied
        // to `&self`, so no `&mut` view can exist at the same time.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`; `&mut self` guarantees this is the only view.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl AsRef<[u8]> for AlignedBuf {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl AsMut<[u8]> for AlignedBuf {
    fn as_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl Clone for AlignedBuf {
    fn clone(&self) -> Self {
        Self::copy_from(self)
    }
}

impl PartialEq for AlignedBuf {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl Eq for AlignedBuf {}

impl fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlignedBuf")
            .field("len", &self.len)
            .field("addr", &self.ptr)
            .finish()
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: `ptr` was returned by `alloc_zeroed(self.layout)` and is
        // freed only here, once, with the same layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_zeroed_and_sized() {
        for len in [0, 1, 512, 4096, 4097, 16384, 65536] {
            let buf = AlignedBuf::zeroed(len);
            assert_eq!(buf.len(), len);
            assert!(is_addr_aligned(&buf));
            assert!(buf.iter().all(|b| *b == 0));
        }
    }

    #[test]
    fn clone_copies_contents_into_a_new_aligned_allocation() {
        let mut a = AlignedBuf::zeroed(8192);
        a[100] = 7;
        let b = a.clone();
        assert_eq!(a, b);
        assert_ne!(a.as_ptr(), b.as_ptr());
        assert!(is_addr_aligned(&b));
    }
}
