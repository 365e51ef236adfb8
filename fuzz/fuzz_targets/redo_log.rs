//! Fuzz target `redo_log`: the check in `flushwise_fuzz_checks::redo_log`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flushwise_fuzz_checks::redo_log::check(data));
