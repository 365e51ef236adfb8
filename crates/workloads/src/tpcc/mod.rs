//! TPC-C on a transactional store (in progress): the schema of clause 1.3
//! and its key and row codecs.

pub mod codec;
pub mod schema;
