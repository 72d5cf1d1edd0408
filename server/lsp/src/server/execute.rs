//! `workspace/executeCommand`: loci's commands (scan, sync, impact, synthesize, the
//! debug views), the cursor they default to, and how their results are shown (a
//! message, or a markdown answer written to a file the editor opens).

use loci_engine::requests::{
    ConfirmArgs, ContextArgs, DecideArgs, ImpactArgs, LearnArgs, RecapArgs, RememberArgs,
    ResolveArgs, SyncArgs, SynthesizeArgs, WhyArgs,
};
use loci_engine::text::markdown;

use super::*;

impl Inner {
    /// Runs a command; a command run without the keys that say where takes them from the
    /// cursor ([`commands::Cursor`]). When the server shows results (`showResults`), the
    /// answer or the error is shown too ([`Inner::show_result`]).
    pub(super) async fn execute_command(
        self: &Arc<Self>,
        params: ExecuteCommandParams,
    ) -> Result<Option<Value>> {
        let debug = self.session().init.debug_commands;
        let cursor = if commands::wants_cursor(&params.command, &params.arguments) {
            self.cursor().await
        } else {
            None
        };
        let result =
            match commands::parse(&params.command, &params.arguments, debug, cursor.as_ref()) {
                Ok(args) => self.run_command(&args).await,
                Err(e) => Err(e),
            };
        if self.shows_results() {
            let inner = self.clone();
            let command = params.command.clone();
            let shown = result.clone();
            // After the response: the client answers `window/showDocument` meanwhile.
            tokio::spawn(async move { inner.show_result(&command, shown).await });
        }
        result
    }

    /// Whether the server shows command answers itself: `showResults`, else whether the
    /// client supports `window/showDocument`.
    pub(super) fn shows_results(&self) -> bool {
        let session = self.session();
        session.init.show_results.unwrap_or(session.show_document)
    }

    /// Shows a command's outcome in the editor: an error as an error
    /// message; a reading command's markdown as a document (`window/showDocument` of a
    /// file under the temporary directory) when the client can open one, else as a
    /// message; a write's first line as a message.
    pub(super) async fn show_result(&self, command: &str, result: Result<Option<Value>>) {
        let value = match result {
            Err(e) => {
                self.client
                    .show_message(MessageType::ERROR, e.message.to_string())
                    .await;
                return;
            }
            Ok(Some(v)) => v,
            Ok(None) => return,
        };
        let Some(markdown) = value.get("markdown").and_then(Value::as_str) else {
            return;
        };
        let reading = matches!(
            command,
            "loci.why" | "loci.impact" | "loci.context" | "loci.recap" | "loci.scan"
        );
        if !reading {
            let first = markdown
                .lines()
                .next()
                .unwrap_or_default()
                .replace("**", "");
            self.client.show_message(MessageType::INFO, first).await;
            return;
        }
        if self.session().show_document {
            let n = self.shown.fetch_add(1, Ordering::SeqCst) + 1;
            let name = format!("{n:03}-{}.md", command.trim_start_matches("loci."));
            match write_answer(&name, markdown) {
                Ok(uri) => {
                    let params = ShowDocumentParams {
                        uri,
                        external: Some(false),
                        take_focus: Some(true),
                        selection: None,
                    };
                    match self.client.show_document(params).await {
                        Ok(true) => return,
                        Ok(false) => tracing::warn!("the client did not show {name}"),
                        Err(e) => tracing::warn!("window/showDocument of {name}: {e}"),
                    }
                }
                Err(e) => tracing::warn!("writing the answer {name}: {e}"),
            }
        }
        self.client
            .show_message(MessageType::INFO, markdown.to_string())
            .await;
    }

    /// Remembers where the editor's cursor is.
    pub(super) fn set_cursor(&self, uri: &Uri, position: Position) {
        if let Ok(mut c) = self.cursor.lock() {
            *c = Some((uri.clone(), position));
        }
    }

    /// The cursor as last seen, in a workspace root: its file, line and the innermost
    /// definition around it. `None` before any, or outside every root.
    pub(super) async fn cursor(&self) -> Option<commands::Cursor> {
        let (uri, position) = self.cursor.lock().ok()?.clone()?;
        let location = self.location_of(&uri);
        location.root.as_ref()?;
        let encoding = self.encoding();
        let symbol = self.view(&uri).await.and_then(|view| {
            let offset = view.index.offset_checked(&view.text, position, encoding)?;
            view.symbols
                .iter()
                .filter(|s| s.span.0 <= offset && offset <= s.span.1)
                .min_by_key(|s| s.span.1 - s.span.0)
                .map(|s| s.key.clone())
        });
        Some(commands::Cursor {
            uri: uri.as_str().to_string(),
            path: location.key_path,
            line: position.line + 1,
            symbol,
        })
    }

    pub(super) async fn run_command(self: &Arc<Self>, args: &Args) -> Result<Option<Value>> {
        let debug = self.session().init.debug_commands;
        if !args.spec.available {
            return Err(commands::not_available(args.spec));
        }
        match args.spec.name {
            "loci.debug.text" => self.debug_text(args).map(Some),
            "loci.debug.panic" => panic!("loci.debug.panic was called"),
            "loci.impact" => self.impact(args).await.map(Some),
            "loci.scan" => self.scan_command(args).await.map(Some),
            "loci.synthesize" => self.synthesize_command(args).await.map(Some),
            "loci.sync" => self.sync_command(args).await.map(Some),
            "loci.why" => {
                let req: WhyArgs = args.request()?;
                self.engine_command(args, false, move |ws| req.run(ws), markdown::why)
                    .await
                    .map(Some)
            }
            "loci.recap" => {
                let mut req: RecapArgs = args.request()?;
                req.n = req.n.min(1_000);
                self.engine_command(args, false, move |ws| req.run(ws), markdown::recap)
                    .await
                    .map(Some)
            }
            "loci.remember" => {
                let req: RememberArgs = args.request()?;
                // A note is added to the page; replacing it is explicit.
                let replace = args.bool("replace").unwrap_or(false);
                self.engine_command(
                    args,
                    true,
                    move |ws| {
                        if replace {
                            req.run(ws, None)
                        } else {
                            req.run_append(ws, None)
                        }
                    },
                    markdown::written,
                )
                .await
                .map(Some)
            }
            "loci.decide" => {
                let req: DecideArgs = args.request()?;
                self.engine_command(args, true, move |ws| req.run(ws, None), markdown::written)
                    .await
                    .map(Some)
            }
            "loci.learn" => {
                let req: LearnArgs = args.request()?;
                self.engine_command(args, true, move |ws| req.run(ws, None), markdown::written)
                    .await
                    .map(Some)
            }
            "loci.confirm" => {
                let req: ConfirmArgs = args.request()?;
                self.engine_command(args, true, move |ws| req.run(ws, None), markdown::confirmed)
                    .await
                    .map(Some)
            }
            "loci.context" => {
                let req: ContextArgs = args.request()?;
                self.engine_command(args, false, move |ws| req.run(ws), markdown::context)
                    .await
                    .map(Some)
            }
            "loci.resolve" => {
                let req: ResolveArgs = args.request()?;
                self.engine_command(args, true, move |ws| req.run(ws), markdown::resolved)
                    .await
                    .map(Some)
            }
            other => Err(commands::not_available(
                commands::spec(other, debug).unwrap_or(args.spec),
            )),
        }
    }

    pub(super) fn debug_text(&self, args: &Args) -> Result<Value> {
        let raw = args.str("uri").unwrap_or_default();
        let uri = Uri::from_str(raw).map_err(|e| {
            commands::invalid(format!("loci.debug.text: invalid argument `uri`: {e}"))
        })?;
        let doc = self.docs.get(&uri).ok_or_else(|| {
            commands::error(
                commands::NOT_FOUND,
                format!("loci.debug.text: {raw} is not open"),
            )
        })?;
        let mut answer = json!({ "uri": raw, "version": doc.version, "text": doc.text });
        if args.bool("tree") == Some(true) {
            // The tree as last reparsed, edited since when changes arrived after that
            // parse; `null` before the first parse.
            answer["tree"] = json!(doc.tree.as_ref().map(document::tree_dump));
        }
        Ok(answer)
    }

    /// The root a command works on: `root`, else the root of `uri`, else the first root.
    pub(super) fn command_root(&self, args: &Args) -> Result<Arc<Root>> {
        let name = args.spec.name;
        if let Some(root) = args.str("root") {
            let path = PathBuf::from(root);
            let canonical = path.canonicalize().unwrap_or(path);
            return self
                .roots()
                .into_iter()
                .find(|r| r.path == canonical)
                .ok_or_else(|| {
                    commands::invalid(format!(
                        "{name}: invalid argument `root`: {root} is not a workspace folder of this server"
                    ))
                });
        }
        if let Some(uri) = args.str("uri") {
            let parsed = Uri::from_str(uri)
                .map_err(|e| commands::invalid(format!("{name}: invalid argument `uri`: {e}")))?;
            return document::file_path(&parsed)
                .and_then(|p| self.root_containing(&p))
                .ok_or_else(|| {
                    commands::invalid(format!(
                        "{name}: invalid argument `uri`: {uri} is in no workspace folder of this server"
                    ))
                });
        }
        self.roots().into_iter().next().ok_or_else(|| {
            commands::error(
                commands::NO_WORKSPACE,
                format!("{name}: no workspace folder: the server runs in single-file mode"),
            )
        })
    }

    pub(super) fn notes(root: &Root) -> Vec<String> {
        if !root.scanned.load(Ordering::SeqCst) && root.scanning() {
            vec!["language server: the initial scan is still running; the map is incomplete".into()]
        } else {
            Vec::new()
        }
    }

    pub(super) async fn impact(&self, args: &Args) -> Result<Value> {
        let root = self.command_root(args)?;
        let mut req: ImpactArgs = args.request()?;
        // The editor shows the whole answer as a document: the CLI's limit, not the one
        // an MCP page fits.
        if !args.has("limit") {
            req.limit = loci_engine::map::IMPACT_LIMIT;
        }
        let notes = Self::notes(&root);
        let r = root.clone();
        let env = blocking("loci.impact", move || match r.workspace() {
            Some(ws) => req
                .run(&ws)
                .map_err(|e| commands::engine_error("loci.impact", ws.name_damage(e))),
            None => Err(r.unopened("loci.impact")),
        })
        .await??;
        Ok(commands::with_markdown(
            &env,
            markdown::impact(&env),
            &notes,
        ))
    }

    /// Runs one engine operation on the command's root, on a blocking thread, and renders
    /// its envelope. After a write (`writes`), open documents' diagnostics and code lenses
    /// are refreshed.
    pub(super) async fn engine_command<T, F>(
        self: &Arc<Self>,
        args: &Args,
        writes: bool,
        op: F,
        markdown: fn(&Envelope<T>) -> String,
    ) -> Result<Value>
    where
        T: Serialize + Send + 'static,
        F: FnOnce(&mut Workspace) -> loci_engine::Result<Envelope<T>> + Send + 'static,
    {
        let name = args.spec.name;
        let root = self.command_root(args)?;
        let notes = Self::notes(&root);
        let r = root.clone();
        let env = blocking(name, move || match r.workspace() {
            Some(mut ws) => {
                op(&mut ws).map_err(|e| commands::engine_error(name, ws.name_damage(e)))
            }
            None => Err(r.unopened(name)),
        })
        .await??;
        if writes {
            self.after_scan(&root).await;
        }
        Ok(commands::with_markdown(&env, markdown(&env), &notes))
    }

    pub(super) async fn scan_command(self: &Arc<Self>, args: &Args) -> Result<Value> {
        let root = self.command_root(args)?;
        let env = root
            .scan(&self.client, self.session().work_done_progress)
            .await
            .map_err(|e| e.to_error("loci.scan"))?;
        self.after_scan(&root).await;
        let markdown = markdown::scan(&root.path.display().to_string(), &env);
        Ok(commands::with_markdown(&env, markdown, &[]))
    }

    /// `loci.sync`: a sync on a connection of its own with `$/progress` (as after a
    /// commit), or with `limit` as `loci sync --limit` on the query connection; then the
    /// count of pages behind the code told to the editor.
    pub(super) async fn sync_command(self: &Arc<Self>, args: &Args) -> Result<Value> {
        let req: SyncArgs = args.request()?;
        if req.limit.is_some() {
            return self
                .engine_command(
                    args,
                    true,
                    move |ws| req.run(ws),
                    |env| markdown::text("Sync", env, loci_engine::text::sync),
                )
                .await;
        }
        let root = self.command_root(args)?;
        let notes = Self::notes(&root);
        let behind = root
            .sync(&self.client, self.session().work_done_progress, true)
            .await
            .map_err(|e| e.to_error("loci.sync"))?;
        let env = behind
            .synced
            .clone()
            .ok_or_else(|| commands::internal("loci.sync: the sync did not run".into()))?;
        self.after_sync(&root, Ok(behind)).await;
        Ok(commands::with_markdown(
            &env,
            markdown::text("Sync", &env, loci_engine::text::sync),
            &notes,
        ))
    }

    /// `loci.synthesize`: a dry run answers the prompts; a run writes pages with
    /// `$/progress` per page, then republishes the open documents' findings.
    pub(super) async fn synthesize_command(self: &Arc<Self>, args: &Args) -> Result<Value> {
        let req: SynthesizeArgs = args.request()?;
        let targets = req.targets();
        if req.dry_run {
            return self
                .engine_command(
                    args,
                    false,
                    move |ws| ws.synthesis_prompts(&targets),
                    |env| markdown::text("Prompts", env, loci_engine::text::synthesis_prompts),
                )
                .await;
        }
        let root = self.command_root(args)?;
        let session = req.session;
        let env = root
            .synthesize(
                &self.client,
                self.session().work_done_progress,
                targets,
                session,
            )
            .await
            .map_err(|e| e.to_error("loci.synthesize"))?;
        self.after_scan(&root).await;
        // Pages written are no longer behind: the count the editor shows goes down.
        if env.result.runs.iter().any(|r| r.status == "written") {
            let r = root.clone();
            if let Ok(Some(behind)) = blocking("reading the pages behind the code", move || {
                r.recorded_behind()
            })
            .await
            {
                self.tell_behind(&root, &behind).await;
            }
        }
        let markdown = markdown::text("Pages written", &env, loci_engine::text::synthesis_report);
        Ok(commands::with_markdown(&env, markdown, &[]))
    }
}

/// This process's folder of answers shown through `window/showDocument`: `loci-answers-PID`
/// under the temporary directory, removed at `shutdown`.
pub(super) fn answers_dir() -> PathBuf {
    std::env::temp_dir().join(format!("loci-answers-{}", std::process::id()))
}

/// Writes a command's answer as `NAME` in this process's answer folder under the
/// temporary directory (`loci-answers-PID`, owner-only on Unix), for `window/showDocument`;
/// returns its URI. Outside every workspace, so nothing of it is scanned or committed.
pub(super) fn write_answer(name: &str, markdown: &str) -> std::io::Result<Uri> {
    let dir = answers_dir();
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&dir)?;
    let path = dir.join(name);
    std::fs::write(&path, markdown)?;
    Uri::from_file_path(&path)
        .ok_or_else(|| std::io::Error::other(format!("{} has no file URI", path.display())))
}
