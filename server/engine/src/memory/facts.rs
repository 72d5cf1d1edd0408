//! Executable memory: a claim plus a command that demonstrates it. Commands are split into
//! an argument vector (POSIX shell word rules via `shell-words`, but never run by a shell),
//! run from the workspace root with a time limit, and never run unless `.loci/config.toml`
//! sets `[facts] run = true`.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use loci_store::memory::{self as mem, Fact};
use serde::Serialize;

use super::memory::WriteOptions;
use crate::{EngineError, Envelope, Result, Workspace};

/// Output kept per run, in bytes.
pub const FACT_OUTPUT_CAP: usize = 16 * 1024;

/// One fact's run.
#[derive(Clone, Debug, Serialize)]
pub struct FactRun {
    /// The fact.
    pub fact_id: i64,
    /// Its claim.
    pub claim: String,
    /// `pass`, `fail`, `error` (could not start), `timeout`.
    pub status: String,
    /// The exit code, if it exited.
    pub exit_code: Option<i64>,
    /// Combined stdout and stderr, capped at [`FACT_OUTPUT_CAP`] bytes.
    pub output: String,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}

impl Workspace {
    /// Records a fact. The command must split into at least one word.
    pub fn fact_add(
        &mut self,
        claim: &str,
        command: &str,
        expect_output: Option<&str>,
        expect_exit: Option<i64>,
        opts: &WriteOptions,
    ) -> Result<Envelope<Fact>> {
        if claim.trim().is_empty() {
            return Err(EngineError::InvalidArgument {
                name: "claim".into(),
                message: "must not be empty".into(),
            });
        }
        self.accept_options(opts)?;
        self.accept_text("claim", claim)?;
        self.accept_text("cmd", command)?;
        if let Some(expect) = expect_output {
            self.accept_text("expect", expect)?;
        }
        let argv = shell_words::split(command).map_err(|e| EngineError::InvalidArgument {
            name: "cmd".into(),
            message: format!("cannot split `{command}` into arguments: {e}"),
        })?;
        if argv.is_empty() {
            return Err(EngineError::InvalidArgument {
                name: "cmd".into(),
                message: "must not be empty".into(),
            });
        }
        if expect_output.is_none() && expect_exit.is_none() {
            return Err(EngineError::InvalidArgument {
                name: "expect".into(),
                message: "give an expected output substring (--expect) and/or exit code (--exit)"
                    .into(),
            });
        }
        if opts.expect_version.is_some() {
            return Err(EngineError::InvalidArgument {
                name: "expect_version".into(),
                message: "facts have no versions; drop it (use operation_id for safe retries)"
                    .into(),
            });
        }
        let author = self.author_of(opts)?;
        let session = opts.session;
        let request = serde_json::json!({"op": "fact_add", "claim": claim, "cmd": command,
            "expect": expect_output, "exit": expect_exit});
        let share = self.team_share();
        let id = super::guard::with_receipt(
            &mut self.store,
            opts.operation_id.as_deref(),
            &request,
            |tx| {
                let id = mem::insert_fact(
                    tx,
                    claim.trim(),
                    command,
                    expect_output,
                    expect_exit,
                    &author,
                    session,
                )?;
                mem::insert_event(
                tx,
                "fact",
                &format!("fact:{id}"),
                "",
                Some(&serde_json::json!({"claim": claim, "cmd": command, "summary": opts.summary}).to_string()),
                session,
            )?;
                // Team memory: the definition is shared (super::team::LocalShare).
                if let Some(share) = &share
                    && let Some(fact) = mem::facts(tx)?.iter().find(|f| f.fact_id == id)
                {
                    let shared = super::portability::ExportedFact::from(fact);
                    share.queue(tx, "fact", "fact", "", &author, &shared)?;
                }
                Ok(id)
            },
        )?;
        self.team_push_shared();
        let fact = mem::facts(self.store.conn())?
            .into_iter()
            .find(|f| f.fact_id == id)
            .ok_or_else(|| EngineError::Internal("fact vanished".into()))?;
        self.envelope(fact, Vec::new())
    }

    /// Every fact with its last run.
    pub fn fact_list(&self) -> Result<Envelope<Vec<Fact>>> {
        let facts = mem::facts(self.store.conn())?;
        self.envelope(facts, Vec::new())
    }

    /// Runs every fact (or only `only`), if enabled in the config; stores each outcome.
    pub fn fact_run(&mut self, only: Option<i64>) -> Result<Envelope<Vec<FactRun>>> {
        if !self.config.facts.run {
            return Err(EngineError::InvalidArgument {
                name: "facts.run".into(),
                message: format!(
                    "running facts is disabled: they are commands stored in the database. To allow it, add\n\n[facts]\nrun = true\n\nto {}",
                    self.root
                        .join(crate::LOCI_DIR)
                        .join("config.toml")
                        .display()
                ),
            });
        }
        let timeout = Duration::from_millis(self.config.facts.timeout_ms);
        let facts: Vec<Fact> = mem::facts(self.store.conn())?
            .into_iter()
            .filter(|f| only.is_none_or(|id| id == f.fact_id))
            .collect();
        if let Some(id) = only
            && facts.is_empty()
        {
            return Err(EngineError::NotFound(format!("no fact {id}")));
        }
        let mut runs = Vec::new();
        for f in facts {
            let run = run_fact(&self.root, &f, timeout);
            self.store.write(|tx| {
                mem::insert_fact_run(
                    tx,
                    run.fact_id,
                    &run.status,
                    run.exit_code,
                    &run.output,
                    run.duration_ms,
                )
            })?;
            runs.push(run);
        }
        self.envelope(runs, Vec::new())
    }
}

fn run_fact(root: &std::path::Path, f: &Fact, timeout: Duration) -> FactRun {
    let started = Instant::now();
    let mut run = FactRun {
        fact_id: f.fact_id,
        claim: f.claim.clone(),
        status: "error".into(),
        exit_code: None,
        output: String::new(),
        duration_ms: 0,
    };
    let argv = match shell_words::split(&f.command) {
        Ok(a) if !a.is_empty() => a,
        Ok(_) => {
            run.output = "empty command".into();
            return run;
        }
        Err(e) => {
            run.output = format!("cannot split the command: {e}");
            return run;
        }
    };
    let child = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            run.output = format!("cannot start `{}`: {e}", argv[0]);
            run.duration_ms = started.elapsed().as_millis() as u64;
            return run;
        }
    };
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_end(&mut b);
        }
        b
    });
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_end(&mut b);
        }
        b
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break None,
        }
    };
    let mut output = out_reader.join().unwrap_or_default();
    output.extend(err_reader.join().unwrap_or_default());
    output.truncate(FACT_OUTPUT_CAP);
    run.output = String::from_utf8_lossy(&output).into_owned();
    run.duration_ms = started.elapsed().as_millis() as u64;
    match status {
        None => run.status = "timeout".into(),
        Some(status) => {
            run.exit_code = status.code().map(i64::from);
            let exit_ok = f.expect_exit.is_none_or(|e| run.exit_code == Some(e));
            let out_ok = f
                .expect_output
                .as_deref()
                .is_none_or(|e| run.output.contains(e));
            run.status = if exit_ok && out_ok { "pass" } else { "fail" }.into();
        }
    }
    run
}
