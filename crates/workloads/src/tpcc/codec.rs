//! Byte encodings of TPC-C keys and rows.
//!
//! - Keys ([`KeyWriter`]) are order-preserving: unsigned integers
//!   big-endian, strings as their bytes plus a `0x00` terminator (TPC-C
//!   strings are printable ASCII, clause 4.3.2.2, so they contain no `0x00`
//!   and a shorter string sorts before its extensions). Byte-wise comparison
//!   of two keys is then the comparison of their column tuples.
//! - Rows ([`RowWriter`], [`RowReader`]) are compact: fixed-width
//!   little-endian integers, strings as a length (one byte, two for the
//!   500-character `c_data`) plus UTF-8 bytes, nullable columns as a tag
//!   byte (0 = NULL, 1 = value) plus the value. A reader checks every length,
//!   tag and UTF-8 sequence and that nothing is left over: a corrupt row is
//!   a [`RowError`] naming its table, never a panic.

use thiserror::Error;

/// A row (or key) that does not decode.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("corrupt {table} row: {reason}")]
pub struct RowError {
    pub table: &'static str,
    pub reason: String,
}

/// Builds an order-preserving key.
#[derive(Default)]
pub struct KeyWriter {
    buf: Vec<u8>,
}

impl KeyWriter {
    pub fn new() -> Self {
        Self {
            buf: Vec::with_capacity(24),
        }
    }
    pub fn u8(mut self, v: u8) -> Self {
        self.buf.push(v);
        self
    }
    pub fn u32(mut self, v: u32) -> Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn str(mut self, v: &str) -> Self {
        debug_assert!(!v.as_bytes().contains(&0));
        self.buf.extend_from_slice(v.as_bytes());
        self.buf.push(0);
        self
    }
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

/// Reads a key written by [`KeyWriter`].
pub struct KeyReader<'a> {
    table: &'static str,
    buf: &'a [u8],
}

impl<'a> KeyReader<'a> {
    pub fn new(table: &'static str, buf: &'a [u8]) -> Self {
        Self { table, buf }
    }
    fn err(&self, reason: impl Into<String>) -> RowError {
        RowError {
            table: self.table,
            reason: reason.into(),
        }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], RowError> {
        if self.buf.len() < n {
            return Err(self.err(format!("key truncated: need {n} more bytes, have {}", self.buf.len())));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }
    pub fn u8(&mut self) -> Result<u8, RowError> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32, RowError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn str(&mut self) -> Result<String, RowError> {
        let end = self
            .buf
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| self.err("key string without terminator"))?;
        let s = std::str::from_utf8(&self.buf[..end])
            .map_err(|_| self.err("key string is not UTF-8"))?
            .to_string();
        self.buf = &self.buf[end + 1..];
        Ok(s)
    }
    pub fn finish(self) -> Result<(), RowError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(self.err(format!("{} trailing key bytes", self.buf.len())))
        }
    }
}

/// Builds a row value.
pub struct RowWriter {
    buf: Vec<u8>,
}

impl RowWriter {
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            buf: Vec::with_capacity(bytes),
        }
    }
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// A string of at most 255 bytes (callers respect the spec's widths).
    pub fn str(&mut self, v: &str) -> &mut Self {
        let len = u8::try_from(v.len()).unwrap_or(u8::MAX);
        self.buf.push(len);
        self.buf.extend_from_slice(&v.as_bytes()[..usize::from(len)]);
        self
    }
    /// A string of at most 65,535 bytes.
    pub fn long_str(&mut self, v: &str) -> &mut Self {
        let len = u16::try_from(v.len()).unwrap_or(u16::MAX);
        self.buf.extend_from_slice(&len.to_le_bytes());
        self.buf.extend_from_slice(&v.as_bytes()[..usize::from(len)]);
        self
    }
    pub fn opt_u8(&mut self, v: Option<u8>) -> &mut Self {
        match v {
            None => self.u8(0),
            Some(x) => self.u8(1).u8(x),
        }
    }
    pub fn opt_u64(&mut self, v: Option<u64>) -> &mut Self {
        match v {
            None => self.u8(0),
            Some(x) => self.u8(1).u64(x),
        }
    }
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }
}

/// Reads a row value, validating as it goes.
pub struct RowReader<'a> {
    table: &'static str,
    buf: &'a [u8],
}

impl<'a> RowReader<'a> {
    pub fn new(table: &'static str, buf: &'a [u8]) -> Self {
        Self { table, buf }
    }
    pub fn err(&self, reason: impl Into<String>) -> RowError {
        RowError {
            table: self.table,
            reason: reason.into(),
        }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], RowError> {
        if self.buf.len() < n {
            return Err(self.err(format!("truncated: need {n} more bytes, have {}", self.buf.len())));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }
    pub fn u8(&mut self) -> Result<u8, RowError> {
        Ok(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16, RowError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    pub fn u32(&mut self) -> Result<u32, RowError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn u64(&mut self) -> Result<u64, RowError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    pub fn i64(&mut self) -> Result<i64, RowError> {
        Ok(self.u64()? as i64)
    }
    fn utf8(&self, column: &str, b: &[u8]) -> Result<String, RowError> {
        std::str::from_utf8(b)
            .map(str::to_string)
            .map_err(|_| self.err(format!("{column} is not UTF-8")))
    }
    /// A string column of at most `max_len` bytes.
    pub fn str(&mut self, column: &str, max_len: usize) -> Result<String, RowError> {
        let len = usize::from(self.u8()?);
        if len > max_len {
            return Err(self.err(format!("{column} is {len} bytes, more than {max_len}")));
        }
        let b = self.take(len)?;
        self.utf8(column, b)
    }
    pub fn long_str(&mut self, column: &str, max_len: usize) -> Result<String, RowError> {
        let len = usize::from(self.u16()?);
        if len > max_len {
            return Err(self.err(format!("{column} is {len} bytes, more than {max_len}")));
        }
        let b = self.take(len)?;
        self.utf8(column, b)
    }
    fn tag(&mut self, column: &str) -> Result<bool, RowError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            t => Err(self.err(format!("{column} has null tag {t}"))),
        }
    }
    pub fn opt_u8(&mut self, column: &str) -> Result<Option<u8>, RowError> {
        Ok(if self.tag(column)? { Some(self.u8()?) } else { None })
    }
    pub fn opt_u64(&mut self, column: &str) -> Result<Option<u64>, RowError> {
        Ok(if self.tag(column)? { Some(self.u64()?) } else { None })
    }
    /// Fails unless every byte was consumed.
    pub fn finish(self) -> Result<(), RowError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(self.err(format!("{} trailing bytes", self.buf.len())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_keys_sort_like_their_tuples() {
        let a = KeyWriter::new().u32(1).str("BAR").str("Z").finish();
        let b = KeyWriter::new().u32(1).str("BARBAR").str("A").finish();
        assert!(a < b, "a shorter last name sorts first whatever follows");
        let c = KeyWriter::new().u32(256).finish();
        let d = KeyWriter::new().u32(2).finish();
        assert!(d < c);
    }

    #[test]
    fn truncated_row_is_an_error_naming_the_table() {
        let mut r = RowReader::new("stock", &[1, 2]);
        let e = r.u32().unwrap_err();
        assert_eq!(e.table, "stock");
        assert!(e.to_string().contains("corrupt stock row"));
    }
}
