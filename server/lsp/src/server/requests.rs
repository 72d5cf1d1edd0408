//! The requests on a document: hover (what the map and memory know of the symbol under
//! the cursor), document symbols, code lenses and their resolution, and code actions.

use super::*;

impl Inner {
    pub(super) async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let uri = params.text_document_position_params.text_document.uri;
        let position = params.text_document_position_params.position;
        self.set_cursor(&uri, position);
        let encoding = self.encoding();
        let Some(view) = self.view(&uri).await else {
            return Ok(None);
        };
        // A line past the end is no position at all: null, not a clamp.
        let Some(offset) = view.index.offset_checked(&view.text, position, encoding) else {
            return Ok(None);
        };
        // On a claim in a markdown document: the truth about it.
        if uri.path().as_str().ends_with(".md") || uri.path().as_str().ends_with(".markdown") {
            let claim = loci_core::claims::extract_claims(&view.text)
                .into_iter()
                .find(|c| c.start <= offset && offset < c.end);
            let Some(claim) = claim else {
                return Ok(None);
            };
            let root = self
                .docs
                .get(&uri)
                .and_then(|d| self.root_of(&d.location))
                .or_else(|| document::file_path(&uri).and_then(|p| self.root_containing(&p)));
            let span = (claim.start, claim.end);
            let truth = blocking("hover", move || {
                let root = root?;
                let ws = root.workspace()?;
                Some(
                    ws.explain_claim(&claim)
                        .unwrap_or_else(|e| format!("loci: {e}")),
                )
            })
            .await?;
            return Ok(truth.map(|value| Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value,
                }),
                range: Some(view.range(span, encoding)),
            }));
        }
        let (symbol, range) = match view.symbol_named_at(offset) {
            Some(i) => (
                HoverSymbol::Here(view.symbols[i].clone()),
                view.symbols[i].name_span,
            ),
            None => match view.ref_at(offset) {
                Some(r) => match view.symbols.iter().find(|s| s.name == r.name) {
                    Some(s) => (HoverSymbol::Here(s.clone()), r.span),
                    None => (HoverSymbol::Elsewhere(r.name.clone()), r.span),
                },
                None => return Ok(None),
            },
        };
        let root = self
            .docs
            .get(&uri)
            .and_then(|d| self.root_of(&d.location))
            .or_else(|| document::file_path(&uri).and_then(|p| self.root_containing(&p)));
        let scanning = root
            .as_ref()
            .is_some_and(|r| !r.scanned.load(Ordering::SeqCst) && r.scanning());
        let has_root = root.is_some();
        let overlay = self.view_overlay(&uri, &view);
        let facts = blocking("hover", move || map_facts(root.as_deref(), symbol, overlay)).await?;
        let Some(facts) = facts else {
            return Ok(None);
        };
        let markdown = hover_markdown(&view, &facts, has_root, scanning);
        Ok(Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: markdown,
            }),
            range: Some(view.range(range, encoding)),
        }))
    }

    pub(super) async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        let Some(view) = self.view(&uri).await else {
            return Ok(None);
        };
        if self.session().hierarchical_symbols {
            return Ok(Some(DocumentSymbolResponse::Nested(
                view.document_symbols(encoding),
            )));
        }
        #[allow(deprecated)]
        let flat = view
            .symbols
            .iter()
            .map(|s| SymbolInformation {
                name: s.name.clone(),
                kind: proto::symbol_kind(s.kind),
                tags: None,
                deprecated: None,
                location: tower_lsp_server::ls_types::Location {
                    uri: uri.clone(),
                    range: view.range(s.span, encoding),
                },
                container_name: s
                    .parent
                    .and_then(|p| view.symbols.get(p))
                    .map(|p| p.name.clone()),
            })
            .collect();
        Ok(Some(DocumentSymbolResponse::Flat(flat)))
    }

    pub(super) async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let uri = params.text_document.uri;
        let encoding = self.encoding();
        let Some(view) = self.view(&uri).await else {
            return Ok(None);
        };
        let location = self.location_of(&uri);
        let Some(root) = self.root_of(&location) else {
            return Ok(Some(Vec::new()));
        };
        let overlay = self.view_overlay(&uri, &view);
        let key_path = location.key_path.clone();
        let memory = blocking("code lens", move || {
            let ws = root.workspace();
            let live = overlay
                .as_ref()
                .map(|o| (&*o.text, o.analysis.symbols.as_slice()));
            findings::memory_for_document(ws.as_deref(), &key_path, live, false)
        })
        .await?;
        let lenses = view
            .symbols
            .iter()
            .filter_map(|s| {
                let m = memory.get(&s.key)?;
                let range = view.range(s.name_span, encoding);
                // Everything resolve needs travels in `data` (style.md rule 8).
                Some(CodeLens {
                    range,
                    command: None,
                    data: Some(json!({
                        "uri": uri.as_str(),
                        "key": s.key,
                        "target": format!("{}:{}", location.key_path, range.start.line + 1),
                        "memories": m.memories,
                        "stale": m.stale,
                        "false": m.false_claims,
                    })),
                })
            })
            .collect();
        Ok(Some(lenses))
    }

    pub(super) async fn code_lens_resolve(&self, mut lens: CodeLens) -> Result<CodeLens> {
        let data = lens.data.clone().unwrap_or(Value::Null);
        let Some(key) = data.get("key").and_then(Value::as_str).map(str::to_string) else {
            return Err(commands::invalid(
                "codeLens/resolve: missing argument `data.key` (the symbol key)".into(),
            ));
        };
        let uri = data.get("uri").and_then(Value::as_str).map(str::to_string);
        let counts = match (
            data.get("memories").and_then(Value::as_u64),
            data.get("stale").and_then(Value::as_u64),
        ) {
            (Some(memories), Some(stale)) => Some((
                memories,
                stale,
                data.get("false").and_then(Value::as_u64).unwrap_or(0),
            )),
            _ => {
                // No counts in `data` (another client built the lens): ask the map.
                let root = uri
                    .as_deref()
                    .and_then(|u| Uri::from_str(u).ok())
                    .and_then(|u| document::file_path(&u))
                    .and_then(|p| self.root_containing(&p));
                let k = key.clone();
                blocking("code lens", move || {
                    let ws = root.as_ref().and_then(|r| r.workspace());
                    let path = k.split('#').next().unwrap_or_default();
                    findings::memory_for_document(ws.as_deref(), path, None, false)
                        .get(&k)
                        .map(|m| {
                            (
                                u64::from(m.memories),
                                u64::from(m.stale),
                                u64::from(m.false_claims),
                            )
                        })
                })
                .await?
            }
        };
        let title = match counts {
            Some((memories, stale, false_claims)) => {
                let mut title = format!(
                    "{memories} {} · {stale} stale",
                    if memories == 1 { "memory" } else { "memories" }
                );
                if false_claims > 0 {
                    title.push_str(&format!(" · {false_claims} false"));
                }
                title
            }
            None => "no memory".into(),
        };
        let target = data
            .get("target")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| key.clone());
        let mut argument = json!({ "target": target });
        if let Some(uri) = uri {
            argument["uri"] = Value::String(uri);
        }
        lens.command = Some(Command {
            title,
            command: "loci.why".into(),
            arguments: Some(vec![argument]),
        });
        Ok(lens)
    }

    pub(super) async fn code_action(
        &self,
        params: CodeActionParams,
    ) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        self.set_cursor(&uri, params.range.start);
        let mut actions: CodeActionResponse = Vec::new();
        // Follow-ups of loci's own diagnostics: everything needed is in `data`.
        for diagnostic in &params.context.diagnostics {
            if diagnostic.source.as_deref() != Some("loci") {
                continue;
            }
            if let Some((title, new_text)) = proto::diagnostic_replacement(diagnostic) {
                let edit = TextEdit {
                    range: diagnostic.range,
                    new_text,
                };
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title,
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![diagnostic.clone()]),
                    edit: Some(WorkspaceEdit {
                        changes: Some([(uri.clone(), vec![edit])].into_iter().collect()),
                        ..WorkspaceEdit::default()
                    }),
                    is_preferred: Some(true),
                    ..CodeAction::default()
                }));
            }
            for (title, command, arguments) in proto::diagnostic_actions(diagnostic) {
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: title.clone(),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![diagnostic.clone()]),
                    command: Some(Command {
                        title,
                        command,
                        arguments: Some(vec![arguments]),
                    }),
                    ..CodeAction::default()
                }));
            }
        }
        // On a symbol's name: its impact.
        if let Some(view) = self.view(&uri).await
            && let Some(offset) =
                view.index
                    .offset_checked(&view.text, params.range.start, self.encoding())
            && let Some(i) = view.symbol_named_at(offset)
        {
            let s = &view.symbols[i];
            let title = format!("loci: impact of `{}`", s.qualified_name);
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: title.clone(),
                kind: Some(CodeActionKind::new("source.loci")),
                command: Some(Command {
                    title,
                    command: "loci.impact".into(),
                    arguments: Some(vec![json!({ "target": s.key, "uri": uri.as_str() })]),
                }),
                ..CodeAction::default()
            }));
        }
        Ok(Some(actions))
    }
}

/// What a hover is about.
pub(super) enum HoverSymbol {
    /// A symbol of this document.
    Here(ViewSymbol),
    /// A name used here and defined elsewhere (looked up in the map).
    Elsewhere(String),
}

/// A hover's facts, gathered on a blocking thread.
pub(super) struct HoverFacts {
    symbol: ViewSymbol,
    /// The file, when the symbol is in another file.
    path: Option<String>,
    /// Call sites in the map; `None` when the map does not have the symbol.
    callers: Option<usize>,
    memory: Option<findings::SymbolMemory>,
}

/// The facts of a hover on `symbol`; `overlay` is the document's when the view is built
/// from it (memory about its own symbols is judged against it).
pub(super) fn map_facts(
    root: Option<&Root>,
    symbol: HoverSymbol,
    overlay: Option<Arc<Overlay>>,
) -> Option<HoverFacts> {
    let ws = root.and_then(|r| r.workspace());
    let (symbol, path, overlay) = match symbol {
        HoverSymbol::Here(s) => (s, None, overlay),
        HoverSymbol::Elsewhere(name) => {
            let hit = ws
                .as_ref()?
                .symbol(&name, 1)
                .ok()?
                .result
                .into_iter()
                .next()?;
            (
                ViewSymbol {
                    key: hit.key,
                    name: hit.name,
                    qualified_name: hit.qualified_name,
                    kind: loci_core::SymbolKind::parse(&hit.kind),
                    span: (0, 0),
                    name_span: (0, 0),
                    signature: hit.signature,
                    doc: hit.doc,
                    parent: None,
                },
                Some(hit.path),
                None,
            )
        }
    };
    let callers = ws.as_ref().and_then(|ws| {
        // One call listed; the rest counted.
        let env = ws.callers(&symbol.key, 1).ok()?;
        (!env.result.targets.is_empty()).then_some((env.limits.used + env.limits.omitted) as usize)
    });
    let key_path = symbol.key.split('#').next().unwrap_or_default();
    let live = overlay
        .as_ref()
        .map(|o| (&*o.text, o.analysis.symbols.as_slice()));
    let memory =
        findings::memory_for_document(ws.as_deref(), key_path, live, true).remove(&symbol.key);
    Some(HoverFacts {
        symbol,
        path,
        callers,
        memory,
    })
}

pub(super) fn hover_markdown(
    view: &View,
    facts: &HoverFacts,
    has_root: bool,
    scanning: bool,
) -> String {
    let s = &facts.symbol;
    let mut md = format!("**{}** `{}`", s.kind.as_str(), s.qualified_name);
    if let Some(path) = &facts.path {
        md.push_str(&format!(" in `{path}`"));
    }
    if !s.signature.is_empty() {
        let fence = if s.signature.contains("```") {
            "````"
        } else {
            "```"
        };
        md.push_str(&format!(
            "\n\n{fence}{}\n{}\n{fence}",
            view.language.unwrap_or(""),
            s.signature
        ));
    }
    if let Some(doc) = s.doc.as_deref().filter(|d| !d.trim().is_empty()) {
        md.push_str(&format!("\n\n{doc}"));
    }
    md.push_str("\n\n---\n\n");
    let callers = match (has_root, facts.callers) {
        (false, _) => "callers unknown (single-file mode: no map)".to_string(),
        (true, Some(1)) => "1 caller".to_string(),
        (true, Some(n)) => format!("{n} callers"),
        (true, None) if scanning => "callers unknown yet (initial scan running)".to_string(),
        (true, None) => "not in the map yet (unsaved or not scanned)".to_string(),
    };
    md.push_str(&format!("{callers} · `{}`", s.key));
    if view.source == Source::Map && facts.path.is_none() {
        md.push_str("\n\n_from the map (the file as last scanned)_");
    }
    if let Some(reason) = &view.degraded {
        md.push_str(&format!("\n\n_analysis incomplete: {reason}_"));
    }
    if scanning && facts.callers.is_some() {
        md.push_str("\n\n_initial scan running: counts may grow_");
    }
    if let Some(memory) = &facts.memory {
        for line in &memory.hover_lines {
            md.push_str(&format!("\n\n{line}"));
        }
    }
    md
}
