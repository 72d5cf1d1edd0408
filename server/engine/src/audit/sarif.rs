//! SARIF 2.1.0 rendering of a `check` (OASIS SARIF v2.1.0, schema
//! `https://json.schemastore.org/sarif-2.1.0.json`), so code-scanning UIs show loci's
//! findings at real locations. Columns are one-based UTF-16 code units (SARIF's default
//! `columnKind`), converted from the byte columns loci stores.

use loci_core::position::{Encoding, row_column};
use serde_json::{Value, json};

use super::lint::CheckReport;
use crate::Workspace;

/// The rules loci reports, with SARIF levels.
const RULES: &[(&str, &str, &str)] = &[
    (
        "missing_path",
        "error",
        "A claim names a path that does not exist.",
    ),
    (
        "missing_symbol",
        "warning",
        "A claim names a symbol that does not exist.",
    ),
    (
        "version_mismatch",
        "warning",
        "A claim names a dependency version the manifests contradict.",
    ),
    (
        "stale_memory",
        "note",
        "Memory about code that changed since it was written.",
    ),
];

/// One-based UTF-16 column of a zero-based byte column on row `line` of `path` (rows end
/// only at `\n`, as tree-sitter counts them; falls back to the byte column when the file
/// cannot be read or has no such row).
fn utf16_column(ws: &Workspace, path: &str, line: u32, byte_column: u32) -> u64 {
    let text = ws.read_served(path).unwrap_or_default();
    row_column(&text, line as usize, byte_column as usize, Encoding::Utf16)
        .map_or(u64::from(byte_column), u64::from)
        + 1
}

/// Renders a check as a SARIF log.
pub fn to_sarif(ws: &Workspace, report: &CheckReport) -> Value {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|(id, level, text)| json!({"id": id, "shortDescription": {"text": text}, "defaultConfiguration": {"level": level}}))
        .collect();
    let mut results = Vec::new();
    for c in &report.lint.contradictions {
        let level = RULES
            .iter()
            .find(|r| r.0 == c.kind)
            .map(|r| r.1)
            .unwrap_or("warning");
        let mut message = format!("`{}`: {}", c.claim, c.truth.as_deref().unwrap_or(&c.kind));
        if let Some(s) = &c.suggestion {
            message.push_str(&format!(" (did you mean `{s}`?)"));
        }
        if c.origin == "page" {
            message = format!(
                "memory `{}`: {message} (run `loci resolve {}` to dismiss)",
                c.subject, c.contradiction_id
            );
        }
        let location = if c.origin == "doc" {
            json!({"physicalLocation": {
                "artifactLocation": {"uri": c.subject, "uriBaseId": "%SRCROOT%"},
                "region": {
                    "startLine": c.line + 1,
                    "startColumn": utf16_column(ws, &c.subject, c.line, c.column),
                    "endColumn": utf16_column(ws, &c.subject, c.line, c.end_column),
                }
            }})
        } else {
            page_location(ws, &c.subject)
        };
        results.push(json!({
            "ruleId": c.kind,
            "level": level,
            "message": {"text": message},
            "locations": [location],
            "partialFingerprints": {"lociFinding/v1": c.finding_key},
        }));
    }
    for s in &report.lint.stale {
        results.push(json!({
            "ruleId": "stale_memory",
            "level": "note",
            "message": {"text": s.describe()},
            "locations": [page_location(ws, &s.subject)],
            "partialFingerprints": {"lociFinding/v1": format!("stale:{}:{}", s.revision_id, s.claim_id.unwrap_or(0))},
        }));
    }
    let root_uri = format!("file://{}/", ws.root().display());
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "loci",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/loci-dev/loci",
                "rules": rules,
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root_uri}},
            "columnKind": "utf16CodeUnits",
            "results": results,
        }]
    })
}

/// A memory page's location: its file when the subject is a file (line 1), else a
/// logical location naming the page.
fn page_location(ws: &Workspace, subject: &str) -> Value {
    if ws.root().join(subject).is_file() {
        json!({
            "physicalLocation": {"artifactLocation": {"uri": subject, "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 1}},
            "logicalLocations": [{"name": subject, "kind": "module"}]
        })
    } else {
        json!({"logicalLocations": [{"name": subject, "kind": "module"}]})
    }
}
