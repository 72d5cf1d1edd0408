//! `loci init --git-hook`: git hooks that run `loci sync --quiet` after a commit, a merge
//! (and so a pull), a checkout of a branch and a rewrite (amend, rebase), so that the
//! history, the stale marks and the count of pages behind the code follow the commits made
//! in a terminal without an editor open.
//!
//! Rules: a hook never fails or slows the git command with an error: the block runs only
//! when `loci` is on `PATH` and the workspace's `.loci/` exists, discards its output and
//! ignores its exit status. An existing hook is kept: loci's block, between
//! [`BEGIN_MARKER`] and [`END_MARKER`], goes right after its `#!` line (so an `exit` at the
//! end of the hook does not skip it), and a second install changes no byte. A hook in
//! another language than the POSIX shell (`#!/usr/bin/env python3`) is left untouched and
//! reported. `--remove-git-hook` takes the block out again and deletes a hook that held
//! nothing else.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::map::git::{self, GitError};
use crate::{EngineError, Result};

/// The hooks loci adds its block to.
pub const HOOKS: &[&str] = &["post-commit", "post-merge", "post-checkout", "post-rewrite"];

/// The first line of loci's block.
pub const BEGIN_MARKER: &str =
    "# >>> loci sync: added by `loci init --git-hook`, removed by `loci init --remove-git-hook`";
/// The last line of loci's block.
pub const END_MARKER: &str = "# <<< loci sync";

/// What happened to one hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookAction {
    /// The hook did not exist and was written.
    Created,
    /// loci's block was added to an existing hook (or its old block replaced).
    Added,
    /// The hook already held this block.
    Unchanged,
    /// loci's block was taken out (the hook keeps the rest).
    Removed,
    /// The hook held only loci's block and was deleted.
    Deleted,
    /// There was no block to take out.
    Absent,
    /// The hook is not a shell script; nothing was changed (see the note).
    Skipped,
}

/// One hook's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct HookChange {
    /// `post-commit`, ...
    pub hook: &'static str,
    /// The hook file.
    pub path: PathBuf,
    /// What was done.
    pub action: HookAction,
    /// Why a hook was skipped.
    pub note: Option<String>,
}

/// What `loci init --git-hook` (or `--remove-git-hook`) did.
#[derive(Clone, Debug, Serialize)]
pub struct HooksReport {
    /// The hooks directory (`core.hooksPath`, else the repository's `hooks/`).
    pub dir: PathBuf,
    /// One entry per hook of [`HOOKS`].
    pub hooks: Vec<HookChange>,
}

/// The block for `hook`, workspace root `prefix` (relative to the working tree, with a
/// trailing `/`, or empty): runs `loci sync --quiet` in the workspace when `loci` is on
/// `PATH` and `.loci/` exists there; a checkout of files (not of a branch) syncs nothing.
pub fn block(hook: &str, prefix: &str) -> String {
    let dir = if prefix.is_empty() {
        ".".to_string()
    } else {
        shell_quote(prefix.trim_end_matches('/'))
    };
    let condition = if hook == "post-checkout" {
        // The third argument is 0 for a checkout of files: HEAD did not move.
        " && [ \"$3\" != 0 ]"
    } else {
        ""
    };
    format!(
        "{BEGIN_MARKER}\nif command -v loci >/dev/null 2>&1 && [ -d {dir}/.loci ]{condition}; then\n  loci -C {dir} sync --quiet </dev/null >/dev/null 2>&1 || :\nfi\n{END_MARKER}\n"
    )
}

/// Adds loci's block to every hook of [`HOOKS`] in the repository containing `root` (see
/// the module docs).
///
/// Errors: [`EngineError::InvalidArgument`] (`--git-hook`) when `root` is in no git
/// repository; [`EngineError::Io`] when a hook cannot be read or written.
pub fn install(root: &Path) -> Result<HooksReport> {
    let (dir, prefix) = location(root)?;
    std::fs::create_dir_all(&dir).map_err(|source| EngineError::Io {
        path: dir.clone(),
        source,
    })?;
    let mut hooks = Vec::new();
    for hook in HOOKS {
        let path = dir.join(hook);
        let wanted = block(hook, &prefix);
        let old = read(&path)?;
        let (action, text, note) = match &old {
            None => (HookAction::Created, format!("#!/bin/sh\n{wanted}"), None),
            Some(old) => match shell_of(old) {
                Err(interpreter) => (
                    HookAction::Skipped,
                    old.clone(),
                    Some(format!(
                        "a `{interpreter}` script, not a shell script: add `loci sync --quiet` to it yourself"
                    )),
                ),
                Ok(()) => {
                    let (without, _) = strip_block(old);
                    let text = insert_block(&without, &wanted);
                    if &text == old {
                        (HookAction::Unchanged, text, None)
                    } else {
                        (HookAction::Added, text, None)
                    }
                }
            },
        };
        if matches!(action, HookAction::Created | HookAction::Added) {
            write(&path, &text)?;
        }
        hooks.push(HookChange {
            hook,
            path,
            action,
            note,
        });
    }
    Ok(HooksReport { dir, hooks })
}

/// Takes loci's block out of every hook of [`HOOKS`]; a hook left with nothing but its
/// `#!` line and blank lines is deleted.
///
/// Errors: as [`install`].
pub fn remove(root: &Path) -> Result<HooksReport> {
    let (dir, _) = location(root)?;
    let mut hooks = Vec::new();
    for hook in HOOKS {
        let path = dir.join(hook);
        let action = match read(&path)? {
            None => HookAction::Absent,
            Some(old) => {
                let (without, found) = strip_block(&old);
                if !found {
                    HookAction::Absent
                } else if without
                    .lines()
                    .all(|l| l.trim().is_empty() || l.starts_with("#!"))
                {
                    std::fs::remove_file(&path).map_err(|source| EngineError::Io {
                        path: path.clone(),
                        source,
                    })?;
                    HookAction::Deleted
                } else {
                    write(&path, &without)?;
                    HookAction::Removed
                }
            }
        };
        hooks.push(HookChange {
            hook,
            path,
            action,
            note: None,
        });
    }
    Ok(HooksReport { dir, hooks })
}

fn location(root: &Path) -> Result<(PathBuf, String)> {
    git::hooks_location(root).map_err(|e| match e {
        GitError::NotARepository { path } => EngineError::InvalidArgument {
            name: "--git-hook".into(),
            message: format!(
                "{}: not a git repository (nor any of its parent directories): there are no git hooks to add",
                path.display()
            ),
        },
        other => EngineError::Internal(other.to_string()),
    })
}

fn read(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(EngineError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Writes through a temporary file and a rename, executable (`0755`) on Unix.
fn write(path: &Path, text: &str) -> Result<()> {
    let io = |source| EngineError::Io {
        path: path.to_path_buf(),
        source,
    };
    let tmp = path.with_extension("loci-tmp");
    std::fs::write(&tmp, text).map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).map_err(io)?;
    }
    std::fs::rename(&tmp, path).map_err(io)
}

/// `Ok` when the hook runs in a POSIX shell (a `#!` naming `sh`, `bash`, `dash`, `zsh`,
/// `ksh` or `ash`, directly or through `env`, or no `#!` at all); else the interpreter.
fn shell_of(text: &str) -> std::result::Result<(), String> {
    let Some(line) = text.lines().next().and_then(|l| l.strip_prefix("#!")) else {
        return Ok(());
    };
    let mut words = line.split_whitespace();
    let mut program = words.next().unwrap_or_default();
    let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    if name(program) == "env" {
        program = words.find(|w| !w.starts_with('-')).unwrap_or_default();
    }
    let program = name(program);
    if ["sh", "bash", "dash", "zsh", "ksh", "ash"].contains(&program.as_str()) {
        Ok(())
    } else {
        Err(program)
    }
}

/// The text without loci's block, and whether it had one.
fn strip_block(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    let mut found = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if !inside && bare == BEGIN_MARKER {
            inside = true;
            found = true;
            continue;
        }
        if inside {
            if bare == END_MARKER {
                inside = false;
            }
            continue;
        }
        out.push_str(line);
    }
    (out, found)
}

/// `block` right after the `#!` line, else at the top.
fn insert_block(text: &str, block: &str) -> String {
    match text.split_once('\n') {
        Some((first, rest)) if first.starts_with("#!") => format!("{first}\n{block}{rest}"),
        None if text.starts_with("#!") => format!("{text}\n{block}"),
        _ => format!("{block}{text}"),
    }
}

/// `s` in single quotes for the shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_goes_after_the_shebang_and_comes_out_again() {
        let hook = "#!/bin/bash\necho mine\nexit 0\n";
        let block = block("post-commit", "");
        let added = insert_block(hook, &block);
        assert_eq!(
            added,
            format!("#!/bin/bash\n{block}echo mine\nexit 0\n"),
            "an exit at the end must not skip the block"
        );
        assert_eq!(strip_block(&added), (hook.to_string(), true));
        assert_eq!(shell_of(hook), Ok(()));
        assert_eq!(
            shell_of("#!/usr/bin/env python3\nprint()\n"),
            Err("python3".into())
        );
        assert_eq!(shell_of("#!/usr/bin/env -S bash -e\n"), Ok(()));
    }

    #[test]
    fn the_block_runs_loci_in_the_workspace_and_never_fails() {
        assert_eq!(
            block("post-checkout", "sub dir/"),
            format!(
                "{BEGIN_MARKER}\nif command -v loci >/dev/null 2>&1 && [ -d 'sub dir'/.loci ] && [ \"$3\" != 0 ]; then\n  loci -C 'sub dir' sync --quiet </dev/null >/dev/null 2>&1 || :\nfi\n{END_MARKER}\n"
            )
        );
    }
}
