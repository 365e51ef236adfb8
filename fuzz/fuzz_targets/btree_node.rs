//! Fuzz target `btree_node`: the check in `flushwise_fuzz_checks::btree_node`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flushwise_fuzz_checks::btree_node::check(data));
