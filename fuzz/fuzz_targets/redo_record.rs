//! Fuzz target `redo_record`: the check in `flushwise_fuzz_checks::redo_record`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flushwise_fuzz_checks::redo_record::check(data));
