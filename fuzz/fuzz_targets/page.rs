//! Fuzz target `page`: the check in `flushwise_fuzz_checks::page`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flushwise_fuzz_checks::page::check(data));
