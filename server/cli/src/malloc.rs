//! A bound on glibc malloc's arenas in the long-running servers (`loci lsp`, `loci mcp`).
//!
//! glibc's malloc gives every thread that allocates while another does its own arena (up
//! to eight per core), keeps each thread on its arena for life, and keeps memory freed in
//! an arena for reuse there (only the top of a heap goes back to the system). The servers
//! run each request on whichever tokio blocking thread is free, so each of those threads'
//! arenas ratchets up, over hours, to the largest working set any request had on it, and
//! the resident set grows with the number of arenas, not with live data. The soak
//! (`bench/soak.py`, docs/reliability.md section 6) measured it: the MCP server's RSS rose
//! 68 MiB/h holding 7 MiB of live heap and 22 MiB of freed memory in 11 arenas; with the
//! bound it levels off.
//!
//! The arena count is a glibc tunable read once, at process start, so the server
//! re-executes itself (same process id, arguments and descriptors) with
//! `glibc.malloc.arena_max` added to `GLIBC_TUNABLES`, before any other thread exists.
//! A `GLIBC_TUNABLES` that already sets `glibc.malloc.arena_max` is left as it is: that
//! is how to choose another bound, and it stops the re-execution from repeating. Child
//! processes (facts, git) inherit the setting.

/// The environment variable glibc reads its tunables from.
pub const TUNABLES: &str = "GLIBC_TUNABLES";

/// The tunable bounding the number of malloc arenas.
pub const ARENA_MAX_TUNABLE: &str = "glibc.malloc.arena_max";

/// Arenas the servers allow: one. Each further arena keeps its own largest working set:
/// with two, the soak's MCP server still grew 22 MiB/h beyond its page cache; with one,
/// 1.7 MiB/h (10-minute runs, docs/reliability.md section 6). Threads keep their own
/// caches of small blocks (glibc's tcache), so parser threads rarely meet on the lock.
pub const ARENA_MAX: u32 = 1;

/// The `GLIBC_TUNABLES` value to re-execute with, given the current one: `current` with
/// `glibc.malloc.arena_max=ARENA_MAX` appended (tunables are `:`-separated), or `None`
/// when `current` already sets `glibc.malloc.arena_max` (to any value).
pub fn tunables_with_arena_max(current: Option<&str>) -> Option<String> {
    let current = current.unwrap_or("").trim_matches(':');
    let sets_arena_max = current
        .split(':')
        .any(|t| t.split_once('=').map(|(name, _)| name.trim()) == Some(ARENA_MAX_TUNABLE));
    if sets_arena_max {
        return None;
    }
    let bound = format!("{ARENA_MAX_TUNABLE}={ARENA_MAX}");
    Some(if current.is_empty() {
        bound
    } else {
        format!("{current}:{bound}")
    })
}

/// Re-executes this process with the arena bound when it lacks one (glibc Linux only).
/// Returns only when it did not re-execute: another platform, the bound already set, or
/// the exec failed (logged as a warning; the server then runs without the bound).
pub fn bound_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        let current = match std::env::var(TUNABLES) {
            Ok(v) => Some(v),
            Err(std::env::VarError::NotPresent) => None,
            // Not UTF-8: leave a setting we cannot read alone.
            Err(std::env::VarError::NotUnicode(_)) => return,
        };
        let Some(tunables) = tunables_with_arena_max(current.as_deref()) else {
            return;
        };
        let mut args = std::env::args_os();
        let arg0 = args.next().unwrap_or_else(|| "loci".into());
        // `/proc/self/exe` is this very binary, even if its path was replaced or removed.
        let error = std::process::Command::new("/proc/self/exe")
            .arg0(arg0)
            .args(args)
            .env(TUNABLES, tunables)
            .exec();
        tracing::warn!(%error, "could not re-execute with a bound on malloc arenas; memory may grow with the number of threads");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_added_alone_or_after_other_tunables() {
        assert_eq!(
            tunables_with_arena_max(None).as_deref(),
            Some("glibc.malloc.arena_max=1")
        );
        assert_eq!(
            tunables_with_arena_max(Some("")).as_deref(),
            Some("glibc.malloc.arena_max=1")
        );
        assert_eq!(
            tunables_with_arena_max(Some("glibc.malloc.tcache_count=0")).as_deref(),
            Some("glibc.malloc.tcache_count=0:glibc.malloc.arena_max=1")
        );
        assert_eq!(
            tunables_with_arena_max(Some("glibc.malloc.arena_test=4:")).as_deref(),
            Some("glibc.malloc.arena_test=4:glibc.malloc.arena_max=1")
        );
    }

    #[test]
    fn an_arena_max_already_set_is_kept_and_stops_the_reexecution() {
        assert_eq!(
            tunables_with_arena_max(Some("glibc.malloc.arena_max=8")),
            None
        );
        assert_eq!(
            tunables_with_arena_max(Some("glibc.malloc.tcache_count=0:glibc.malloc.arena_max=1")),
            None
        );
    }
}
