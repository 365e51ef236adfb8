//! The manifest of a prepared TPC-C directory (`flushwise-tpcc.json`):
//! `flushwise_lab::database::Manifest::parse` on the file's text.
//!
//! Modes (low bit of the first byte):
//! - 0: the rest as the file's text (lossily made UTF-8, as a file read
//!   with `read_to_string` would be refused otherwise);
//! - 1: a structured manifest with valid fields must render and parse back
//!   to itself.
//!
//! Properties: `parse` never panics; a manifest it accepts has at least one
//! warehouse, a page size the engine supports and a finite, non-negative
//! load time, and renders to text that parses to the same manifest.

use arbitrary::Unstructured;
use flushwise_engine::page::PageSize;
use flushwise_lab::database::Manifest;

const PAGE_SIZES: [u32; 5] = [4096, 8192, 16384, 32768, 65536];

pub fn check(data: &[u8]) {
    let Some((mode, rest)) = crate::split_mode(data) else {
        return;
    };
    if mode & 1 == 0 {
        let text = String::from_utf8_lossy(rest);
        if let Ok(manifest) = Manifest::parse(&text) {
            assert!(manifest.warehouses >= 1);
            assert!(PageSize::new(manifest.page_size_bytes as usize).is_ok());
            assert!(manifest.load_seconds.is_finite() && manifest.load_seconds >= 0.0);
            assert_round_trip(&manifest);
        }
    } else {
        let _ = structured(rest);
    }
}

fn assert_round_trip(manifest: &Manifest) {
    let text = manifest.render().expect("a valid manifest renders");
    match Manifest::parse(&text) {
        Ok(back) => assert!(
            back == *manifest,
            "manifest changed through render and parse: {manifest:?} became {back:?}"
        ),
        Err(e) => panic!("a rendered manifest is refused: {e}\n{text}"),
    }
}

fn structured(rest: &[u8]) -> arbitrary::Result<()> {
    let mut u = Unstructured::new(rest);
    let load_seconds = u.arbitrary::<f64>()?;
    let manifest = Manifest {
        warehouses: u.int_in_range(1..=u32::MAX)?,
        page_size_bytes: *u.choose(&PAGE_SIZES)?,
        redo_bytes: u.arbitrary()?,
        seed: u.arbitrary()?,
        rows: u.arbitrary()?,
        load_seconds: if load_seconds.is_finite() {
            load_seconds.abs()
        } else {
            0.0
        },
        database_bytes: u.arbitrary()?,
        commit: u.arbitrary::<String>()?,
        data_file_bytes: u.arbitrary()?,
    };
    assert_round_trip(&manifest);
    Ok(())
}
