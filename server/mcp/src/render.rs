//! Turning an [`Answer`] into a tool result. The text content is the answer as the CLI
//! prints it without `--json` (rendered once, by [`loci_engine::text`]): what a model
//! reads. The structured content is the envelope, as `loci --json` prints it, which each
//! tool's `outputSchema` declares. Both are capped so that one response stays far below the
//! ~64 KiB line limit some hosts have.
//!
//! Paging rules. A list result is paged by items (cursor `item:N`, N the index of the
//! first item): the page's structured `result` holds those items and its text their
//! lines. Any other answer whose text is longer than a page is paged over that text
//! (cursor `byte:N`, N a byte offset into it; pages end at a line end), so an agent reads
//! the answer, never its JSON. Its structured `result` is whole when it fits a page, else
//! a shortened preview (`page.result_preview` says so). Pages re-run the operation, so an
//! answer that changed between calls pages over the new answer. Sizes are counted as
//! serialized JSON (escapes included).

use loci_engine::Envelope;
use loci_engine::text;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

use crate::tools::{Answer, ArgumentError, Text, invalid_argument};

/// Default page size in bytes of serialized JSON: of the structured result, and of the
/// text.
pub const PAGE_BYTES: usize = 24 * 1024;

/// Where a page starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cursor {
    Start,
    Item(usize),
    Byte(usize),
}

fn parse_cursor(cursor: Option<&str>) -> Result<Cursor, ArgumentError> {
    let Some(c) = cursor.map(str::trim).filter(|c| !c.is_empty()) else {
        return Ok(Cursor::Start);
    };
    let bad = || {
        invalid_argument(
            "cursor",
            &format!(
                "`{c}` is not a cursor; pass the `next_cursor` of a previous answer (`item:N` or `byte:N`), or leave `cursor` out for the first page"
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

/// The tool result for `answer`, paged from `cursor` with pages of `page_bytes`. A
/// cursor this answer cannot take is an [`ArgumentError`].
pub fn tool_result(
    tool: &str,
    answer: Answer,
    cursor: Option<&str>,
    page_bytes: usize,
) -> Result<CallToolResult, ArgumentError> {
    let page_bytes = page_bytes.max(1024);
    let cursor = parse_cursor(cursor)?;
    let Answer {
        env,
        text,
        says_what_was_cut,
    } = answer;
    let mut v = serde_json::to_value(&env).unwrap_or(Value::Null);
    let result = v["result"].take();
    let body = match (result, text) {
        (Value::Array(items), Text::Items(texts)) if items.len() == texts.len() => {
            let page = page_items(tool, items, texts, cursor, page_bytes)?;
            v["result"] = Value::Array(page.items);
            if let Some(p) = page.page {
                v["page"] = p;
                v["limits"]["truncated"] = Value::Bool(true);
            }
            page.text + &footer(&env, says_what_was_cut, "")
        }
        (result, text) => {
            let text = match text {
                Text::Whole(t) => t,
                Text::Items(t) => t.concat(),
            };
            let whole = format!("{text}{}", footer(&env, says_what_was_cut, &text));
            let (text, page) = page_text(tool, &whole, cursor, page_bytes)?;
            let (result, preview) = fit_result(result, page_bytes);
            v["result"] = result;
            if page.is_some() || preview.is_some() {
                let mut p = page.unwrap_or_else(|| json!({}));
                if let Some(note) = preview {
                    p["result_preview"] = Value::String(note);
                }
                v["page"] = p;
                v["limits"]["truncated"] = Value::Bool(true);
            }
            text
        }
    };
    let mut r = CallToolResult::success(vec![ContentBlock::text(body)]);
    r.structured_content = Some(v);
    Ok(r)
}

/// One page of a list: its items, the text of those items (a header first when the list
/// is paged), and the `page` object when it is.
struct ItemPage {
    items: Vec<Value>,
    text: String,
    page: Option<Value>,
}

/// The page of `items` (with their `texts`) from `cursor`: as many items as fit
/// `page_bytes`, counting both their JSON and their text.
fn page_items(
    tool: &str,
    items: Vec<Value>,
    texts: Vec<String>,
    cursor: Cursor,
    page_bytes: usize,
) -> Result<ItemPage, ArgumentError> {
    let total = items.len();
    let start = match cursor {
        Cursor::Start => 0,
        Cursor::Item(n) if n <= total => n,
        Cursor::Item(n) => {
            return Err(invalid_argument(
                "cursor",
                &format!(
                    "item {n} is past the end of the answer ({total} items); leave `cursor` out for the first page"
                ),
            ));
        }
        Cursor::Byte(_) => {
            return Err(invalid_argument(
                "cursor",
                "this answer is a list: page it with the `item:N` cursor the answer gives",
            ));
        }
    };
    let mut page = Vec::new();
    let mut lines = String::new();
    let (mut json_used, mut text_used) = (2, 0);
    for (item, text) in items.into_iter().zip(texts).skip(start) {
        let size = json_len(&item) + 1;
        let text_size = escaped(&text);
        if json_used + size > page_bytes || text_used + text_size > page_bytes {
            if page.is_empty() {
                // One item larger than a page: show it shortened.
                page.push(shrink(item, page_bytes));
                lines.push_str(&cap_text(text, page_bytes / 2));
            }
            break;
        }
        json_used += size;
        text_used += text_size;
        page.push(item);
        lines.push_str(&text);
    }
    let end = start + page.len();
    if start == 0 && end == total {
        let text = if total == 0 {
            format!("{tool}: no results\n")
        } else {
            lines
        };
        return Ok(ItemPage {
            items: page,
            text,
            page: None,
        });
    }
    let next = (end < total).then(|| format!("item:{end}"));
    let mut header = format!("{tool}: items {}..{end} of {total}", start + 1);
    match &next {
        Some(next) => header.push_str(&format!("; more: call again with cursor \"{next}\"\n")),
        None => header.push_str("; last page\n"),
    }
    Ok(ItemPage {
        page: Some(json!({
            "cursor": format!("item:{start}"),
            "next_cursor": next,
            "offset": start,
            "returned": page.len(),
            "total": total,
        })),
        items: page,
        text: header + &lines,
    })
}

/// The page of `text` from `cursor`, and the `page` object when the text is longer than
/// one page: a header line, then bytes `offset..end` of the text.
fn page_text(
    tool: &str,
    text: &str,
    cursor: Cursor,
    page_bytes: usize,
) -> Result<(String, Option<Value>), ArgumentError> {
    let offset = match cursor {
        Cursor::Start => 0,
        Cursor::Byte(n) => n,
        Cursor::Item(_) => {
            return Err(invalid_argument(
                "cursor",
                "this answer is not a list: page it with the `byte:N` cursor the answer gives",
            ));
        }
    };
    if offset == 0 && escaped(text) <= page_bytes {
        return Ok((text.to_string(), None));
    }
    if offset > text.len() {
        return Err(invalid_argument(
            "cursor",
            &format!(
                "byte {offset} is past the end of the answer ({} bytes); leave `cursor` out for the first page",
                text.len()
            ),
        ));
    }
    let offset = ceil_char_boundary(text, offset);
    // The header is a short line; the window leaves room for it.
    let end = window_end(text, offset, page_bytes.saturating_sub(160));
    let next = (end < text.len()).then(|| format!("byte:{end}"));
    let mut header = format!(
        "{tool}: bytes {offset}..{end} of {} of the answer",
        text.len()
    );
    match &next {
        Some(next) => header.push_str(&format!("; more: call again with cursor \"{next}\"\n")),
        None => header.push_str("; last page\n"),
    }
    let page = json!({
        "cursor": format!("byte:{offset}"),
        "next_cursor": next,
        "offset": offset,
        "bytes": end - offset,
        "total_bytes": text.len(),
    });
    Ok((format!("{header}{}", &text[offset..end]), Some(page)))
}

/// `result` whole when its JSON fits `page_bytes`; else a `context` answer without its
/// items' text, when that fits; else a shortened preview, with a note saying so.
fn fit_result(result: Value, page_bytes: usize) -> (Value, Option<String>) {
    let size = json_len(&result);
    if size <= page_bytes {
        return (result, None);
    }
    if let Some(lean) = context_without_item_texts(&result)
        && json_len(&lean) <= page_bytes
    {
        return (lean, None);
    }
    (
        shrink(result, page_bytes / 2),
        Some(format!(
            "`result` is a shortened preview: its JSON is {size} bytes, over one page; the text content holds the answer, and `loci` with `--json` prints the whole result"
        )),
    )
}

/// What follows the body of an answer's text: its stale warnings and what it did not list
/// ([`text::footer`]), the files refreshed before answering, and the answer's notes (but
/// those `body` holds already, and the note that the workspace is no git repository).
fn footer(env: &Envelope<Value>, says_what_was_cut: bool, body: &str) -> String {
    let mut out = text::to_string(|o| text::footer(o, env, !says_what_was_cut));
    if !env.freshness.refreshed.is_empty() {
        out.push_str(&format!(
            "refreshed before answering: {}\n",
            env.freshness.refreshed.join(", ")
        ));
    }
    for n in &env.capability.notes {
        if !n.starts_with("not a git repository") && !body.contains(n.as_str()) {
            out.push_str(&format!("note: {n}\n"));
        }
    }
    out
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
    let note = "\n… (text cut here: the item is longer than a page)";
    let end = window_end(&text, 0, budget.saturating_sub(note.len() + 16));
    format!("{}{note}", &text[..end])
}

/// A shortened copy of `v` whose serialized size is at most `budget`, of the same JSON
/// type (an object stays an object, as the output schema declares): long strings and
/// long arrays are cut with a marker saying how much was left out.
fn shrink(v: Value, budget: usize) -> Value {
    for (chars, items) in [(4096, 256), (1024, 64), (256, 16), (64, 4), (16, 1)] {
        let c = cap_value(&v, chars, items);
        if json_len(&c) <= budget {
            return c;
        }
    }
    let note = "(too large to preview; the text content holds the answer)";
    match v {
        Value::Object(_) => json!({ "preview": note }),
        Value::Array(_) => json!([note]),
        _ => Value::String(note.into()),
    }
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

/// Serialized size of a string's contents inside a JSON string, escapes included.
fn escaped(s: &str) -> usize {
    s.chars().map(escaped_len).sum()
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
            assert!(escaped(part) <= 100);
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
            let e = parse_cursor(Some(bad)).err();
            assert_eq!(e.map(|e| e.argument), Some("cursor".to_string()), "{bad}");
        }
    }

    /// A text longer than a page is paged over the text, each page a header line and a
    /// window ending at a line end, the pages together the whole text.
    #[test]
    fn a_long_text_is_paged_over_the_text() {
        let text: String = (0..400)
            .map(|i| format!("line {i:03} of the answer\n"))
            .collect();
        let (first, page) = page_text("why", &text, Cursor::Start, 4096).expect("page");
        let page = page.expect("paged");
        let next = page["next_cursor"].as_str().expect("next").to_string();
        let end: usize = next["byte:".len()..].parse().expect("offset");
        assert_eq!(
            first.lines().next(),
            Some(format!("why: bytes 0..{end} of {} of the answer; more: call again with cursor \"{next}\"", text.len()).as_str())
        );
        assert!(text[..end].ends_with('\n'));
        let mut rebuilt = first.split_once('\n').expect("header").1.to_string();
        let mut cursor = Some(next);
        while let Some(c) = cursor {
            let (t, page) = page_text("why", &text, parse_cursor(Some(&c)).expect("cursor"), 4096)
                .expect("page");
            rebuilt.push_str(t.split_once('\n').expect("header").1);
            cursor = page.and_then(|p| p["next_cursor"].as_str().map(str::to_string));
        }
        assert_eq!(rebuilt, text);
    }

    #[test]
    fn shrink_fits_the_budget_and_keeps_the_type() {
        let big = json!({"body": "x".repeat(100_000), "list": vec![1; 10_000]});
        let small = shrink(big, 2000);
        assert!(json_len(&small) <= 2000);
        assert!(small.is_object());
        assert_eq!(
            shrink(json!({"a": "x".repeat(100)}), 10),
            json!({"preview": "(too large to preview; the text content holds the answer)"})
        );
    }
}
