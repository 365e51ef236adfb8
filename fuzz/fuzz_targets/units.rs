//! Fuzz target `units`: the check in `flushwise_fuzz_checks::units`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flushwise_fuzz_checks::units::check(data));
