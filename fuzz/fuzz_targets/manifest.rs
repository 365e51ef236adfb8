//! Fuzz target `manifest`: the check in `flushwise_fuzz_checks::manifest`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flushwise_fuzz_checks::manifest::check(data));
