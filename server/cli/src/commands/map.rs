//! The map's commands: `scan`, `embed`, `sync`, the structural questions (`symbol`,
//! `refs`, `callers`, `callees`, `outline`, `source`, `deps`, `impact`) and `stats`.

use loci_engine::requests::{
    CalleesArgs, CallersArgs, DepsArgs, ImpactArgs, OutlineArgs, ReferencesArgs, SourceArgs,
    SymbolArgs, SyncArgs,
};

use super::*;

/// Runs one of this module's commands (see the module's doc); another is a bug of
/// [`super::dispatch`].
pub(crate) fn run(
    command: Command,
    ws: &mut Workspace,
    ctx: &Ctx<'_>,
    miss: &mut Option<String>,
) -> anyhow::Result<Answer> {
    let out = ctx.out;
    let (cwd, root) = (ctx.cwd, ctx.root);
    let here = |arg: String| from_cwd(arg, cwd, root);
    // A symbol key's path from the current folder too (`message.py#Message.get@method`
    // in `email/`); a name is left as given.
    let key_here = |arg: String| match arg.split_once('#') {
        Some((path, rest)) => format!("{}#{rest}", from_cwd(path.to_string(), cwd, root)),
        None => arg,
    };
    let found = match command {
        Command::Scan { scip, .. } => scan(scip, ws, ctx)?,
        Command::Embed => embed(ws, ctx)?,
        Command::Symbol { name, limit } => {
            let env = SymbolArgs {
                name: key_here(name),
                limit,
            }
            .run(ws)?;
            *miss = unknown_symbol(&env).or(miss.take());
            out.symbols(&env)?
        }
        Command::Refs { name, limit } => {
            let env = ReferencesArgs {
                name: key_here(name),
                limit,
            }
            .run(ws)?;
            *miss = unknown_symbol(&env).or(miss.take());
            out.refs(&env)?
        }
        Command::Callees {
            symbol,
            limit,
            min_confidence,
        } => {
            let env = CalleesArgs {
                symbol: key_here(symbol),
                limit,
                min_confidence,
            }
            .run(ws)?;
            *miss = unknown_symbol(&env).or(miss.take());
            out.callees(&env)?
        }
        Command::Outline { path, limit } => match (OutlineArgs {
            path: here(path),
            limit,
        })
        .run(ws)
        {
            Err(EngineError::NotFound(message)) => {
                return map_not_found(out, ws, &message).map(Answer::Exit);
            }
            env => out.outline(&env?)?,
        },
        Command::Source { name } => match (SourceArgs {
            name: key_here(name),
        })
        .run(ws)
        {
            Err(EngineError::NotFound(message)) => {
                return not_found(out, ws, &message).map(Answer::Exit);
            }
            env => out.source(&env?)?,
        },
        Command::Callers {
            symbol,
            limit,
            min_confidence,
            no_tests,
        } => {
            // A name that is no symbol is a typo, not dead code: say which.
            let shown = quoted(&symbol);
            let typo = format!(
                "no symbol named `{shown}` in the map, so no callers (`loci symbol` finds names)"
            );
            let weaker =
                format!("no callers of `{shown}` at confidence {min_confidence:.2} or more");
            let env = CallersArgs {
                symbol: key_here(symbol),
                limit,
                min_confidence,
                no_tests,
            }
            .run(ws)?;
            if env.result.targets_total == 0 {
                *miss = unknown_symbol(&env).or(Some(typo));
            } else if env.result.weaker > 0 {
                *miss = Some(weaker);
            } else if env.result.secondary_left_out > 0 {
                *miss = Some(format!(
                    "no callers of `{shown}` outside tests, examples and vendored code: {} there, left out (`--no-tests`)",
                    env.result.secondary_left_out
                ));
            } else if env.result.untyped > 0 {
                // Calls by its name on values of unknown type are no callers found, but
                // not none: the answer above counts them.
                *miss = Some(format!(
                    "no call tied to `{shown}`: {} by its name on values of unknown type (above)",
                    env.result.untyped
                ));
            }
            out.callers(&env)?
        }
        Command::Deps { path, reverse } => match (DepsArgs {
            path: here(path),
            reverse,
        })
        .run(ws)
        {
            Err(EngineError::NotFound(message)) => {
                return map_not_found(out, ws, &message).map(Answer::Exit);
            }
            env => out.deps(&env?)?,
        },
        Command::Impact {
            target,
            depth,
            hard,
            min_confidence,
            limit,
            no_tests,
        } => match (ImpactArgs {
            target: here(target.clone()),
            depth,
            hard,
            min_confidence,
            limit,
            no_tests,
        })
        .run(ws)
        {
            Err(EngineError::NotFound(message)) => {
                return map_not_found(out, ws, &message).map(Answer::Exit);
            }
            Ok(env) => {
                if env.result.weaker > 0 {
                    *miss = Some(format!(
                        "nothing depends on `{}` within depth {depth} through {}",
                        quoted(&target),
                        loci_engine::text::edges_followed(hard, min_confidence)
                    ));
                }
                out.impact(&env)?
            }
            Err(e) => return Err(e.into()),
        },
        Command::Stats => out.stats(&ws.stats()?)?,
        Command::Sync { limit, quiet } => {
            let env = SyncArgs { limit }.run(ws)?;
            if quiet { true } else { out.sync(&env)? }
        }
        other => unreachable!("dispatch routes only map commands here, not {other:?}"),
    };
    Ok(Answer::Found(found))
}

/// `loci scan`, with a bar, then the SCIP index `scip` (relative to the current folder)
/// checked against the map the scan just made; whether it printed anything.
fn scan(
    scip: Option<std::path::PathBuf>,
    ws: &mut Workspace,
    ctx: &Ctx<'_>,
) -> anyhow::Result<bool> {
    let bar = output::ScanBar::new(ctx.json);
    let env = ws.scan(&|p| bar.update(p))?;
    bar.finish();
    Ok(match scip {
        Some(index) => {
            let index = ctx.cwd.join(index);
            let imported = ws.import_scip(&index, loci_engine::map::MAX_INDEX_BYTES)?;
            ctx.out.scan_scip(&env, &imported)?
        }
        None => ctx.out.scan(&env)?,
    })
}

/// `loci embed`, with a bar; whether it printed anything.
fn embed(ws: &mut Workspace, ctx: &Ctx<'_>) -> anyhow::Result<bool> {
    let bar = output::EmbedBar::new(ctx.json);
    let env = ws.embed(&|p| {
        bar.update(p);
        std::ops::ControlFlow::Continue(())
    })?;
    bar.finish();
    ctx.out.embed(&env)
}
