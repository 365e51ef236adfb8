//! Fuzz target `checkpoint`: the check in `flushwise_fuzz_checks::checkpoint`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flushwise_fuzz_checks::checkpoint::check(data));
