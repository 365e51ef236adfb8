//! Sets `FLUSHWISE_COMMIT` to `git rev-parse --short HEAD`, with `-dirty`
//! when tracked files differ from HEAD, or "unknown" without git, so every
//! result names the code that produced it (STYLE.md §5).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = match git(&["rev-parse", "--short", "HEAD"]) {
        Some(hash) if !hash.is_empty() => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{hash}-dirty")
            } else {
                hash
            }
        }
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=FLUSHWISE_COMMIT={commit}");
    // Re-run when HEAD moves or the index changes (a commit, a checkout, an add).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
    }
    if let Some(common) = git(&["rev-parse", "--git-common-dir"]) {
        println!("cargo:rerun-if-changed={common}/refs/heads");
    }
    // And when any source of the workspace changes, so an edited, not yet
    // committed tree is labelled `-dirty` (cargo walks the directory's
    // files for their modification times).
    println!("cargo:rerun-if-changed=../../crates");
    println!("cargo:rerun-if-changed=build.rs");
}
