//! Helpers for the reliability tests: a `loci lsp` child spoken to in Content-Length
//! frames, the map dumped row by row for comparison with a fresh scan, the store's
//! integrity checks, a corpus copied from the Python standard library, and sizes read from
//! the environment.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};

use loci_store::rusqlite::{Connection, OpenFlags, types::ValueRef};
use serde_json::{Value, json};

use crate::mcp_support::{TIMEOUT, loci};

/// A size from the environment variable `name`, else `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

/// A `loci lsp` process spoken to in Content-Length frames, stderr collected.
pub struct Lsp {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    stderr: Arc<Mutex<String>>,
    id: u64,
}

impl Lsp {
    /// Starts `loci lsp` in `root` with `RUST_LOG=warn`.
    pub fn start(root: &Path) -> Lsp {
        let mut child = Command::new(loci())
            .arg("lsp")
            .current_dir(root)
            .env("RUST_LOG", "warn")
            .env_remove("LOCI_DB")
            .env_remove("LOCI_AUTHOR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn loci lsp");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut length = 0usize;
                loop {
                    let mut header = String::new();
                    if r.read_line(&mut header).unwrap_or(0) == 0 {
                        return;
                    }
                    let header = header.trim_end();
                    if header.is_empty() {
                        break;
                    }
                    if let Some(v) = header.strip_prefix("Content-Length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0u8; length];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let Ok(v) = serde_json::from_slice::<Value>(&body) else {
                    return;
                };
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let collected = Arc::new(Mutex::new(String::new()));
        let sink = collected.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Ok(mut s) = sink.lock() {
                    s.push_str(&line);
                    s.push('\n');
                }
            }
        });
        let stdin = child.stdin.take().expect("stdin");
        Lsp {
            child,
            stdin,
            messages,
            stderr: collected,
            id: 0,
        }
    }

    /// Sends one message.
    pub fn send(&mut self, v: &Value) {
        let body = v.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len())
            .and_then(|()| self.stdin.flush())
            .expect("write to loci lsp");
    }

    /// Sends a request and returns its response, answering the server's own requests
    /// (progress tokens, registrations) with `null` meanwhile.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.messages.recv_timeout(TIMEOUT).unwrap_or_else(|e| {
                panic!(
                    "no LSP response to {method} within {TIMEOUT:?} ({e}); stderr:\n{}",
                    self.stderr()
                )
            });
            match (m.get("id"), m.get("method")) {
                (Some(_), Some(_)) => {
                    self.send(&json!({"jsonrpc": "2.0", "id": m["id"], "result": null}));
                }
                (Some(got), None) if *got == json!(id) => return m,
                _ => {}
            }
        }
    }

    /// `initialize` with `root` as the only root, then `initialized`; returns the
    /// `initialize` response.
    pub fn initialize(&mut self, root: &Path) -> Value {
        let uri = format!("file://{}", root.display());
        let init = self.request(
            "initialize",
            json!({"processId": null, "rootUri": uri, "capabilities": {}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        init
    }

    /// `workspace/executeCommand` with one argument object.
    pub fn command(&mut self, command: &str, args: Value) -> Value {
        self.request(
            "workspace/executeCommand",
            json!({"command": command, "arguments": [args]}),
        )
    }

    /// `shutdown`, `exit`, and the exit status (an error string unless it is 0).
    pub fn finish(mut self) -> Result<(), String> {
        let r = self.request("shutdown", Value::Null);
        if r.get("error").is_some() {
            return Err(format!("lsp shutdown: {r}"));
        }
        self.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
        match self.child.wait() {
            Ok(status) if status.success() => Ok(()),
            other => Err(format!("lsp exit: {other:?}; stderr:\n{}", self.stderr())),
        }
    }

    /// What the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        // Only this test's own child, by handle.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Opens `db` read-only (no migration, no WAL change) for checks.
pub fn open_ro(db: &Path) -> Connection {
    Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap_or_else(|e| panic!("open {}: {e}", db.display()))
}

/// `PRAGMA integrity_check` and the FTS5 `integrity-check` (index against content) of
/// every full-text table: `["ok"]` when all pass, else what failed.
pub fn integrity(conn: &Connection) -> Vec<String> {
    let mut problems: Vec<String> = {
        let mut stmt = conn
            .prepare("PRAGMA integrity_check")
            .expect("integrity_check");
        stmt.query_map([], |r| r.get::<_, String>(0))
            .expect("integrity_check")
            .map(|r| r.expect("row"))
            .filter(|s| s != "ok")
            .collect()
    };
    let fts: Vec<String> = {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%fts5%'")
            .expect("fts tables");
        stmt.query_map([], |r| r.get(0))
            .expect("fts tables")
            .map(|r| r.expect("row"))
            .collect()
    };
    for table in fts {
        // Read-only connections cannot run the command; open a writable one for it.
        let path = conn.path().map(PathBuf::from);
        let rw = match &path {
            Some(p) if !p.as_os_str().is_empty() => Connection::open(p).expect("open rw"),
            _ => continue,
        };
        if let Err(e) = rw.execute(
            &format!("INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)"),
            [],
        ) {
            problems.push(format!("{table}: {e}"));
        }
    }
    if problems.is_empty() {
        vec!["ok".into()]
    } else {
        problems
    }
}

/// Every row of every table of the map that a scan derives, sorted, with row ids mapped
/// to what names them (a path, a symbol key, a chunk's path and line), and without times,
/// mtimes or scan ids: files, symbols, refs, imports, deps, ref_deps, doc_chunks,
/// code_chunks, skipped_files, fts_common_terms, the `meta` the scan writes, and the
/// terms each full-text index holds for each of its rows (FTS5's `fts5vocab`, in
/// `temp`: the contentless code-text indexes keep no text to compare).
pub fn dump_map(conn: &Connection) -> Vec<String> {
    // A target or enclosing id no symbol has is shown as such, never as unresolved.
    let symbol = |alias: &str, id: &str| {
        format!("CASE WHEN {id} IS NULL THEN '' ELSE ifnull({alias}.key, '<no such symbol>') END")
    };
    let queries = [
        "SELECT 'file', path, ifnull(language,''), size, content_hash, ifnull(fingerprint,''), lines, error_nodes, ifnull(degraded,''), lossy_utf8, ifnull(drift_hash,'') FROM files".to_string(),
        "SELECT 'symbol', f.path, s.key, s.name, s.qualified_name, s.kind, s.start_byte, s.end_byte, s.start_line, s.end_line, s.name_start_byte, s.name_end_byte, s.name_line, s.name_column, s.signature, ifnull(s.doc,''), s.body_fingerprint, s.signature_fingerprint, ifnull(s.parent_key,''), s.terms FROM symbols s JOIN files f USING (file_id)".to_string(),
        format!(
            "SELECT 'ref', f.path, r.name, r.kind, r.line, r.column, r.start_byte, r.end_byte, {}, {}, r.provenance, r.confidence, ifnull(r.receiver,''), ifnull(r.receiver_name,'') FROM refs r JOIN files f ON f.file_id = r.file_id LEFT JOIN symbols e ON e.symbol_id = r.enclosing_id LEFT JOIN symbols t ON t.symbol_id = r.target_id",
            symbol("e", "r.enclosing_id"),
            symbol("t", "r.target_id")
        ),
        "SELECT 'import', f.path, i.module, i.names, i.line FROM imports i JOIN files f USING (file_id)".to_string(),
        "SELECT 'dep', a.path, d.module, ifnull(b.path,'<unresolved>'), d.line, d.count FROM deps d JOIN files a ON a.file_id = d.from_file_id LEFT JOIN files b ON b.file_id = d.to_file_id".to_string(),
        "SELECT 'ref dep', a.path, b.path, d.kind, d.line, d.provenance, d.confidence, d.count FROM ref_deps d JOIN files a ON a.file_id = d.from_file_id JOIN files b ON b.file_id = d.to_file_id".to_string(),
        "SELECT 'chunk', f.path, c.heading, c.line, c.end_line, c.text, c.terms FROM doc_chunks c JOIN files f USING (file_id)".to_string(),
        format!(
            "SELECT 'code chunk', f.path, {}, c.start_line, c.end_line, c.secondary, ifnull(c.embed_hash,'') FROM code_chunks c JOIN files f USING (file_id) LEFT JOIN symbols s ON s.symbol_id = c.symbol_id",
            symbol("s", "c.symbol_id")
        ),
        "SELECT 'skip', path, reason, ifnull(detail,''), size FROM skipped_files".to_string(),
        "SELECT 'common term', fts, term, doc FROM fts_common_terms".to_string(),
        "SELECT 'meta', key, value FROM meta WHERE key IN ('analysis_version', 'secret_rules')".to_string(),
    ];
    let mut rows = Vec::new();
    for q in &queries {
        rows.extend(query_rows(conn, q));
    }
    // Each full-text index: per row, named as its table's row is, the terms it holds with
    // their columns and offsets.
    let indexes = [
        (
            "symbols_fts",
            "SELECT s.key FROM symbols s WHERE s.symbol_id = v.doc",
        ),
        (
            "doc_chunks_fts",
            "SELECT f.path || ':' || c.line FROM doc_chunks c JOIN files f USING (file_id) WHERE c.chunk_id = v.doc",
        ),
        (
            "code_chunks_fts",
            "SELECT f.path || ':' || c.start_line FROM code_chunks c JOIN files f USING (file_id) WHERE c.chunk_id = v.doc",
        ),
        (
            "secondary_chunks_fts",
            "SELECT f.path || ':' || c.start_line FROM code_chunks c JOIN files f USING (file_id) WHERE c.chunk_id = v.doc",
        ),
        (
            "file_text_fts",
            "SELECT f.path FROM files f WHERE f.file_id = v.doc",
        ),
        (
            "secondary_file_text_fts",
            "SELECT f.path FROM files f WHERE f.file_id = v.doc",
        ),
    ];
    for (table, name) in indexes {
        let vocab = format!("vocab_{table}");
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab} USING fts5vocab(main, {table}, 'instance')"
        ))
        .unwrap_or_else(|e| panic!("vocabulary of {table}: {e}"));
        rows.extend(query_rows(
            conn,
            &format!(
                "SELECT 'indexed', '{table}', ifnull(({name}), '<no such row>'), group_concat(term || '@' || col || '.' || offset, ' ' ORDER BY col, offset, term)
                 FROM temp.{vocab} v GROUP BY v.doc"
            ),
        ));
    }
    rows.sort();
    rows
}

/// The rows of `sql`, each as its columns joined by ` | ` (reals to three places).
fn query_rows(conn: &Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let n = stmt.column_count();
    let mut it = stmt.query([]).expect("query");
    let mut rows = Vec::new();
    while let Some(r) = it.next().expect("row") {
        let cols: Vec<String> = (0..n)
            .map(|i| match r.get_ref(i).expect("column") {
                ValueRef::Null => "NULL".into(),
                ValueRef::Integer(v) => v.to_string(),
                ValueRef::Real(v) => format!("{v:.3}"),
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                ValueRef::Blob(_) => "<blob>".into(),
            })
            .collect();
        rows.push(cols.join(" | "));
    }
    rows
}

/// Panics with the rows only one side has, unless the two dumps are equal.
pub fn assert_same_map(what: &str, got: &[String], fresh: &[String]) {
    if got == fresh {
        return;
    }
    let only_got: Vec<_> = got.iter().filter(|r| !fresh.contains(r)).take(20).collect();
    let only_fresh: Vec<_> = fresh.iter().filter(|r| !got.contains(r)).take(20).collect();
    panic!(
        "{what}: the map differs from a fresh scan's ({} rows vs {})\nonly here: {only_got:#?}\nonly in the fresh scan: {only_fresh:#?}",
        got.len(),
        fresh.len()
    );
}

/// Copies up to `max_files` `.py` files of the Python standard library (sorted by path,
/// `site-packages` and tests excluded) under `dest`, keeping their relative paths.
/// Returns how many were copied. Panics if Python is missing: the tests need a real
/// corpus.
pub fn copy_stdlib(dest: &Path, max_files: usize) -> usize {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .expect("python3 (the corpus is the Python standard library)");
    let stdlib = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let mut files = Vec::new();
    let mut stack = vec![stdlib.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                if !matches!(
                    name.as_str(),
                    "site-packages"
                        | "dist-packages"
                        | "test"
                        | "tests"
                        | "__pycache__"
                        | "idlelib"
                ) {
                    stack.push(p);
                }
            } else if kind.is_file() && name.ends_with(".py") {
                files.push(p);
            }
        }
    }
    files.sort();
    files.truncate(max_files);
    for f in &files {
        let rel = f.strip_prefix(&stdlib).expect("under stdlib");
        let to = dest.join("lib").join(rel);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(f, &to).expect("copy");
    }
    files.len()
}
