//! Fuzz target `trace`: the check in `flushwise_fuzz_checks::trace`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flushwise_fuzz_checks::trace::check(data));
