//! Turning an envelope into a tool result: structured content (the envelope JSON) plus a
//! text rendering, both capped so one response stays far below the ~64 KiB line limit
//! some hosts have (case B23), with an explicit `page` object and `next_cursor` to page.
//!
//! Paging rules. A result that is a list is paged by items (cursor `item:N`, N the index
//! of the first item); any other result too large for one page is paged as a window over
//! its pretty-printed JSON (cursor `byte:N`, N a byte offset): the text content carries
//! the window and the structured `result` a shortened preview. Pages re-run the
//! operation, so an answer that changed between calls pages over the new answer.
//! Sizes are counted as serialized JSON (escapes included).

use loci_engine::Envelope;
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

use crate::tools::invalid_argument;

/// Default page size in bytes of serialized JSON (structured result; also the text cap).
pub const PAGE_BYTES: usize = 24 * 1024;

/// Where a page starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cursor {
    Start,
    Item(usize),
    Byte(usize),
}

fn parse_cursor(cursor: Option<&str>) -> Result<Cursor, ErrorData> {
    let Some(c) = cursor.map(str::trim).filter(|c| !c.is_empty()) else {
        return Ok(Cursor::Start);
    };
    let bad = || {
        invalid_argument(
            "cursor",
            &format!(
                "`{c}` is not a cursor; pass the `next_cursor` of a previous answer (`item:N` or `byte:N`)"
            ),
        )
    };
    let (kind, n) = c.split_once(':').ok_or_else(bad)?;
    let n: usize = n.parse().map_err(|_| bad())?;
    match kind {
        "item" => Ok(Cursor::Item(n)),
        "byte" => Ok(Cursor::Byte(n)),
        _ => Err(bad()),
    }
}

/// The tool result for `env`, paged from `cursor` with pages of `page_bytes`.
pub fn tool_result(
    tool: &str,
    env: Envelope<Value>,
    cursor: Option<&str>,
    page_bytes: usize,
) -> Result<CallToolResult, ErrorData> {
    let page_bytes = page_bytes.max(1024);
    let cursor = parse_cursor(cursor)?;
    let mut v = serde_json::to_value(&env).map_err(|e| {
        ErrorData::internal_error(format!("serializing the answer of `{tool}`: {e}"), None)
    })?;
    let result = v["result"].take();
    let mut window: Option<String> = None;
    let mut truncated = false;
    match result {
        Value::Array(items) => {
            let total = items.len();
            let start = match cursor {
                Cursor::Start => 0,
                Cursor::Item(n) if n <= total => n,
                Cursor::Item(n) => {
                    return Err(invalid_argument(
                        "cursor",
                        &format!("item {n} is past the end of the answer ({total} items)"),
                    ));
                }
                Cursor::Byte(_) => {
                    return Err(invalid_argument(
                        "cursor",
                        "this answer is a list: page it with `item:N` cursors",
                    ));
                }
            };
            let mut page = Vec::new();
            let mut used = 2;
            for item in items.into_iter().skip(start) {
                let size = json_len(&item) + 1;
                if used + size > page_bytes {
                    if page.is_empty() {
                        // One item larger than a page: show it shortened.
                        page.push(shrink(item, page_bytes));
                        truncated = true;
                    }
                    break;
                }
                used += size;
                page.push(item);
            }
            let end = start + page.len();
            if start > 0 || end < total {
                truncated |= end < total;
                v["page"] = json!({
                    "cursor": format!("item:{start}"),
                    "next_cursor": (end < total).then(|| format!("item:{end}")),
                    "offset": start,
                    "returned": page.len(),
                    "total": total,
                });
            }
            v["result"] = Value::Array(page);
        }
        other => {
            let offset = match cursor {
                Cursor::Start => 0,
                Cursor::Byte(n) => n,
                Cursor::Item(_) => {
                    return Err(invalid_argument(
                        "cursor",
                        "this answer is not a list: page it with `byte:N` cursors",
                    ));
                }
            };
            let other = match (offset, context_without_item_texts(&other)) {
                (0, Some(lean))
                    if json_len(&other) > page_bytes && json_len(&lean) <= page_bytes =>
                {
                    lean
                }
                _ => other,
            };
            if offset == 0 && json_len(&other) <= page_bytes {
                v["result"] = other;
            } else {
                let full = serde_json::to_string_pretty(&other).unwrap_or_default();
                if offset > full.len() {
                    return Err(invalid_argument(
                        "cursor",
                        &format!(
                            "byte {offset} is past the end of the answer ({} bytes)",
                            full.len()
                        ),
                    ));
                }
                let offset = ceil_char_boundary(&full, offset);
                let end = window_end(&full, offset, page_bytes);
                truncated = true;
                v["page"] = json!({
                    "cursor": format!("byte:{offset}"),
                    "next_cursor": (end < full.len()).then(|| format!("byte:{end}")),
                    "offset": offset,
                    "bytes": end - offset,
                    "total_bytes": full.len(),
                    "note": "the result is too large for one page: `result` is a shortened \
                             preview and the text content holds bytes offset..offset+bytes of \
                             the full result as pretty-printed JSON",
                });
                v["result"] = shrink(other, page_bytes / 2);
                window = Some(full[offset..end].to_string());
            }
        }
    }
    if truncated {
        v["limits"]["truncated"] = Value::Bool(true);
    }
    let text = match window {
        // The window was sized to the page already; the header is a short first line.
        Some(w) => format!("{}{w}", page_header(tool, &v)),
        None => cap_text(render_text(tool, &v), page_bytes),
    };
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(v);
    Ok(r)
}

/// A `context` answer (`markdown` and `items`) without each item's `text`, which the
/// markdown holds already, tier by tier. An answer packed to the default budget of 2,000
/// tokens is about 30 KB as JSON, mostly that text twice and 50 items' scores and signals;
/// paged, the agent read pretty-printed JSON over two calls instead of the answer. `None`
/// for any other result.
fn context_without_item_texts(result: &Value) -> Option<Value> {
    let o = result.as_object()?;
    if !o.get("markdown").is_some_and(Value::is_string) {
        return None;
    }
    let items = o.get("items")?.as_array()?;
    let mut lean = o.clone();
    lean.insert(
        "items".into(),
        Value::Array(
            items
                .iter()
                .map(|i| {
                    let mut i = i.clone();
                    if let Some(m) = i.as_object_mut() {
                        m.remove("text");
                    }
                    i
                })
                .collect(),
        ),
    );
    lean.insert(
        "items_text".into(),
        Value::String(
            "left out of the items to fit one page: `markdown` holds each item's text".into(),
        ),
    );
    Some(Value::Object(lean))
}

/// Serialized size of a value, escapes included.
fn json_len(v: &Value) -> usize {
    serde_json::to_string(v).map_or(0, |s| s.len())
}

/// Serialized size of one char inside a JSON string.
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{08}' | '\u{0c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i.min(s.len())
}

/// The end of a window starting at `start` whose escaped size is at most `budget`,
/// preferring to end after a newline in the window's second half.
fn window_end(s: &str, start: usize, budget: usize) -> usize {
    let mut used = 0;
    let mut end = start;
    let mut last_newline = None;
    for (i, c) in s[start..].char_indices() {
        let n = escaped_len(c);
        if used + n > budget {
            break;
        }
        used += n;
        end = start + i + c.len_utf8();
        if c == '\n' {
            last_newline = Some((end, used));
        }
    }
    match last_newline {
        Some((nl, at)) if end < s.len() && at * 2 >= budget => nl,
        _ => end,
    }
}

/// Cuts `text` so its escaped size is at most `budget`, saying so.
fn cap_text(text: String, budget: usize) -> String {
    let total: usize = text.chars().map(escaped_len).sum();
    if total <= budget {
        return text;
    }
    let note = "\n… (text cut here; the structured content has the whole page)";
    let end = window_end(&text, 0, budget.saturating_sub(note.len() + 16));
    format!("{}{note}", &text[..end])
}

/// A shortened copy of `v` whose serialized size is at most `budget`: long strings and
/// long arrays are cut with a marker saying how much was left out.
fn shrink(v: Value, budget: usize) -> Value {
    for (chars, items) in [(4096, 256), (1024, 64), (256, 16), (64, 4), (16, 1)] {
        let c = cap_value(&v, chars, items);
        if json_len(&c) <= budget {
            return c;
        }
    }
    Value::String("(too large to preview; page through the text content)".into())
}

fn cap_value(v: &Value, chars: usize, items: usize) -> Value {
    match v {
        Value::String(s) if s.chars().count() > chars => {
            let head: String = s.chars().take(chars).collect();
            Value::String(format!(
                "{head}… ({} more bytes)",
                s.len().saturating_sub(head.len())
            ))
        }
        Value::Array(a) => {
            let mut out: Vec<Value> = a
                .iter()
                .take(items)
                .map(|x| cap_value(x, chars, items))
                .collect();
            if a.len() > items {
                out.push(Value::String(format!("… ({} more items)", a.len() - items)));
            }
            Value::Array(out)
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), cap_value(x, chars, items)))
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

fn page_header(tool: &str, v: &Value) -> String {
    let p = &v["page"];
    let mut out = format!("{tool}: ");
    if let Some(total) = p["total_bytes"].as_u64() {
        out.push_str(&format!(
            "bytes {}..{} of {total} (pretty-printed JSON of the result)",
            p["offset"].as_u64().unwrap_or(0),
            p["offset"].as_u64().unwrap_or(0) + p["bytes"].as_u64().unwrap_or(0),
        ));
    }
    match p["next_cursor"].as_str() {
        Some(next) => out.push_str(&format!("; more: call again with cursor \"{next}\"\n")),
        None => out.push_str("; last page\n"),
    }
    out
}

/// The text rendering: one line per hit for symbol and reference lists, an indented
/// outline otherwise; one-based `path:line`; then paging, warnings and notes.
fn render_text(tool: &str, v: &Value) -> String {
    let mut out = String::new();
    match &v["result"] {
        Value::Array(items) => {
            let p = &v["page"];
            if p.is_object() {
                let offset = p["offset"].as_u64().unwrap_or(0);
                out.push_str(&format!(
                    "{tool}: items {}..{} of {}",
                    offset + 1,
                    offset + items.len() as u64,
                    p["total"].as_u64().unwrap_or(0)
                ));
                match p["next_cursor"].as_str() {
                    Some(next) => {
                        out.push_str(&format!("; more: call again with cursor \"{next}\"\n"))
                    }
                    None => out.push_str("; last page\n"),
                }
            } else if items.is_empty() {
                out.push_str(&format!("{tool}: no results\n"));
            } else {
                out.push_str(&format!(
                    "{tool}: {} result{}\n",
                    items.len(),
                    if items.len() == 1 { "" } else { "s" }
                ));
            }
            for item in items {
                match one_line(item) {
                    Some(line) => {
                        out.push_str(&line);
                        out.push('\n');
                    }
                    None => {
                        out.push_str("-\n");
                        outline(&mut out, item, 2);
                    }
                }
            }
        }
        other => match headline(other) {
            Some(h) => out.push_str(&format!("{tool}: {h}")),
            None => {
                out.push_str(&format!("{tool}:\n"));
                outline(&mut out, other, 2);
            }
        },
    }
    if let Some(ws) = v["stale_warnings"].as_array() {
        for w in ws {
            out.push_str(&format!(
                "warning: {}: {}\n",
                w["path"].as_str().unwrap_or(""),
                w["reason"].as_str().unwrap_or("")
            ));
        }
    }
    if let Some(r) = v["freshness"]["refreshed"].as_array()
        && !r.is_empty()
    {
        let paths: Vec<&str> = r.iter().filter_map(Value::as_str).collect();
        out.push_str(&format!(
            "refreshed before answering: {}\n",
            paths.join(", ")
        ));
    }
    if let Some(notes) = v["capability"]["notes"].as_array() {
        for n in notes.iter().filter_map(Value::as_str) {
            if !n.starts_with("not a git repository") {
                out.push_str(&format!("note: {n}\n"));
            }
        }
    }
    // A context answer's own closing line says what its budget left out or cut down.
    let says_itself = v["result"]["tokens_estimated"].is_u64();
    if v["limits"]["truncated"].as_bool() == Some(true) && !v["page"].is_object() && !says_itself {
        out.push_str("(truncated: more results exist than were returned)\n");
    }
    out
}

/// A short rendering of results whose full outline would mostly repeat what the caller
/// sent: a memory write and a session start.
fn headline(result: &Value) -> Option<String> {
    let o = result.as_object()?;
    // `context` renders itself (tiers, provenance, staleness) for the reader.
    if let Some(md) = o.get("markdown").and_then(Value::as_str)
        && o.contains_key("items")
    {
        return Some(format!("\n{md}\n"));
    }
    if let (Some(page), Some(rev)) = (o.get("page"), o.get("revision"))
        && o.contains_key("event_id")
    {
        let mut out = format!(
            "wrote `{}` version {} ({})",
            page["subject"].as_str()?,
            rev["version"].as_i64()?,
            rev["author"].as_str().unwrap_or("")
        );
        if o.get("replayed").and_then(Value::as_bool) == Some(true) {
            out.push_str(" — replayed from an earlier identical request, nothing written");
        }
        out.push('\n');
        for c in o
            .get("claims")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let definitions: Vec<&str> = c["definitions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let finding = c.get("finding").and_then(|f| {
                serde_json::from_value::<loci_engine::memory::ClaimFinding>(f.clone()).ok()
            });
            let status = match c["resolved"].as_str() {
                _ if let Some(f) = &finding => f.describe(),
                Some(r) if c["resolved_elsewhere"].as_bool() == Some(true) => format!(
                    "not in this map, though it resolved to {r} where it was exported from: lint reports it"
                ),
                Some(r) => r.to_string(),
                None if !definitions.is_empty() => format!(
                    "{} definitions, tracked as a set: {}",
                    definitions.len(),
                    definitions.join(", ")
                ),
                None if c["resolved_elsewhere"].as_bool() == Some(true) => {
                    "not in this map, though it resolved where it was exported from: lint reports it"
                        .into()
                }
                None => loci_engine::memory::untracked_reason(c["kind"].as_str().unwrap_or(""))
                    .to_string(),
            };
            out.push_str(&format!(
                "  claim `{}` ({}) → {status}\n",
                c["text"].as_str().unwrap_or(""),
                c["kind"].as_str().unwrap_or(""),
            ));
        }
        return Some(out);
    }
    if o.contains_key("session_id") && o.contains_key("started_at") {
        return Some(format!(
            "session {} ({}){}\n",
            o["session_id"].as_i64()?,
            o["author"].as_str().unwrap_or(""),
            o.get("task")
                .and_then(Value::as_str)
                .map(|t| format!(": {t}"))
                .unwrap_or_default()
        ));
    }
    None
}

/// `path:line:col kind name  signature` for symbols, `path:line:col kind name [provenance]`
/// for references (one-based lines and columns).
fn one_line(item: &Value) -> Option<String> {
    let o = item.as_object()?;
    let at = |o: &Map<String, Value>| {
        format!(
            "{}:{}:{}",
            o.get("path")?.as_str()?,
            o.get("line")?.as_u64()? + 1,
            o.get("column").and_then(Value::as_u64).unwrap_or(0) + 1
        )
        .into()
    };
    if o.contains_key("qualified_name") && o.contains_key("signature") {
        let at: Option<String> = at(o);
        return Some(format!(
            "{} {} {}  {}",
            at?,
            o.get("kind")?.as_str()?,
            o.get("qualified_name")?.as_str()?,
            o.get("signature")?.as_str()?.trim()
        ));
    }
    if o.contains_key("provenance") && o.contains_key("enclosing_key") {
        let at: Option<String> = at(o);
        return Some(format!(
            "{} {} {} [{} {:.2}]{}",
            at?,
            o.get("kind")?.as_str()?,
            o.get("name")?.as_str()?,
            o.get("provenance")?.as_str()?,
            o.get("confidence")?.as_f64()?,
            o.get("enclosing_key")
                .and_then(Value::as_str)
                .map(|k| format!(" in {k}"))
                .unwrap_or_default()
        ));
    }
    None
}

/// An indented `key: value` outline of a JSON value; nulls, empty lists and fingerprints
/// (noise for a reader) are left out; multi-line strings become indented blocks.
fn outline(out: &mut String, v: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if x.is_null()
                    || k.contains("fingerprint")
                    || k.ends_with("snapshot")
                    || matches!(x, Value::Array(a) if a.is_empty())
                    || matches!(x, Value::Object(o) if o.is_empty())
                {
                    continue;
                }
                match x {
                    Value::String(s) if s.contains('\n') => {
                        out.push_str(&format!("{pad}{k}: |\n"));
                        for line in s.lines() {
                            out.push_str(&format!("{pad}  {line}\n"));
                        }
                    }
                    Value::Object(_) | Value::Array(_) => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        outline(out, x, indent + 2);
                    }
                    scalar => out.push_str(&format!("{pad}{k}: {}\n", scalar_text(scalar))),
                }
            }
        }
        Value::Array(a) => {
            for x in a {
                match one_line(x) {
                    Some(line) => out.push_str(&format!("{pad}- {line}\n")),
                    None if x.is_object() || x.is_array() => {
                        out.push_str(&format!("{pad}-\n"));
                        outline(out, x, indent + 2);
                    }
                    None => out.push_str(&format!("{pad}- {}\n", scalar_text(x))),
                }
            }
        }
        scalar => out.push_str(&format!("{pad}{}\n", scalar_text(scalar))),
    }
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_never_split_a_char_and_respect_the_budget() {
        let s = "é\"\n".repeat(1000);
        let mut start = 0;
        let mut rebuilt = String::new();
        while start < s.len() {
            let end = window_end(&s, start, 100);
            assert!(end > start);
            let part = &s[start..end];
            assert!(part.chars().map(escaped_len).sum::<usize>() <= 100);
            rebuilt.push_str(part);
            start = end;
        }
        assert_eq!(rebuilt, s);
    }

    #[test]
    fn cursors_parse_and_reject_garbage() {
        assert_eq!(parse_cursor(None).ok(), Some(Cursor::Start));
        assert_eq!(parse_cursor(Some("item:3")).ok(), Some(Cursor::Item(3)));
        assert_eq!(parse_cursor(Some("byte:10")).ok(), Some(Cursor::Byte(10)));
        for bad in ["3", "item:", "item:-1", "page:2"] {
            let e = parse_cursor(Some(bad)).err().map(|e| e.message.to_string());
            assert!(e.is_some_and(|m| m.contains("`cursor`")), "{bad}");
        }
    }

    /// The headline of a memory write says what each claim is checked against: its one
    /// target, the set of definitions it is tracked as, that it is not tracked, or what
    /// lint reports about it.
    #[test]
    fn a_write_headline_names_a_claim_tracked_as_a_set() {
        let written = json!({
            "page": {"subject": "src/lib.rs"},
            "revision": {"version": 1, "author": "human:a"},
            "event_id": 1,
            "claims": [
                {"kind": "symbol", "text": "RegexBuilder::new",
                 "definitions": ["src/lib.rs#bytes.RegexBuilder.new@method",
                                 "src/lib.rs#string.RegexBuilder.new@method"]},
                {"kind": "symbol", "text": "build()", "resolved": "src/lib.rs#build@function"},
                {"kind": "symbol", "text": "print()"},
                {"kind": "path", "text": "src/lbi.rs", "finding": {"kind": "missing_path",
                 "severity": "high", "truth": "`src/lbi.rs` does not exist",
                 "suggestion": "src/lib.rs"}}
            ]
        });
        assert_eq!(
            headline(&written).as_deref(),
            Some(
                "wrote `src/lib.rs` version 1 (human:a)\n\
                 \x20 claim `RegexBuilder::new` (symbol) → 2 definitions, tracked as a set: src/lib.rs#bytes.RegexBuilder.new@method, src/lib.rs#string.RegexBuilder.new@method\n\
                 \x20 claim `build()` (symbol) → src/lib.rs#build@function\n\
                 \x20 claim `print()` (symbol) → no definition in the map, or more than the 8 a set tracks: not tracked\n\
                 \x20 claim `src/lbi.rs` (path) → missing_path [high]: `src/lbi.rs` does not exist (did you mean `src/lib.rs`?); `loci lint` reports it\n"
            )
        );
    }

    #[test]
    fn shrink_fits_the_budget() {
        let big = json!({"body": "x".repeat(100_000), "list": vec![1; 10_000]});
        assert!(json_len(&shrink(big, 2000)) <= 2000);
    }
}
