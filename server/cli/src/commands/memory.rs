//! Memory's commands: writing pages, decisions and lessons, reading them (`list`, `show`,
//! `history`, `asof`), pins, rollbacks, confirmations, topics, facts, sessions and
//! `synthesize`.

use loci_engine::requests::{
    AsofArgs, ConfirmArgs, DecideArgs, FactAddArgs, HistoryArgs, LearnArgs, MemoryListArgs,
    PinArgs, RecapArgs, RememberArgs, RollbackArgs, SessionBeginArgs, SessionEndArgs, ShowArgs,
    SynthesizeArgs,
};

use super::*;

/// Runs one of this module's commands (see the module's doc); another is a bug of
/// [`super::dispatch`].
pub(crate) fn run(command: Command, ws: &mut Workspace, ctx: &Ctx<'_>) -> anyhow::Result<Answer> {
    let out = ctx.out;
    let (cwd, root) = (ctx.cwd, ctx.root);
    let here = |arg: String| from_cwd(arg, cwd, root);
    let found = match command {
        Command::List {
            prefix,
            kinds,
            limit,
        } => out.page_entries(
            &MemoryListArgs {
                prefix: here(prefix),
                kinds,
                limit,
            }
            .run(ws)?,
        )?,
        Command::Remember {
            subject,
            file,
            text,
            write,
        } => {
            let body = match (file, text) {
                (_, Some(t)) => t,
                (Some(f), None) if f.as_os_str() == "-" => {
                    let mut s = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
                    s
                }
                (Some(f), None) => std::fs::read_to_string(&f)
                    .map_err(|e| cli_error("io", format!("{}: {e}", f.display())))?,
                (None, None) => {
                    return Err(cli_error(
                        "invalid_argument",
                        "give the memory with --text TEXT, --file FILE, or --file - (stdin)".into(),
                    ));
                }
            };
            out.written(&RememberArgs::new(here(subject), body, write.options()).run(ws, None)?)?
        }
        Command::Decide {
            text,
            subject,
            write,
        } => {
            out.written(&DecideArgs::new(text, subject.map(here), write.options()).run(ws, None)?)?
        }
        Command::Learn {
            text,
            subject,
            write,
        } => {
            out.written(&LearnArgs::new(text, subject.map(here), write.options()).run(ws, None)?)?
        }
        Command::Show { subject, version } => match (ShowArgs {
            subject: here(subject),
            version,
        })
        .run(ws)
        {
            Err(EngineError::NotFound(m)) => return not_found(out, ws, &m).map(Answer::Exit),
            env => out.shown(&env?)?,
        },
        Command::History { subject } => match (HistoryArgs {
            subject: here(subject),
        })
        .run(ws)
        {
            Err(EngineError::NotFound(m)) => return not_found(out, ws, &m).map(Answer::Exit),
            env => out.history(&env?)?,
        },
        Command::Pin { subject, write } => {
            out.page(&PinArgs::new(here(subject), true, write.options()).run(ws, None)?)?
        }
        Command::Unpin { subject, write } => {
            out.page(&PinArgs::new(here(subject), false, write.options()).run(ws, None)?)?
        }
        Command::Rollback {
            subject,
            version,
            write,
        } => {
            out.written(&RollbackArgs::new(here(subject), version, write.options()).run(ws, None)?)?
        }
        Command::Asof { date, show } => match (AsofArgs { date, show }).run(ws) {
            Err(EngineError::NotFound(m)) => return not_found(out, ws, &m).map(Answer::Exit),
            env => out.asof(&env?)?,
        },
        Command::Confirm { subject, write } => {
            out.confirmed(&ConfirmArgs::new(here(subject), write.options()).run(ws, None)?)?
        }
        Command::Topic { command } => match command {
            TopicCommand::Add { topic, member } => {
                out.members(&ws.topic_set(&topic, &here(member), true, &Default::default())?)?
            }
            TopicCommand::Rm { topic, member } => {
                out.members(&ws.topic_set(&topic, &here(member), false, &Default::default())?)?
            }
            TopicCommand::List => out.topics(&ws.topics()?)?,
        },
        Command::Fact { command } => match command {
            FactCommand::Add {
                claim,
                cmd,
                expect,
                exit,
                write,
            } => out.facts(
                &FactAddArgs::new(claim, cmd, expect, exit, write.options())
                    .run(ws, None)?
                    .map(|f| vec![f]),
            )?,
            FactCommand::List => out.facts(&ws.fact_list()?)?,
            FactCommand::Run { id } => out.fact_runs(&ws.fact_run(id)?)?,
        },
        Command::Session { command } => match command {
            SessionCommand::Begin { task, author } => {
                out.session(&SessionBeginArgs { task, author }.run(ws, None)?)?
            }
            SessionCommand::End { session, summary } => out.sessions(
                &SessionEndArgs { session, summary }
                    .run(ws)?
                    .map(|s| vec![s]),
            )?,
        },
        Command::Recap { n } => out.sessions(&RecapArgs { n }.run(ws)?)?,
        Command::Synthesize {
            paths,
            plan,
            pending,
            dry_run,
            session,
        } => {
            let req = SynthesizeArgs {
                paths: paths.into_iter().map(here).collect(),
                dry_run,
                session,
            };
            synthesize(req, plan, pending, ws, ctx)?
        }
        other => unreachable!("dispatch routes only memory commands here, not {other:?}"),
    };
    Ok(Answer::Found(found))
}

/// `loci synthesize`: the plan (`plan`), the prompts (a dry run), or the pages written, with
/// a bar; naming no file needs `pending`. Whether it printed anything.
fn synthesize(
    req: SynthesizeArgs,
    plan: bool,
    pending: bool,
    ws: &mut Workspace,
    ctx: &Ctx<'_>,
) -> anyhow::Result<bool> {
    use loci_engine::memory::synthesis::Targets;
    let out = ctx.out;
    let targets = req.targets();
    Ok(if plan {
        out.synthesis_plan(&ws.synthesis_plan()?)?
    } else if !pending && matches!(targets, Targets::Pending) {
        return Err(cli_error(
            "invalid_argument",
            "name the files or folders to write, or --pending for the plan's pages \
             (`loci synthesize --plan` lists them)"
                .into(),
        ));
    } else if req.dry_run {
        out.synthesis_prompts(&ws.synthesis_prompts(&targets)?)?
    } else {
        let bar = output::SynthesisBar::new(ctx.json);
        let report = ws.synthesize(&targets, req.session, &|p| bar.update(p));
        bar.finish();
        out.synthesis_report(&report?)?
    })
}
