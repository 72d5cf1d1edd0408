//! The configured model command: read from `[synthesis] command`, run in a process group
//! of its own with the prompt on stdin, its output capped and its time limited.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::memory::guard::MAX_MEMORY_TEXT_BYTES;
use crate::{EngineError, Result, Workspace};

use super::{MIN_PROMPT_TOKENS, MODEL_AUTHOR_PREFIX, STDERR_CAP};

impl Workspace {
    /// The configured command, or the error that says how to configure one.
    pub(super) fn synthesis_command(&self) -> Result<Configured> {
        let cfg = &self.config.synthesis;
        let config_path = self.root.join(crate::LOCI_DIR).join("config.toml");
        let Some(command) = cfg.command.as_deref().filter(|c| !c.trim().is_empty()) else {
            return Err(EngineError::Config {
                path: config_path,
                message: "page synthesis is off: no `[synthesis] command` is set, and loci \
                          calls no model on its own. Name a command that reads a prompt on \
                          stdin and prints markdown, for example\n\n[synthesis]\ncommand = \
                          \"claude -p\"\nmodel = \"claude-sonnet\"\n\n(see docs/synthesis.md)"
                    .into(),
            });
        };
        let argv = shell_words::split(command).map_err(|e| EngineError::Config {
            path: config_path.clone(),
            message: format!("cannot split `[synthesis] command` into arguments: {e}"),
        })?;
        let Some(first) = argv.first() else {
            return Err(EngineError::Config {
                path: config_path,
                message: "`[synthesis] command` is empty".into(),
            });
        };
        if cfg.max_tokens < MIN_PROMPT_TOKENS {
            return Err(EngineError::Config {
                path: config_path,
                message: format!(
                    "`[synthesis] max_tokens` is {}; a prompt needs at least {MIN_PROMPT_TOKENS}",
                    cfg.max_tokens
                ),
            });
        }
        let program = Path::new(first)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| first.clone());
        let model = cfg
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| program.clone());
        self.accept_author(&format!("{MODEL_AUTHOR_PREFIX}{model}"))?;
        Ok(Configured {
            argv,
            program,
            model,
        })
    }
}

/// The configured command, split.
pub(super) struct Configured {
    pub(super) argv: Vec<String>,
    pub(super) program: String,
    pub(super) model: String,
}

/// How the command ended.
pub(super) enum Ended {
    Exited(i64),
    TimedOut,
    NotStarted(String),
}

/// What the command did: how it ended, its stdout (capped), its stderr and wall time.
pub(super) struct Output {
    pub(super) ended: Ended,
    pub(super) stdout: Vec<u8>,
    /// More than the stdout cap was written.
    pub(super) overflow: bool,
    pub(super) stderr: String,
    pub(super) wall_ms: u64,
}

/// Runs `argv` from `root` in a process group of its own with `prompt` on stdin, reading
/// stdout up to [`MAX_MEMORY_TEXT_BYTES`] + 1 bytes and stderr up to [`STDERR_CAP`]; kills
/// the whole group at `timeout`, and after the command exits (so nothing it started lives
/// on holding its pipes).
pub(super) fn run_command(root: &Path, argv: &[String], prompt: &str, timeout: Duration) -> Output {
    let started = Instant::now();
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Output {
                ended: Ended::NotStarted(format!("cannot start `{}`: {e}", argv[0])),
                stdout: Vec::new(),
                overflow: false,
                stderr: String::new(),
                wall_ms: started.elapsed().as_millis() as u64,
            };
        }
    };
    let pid = child.id();
    let mut stdin = child.stdin.take();
    let prompt = prompt.as_bytes().to_vec();
    // A command that never reads its stdin must not block the run: write from a thread,
    // and a closed pipe is not an error.
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&prompt);
        }
        drop(stdin);
    });
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let out_reader = std::thread::spawn(move || read_capped(stdout, MAX_MEMORY_TEXT_BYTES));
    let err_reader = std::thread::spawn(move || read_capped(stderr, STDERR_CAP));
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ended::Exited(status.code().map_or(-1, i64::from)),
            Ok(None) if started.elapsed() >= timeout => {
                kill_group(pid);
                let _ = child.kill();
                let _ = child.wait();
                break Ended::TimedOut;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                kill_group(pid);
                let _ = child.kill();
                let _ = child.wait();
                break Ended::NotStarted(format!("cannot wait for `{}`: {e}", argv[0]));
            }
        }
    };
    // What the command started in the background goes with it.
    kill_group(pid);
    let _ = writer.join();
    let (stdout, overflow) = out_reader.join().unwrap_or_default();
    let (stderr, _) = err_reader.join().unwrap_or_default();
    Output {
        ended,
        stdout,
        overflow,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        wall_ms: started.elapsed().as_millis() as u64,
    }
}

/// Reads up to `cap` bytes, then stops reading (the writer gets a broken pipe). Returns
/// the bytes and whether more were offered.
fn read_capped(source: Option<impl Read>, cap: usize) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let Some(source) = source else {
        return (out, false);
    };
    let mut limited = source.take(cap as u64 + 1);
    let _ = limited.read_to_end(&mut out);
    let overflow = out.len() > cap;
    out.truncate(cap);
    (out, overflow)
}

/// Kills the process group `pid` leads (the command and everything it started).
#[cfg(unix)]
fn kill_group(pid: u32) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    if let Ok(pid) = i32::try_from(pid) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: u32) {}
