//! The questions answered from map and memory together: `why`, `search`, `context`, and
//! their measures `eval` and `calibrate`.

use loci_engine::requests::{ContextArgs, SearchArgs, SearchKind, WhyArgs};

use super::*;

/// Runs one of this module's commands (see the module's doc); another is a bug of
/// [`super::dispatch`].
pub(crate) fn run(command: Command, ws: &mut Workspace, ctx: &Ctx<'_>) -> anyhow::Result<Answer> {
    let out = ctx.out;
    let (cwd, root) = (ctx.cwd, ctx.root);
    let here = |arg: String| from_cwd(arg, cwd, root);
    let found = match command {
        Command::Why { target } => match (WhyArgs {
            target: from_cwd_with_line(target, ctx.cwd, ctx.root),
        })
        .run(ws)
        {
            Err(EngineError::NotFound(m)) => return not_found(out, ws, &m).map(Answer::Exit),
            env => out.why(&env?)?,
        },
        Command::Search {
            query,
            kinds,
            path,
            limit,
        } => {
            let kinds = kinds
                .into_iter()
                .map(|k| match k {
                    KindArg::Memory => SearchKind::Memory,
                    KindArg::Symbol => SearchKind::Symbol,
                    KindArg::Doc => SearchKind::Doc,
                })
                .collect();
            let req = SearchArgs {
                query,
                kinds: Some(kinds),
                // From the current folder, as every path argument (`--path mime` in `email/`).
                path: path.map(here),
                limit,
            };
            out.search(&req.run(ws)?)?
        }
        Command::Context {
            query,
            open,
            budget,
            floor,
        } => {
            let req = ContextArgs {
                query,
                open_files: Some(open.into_iter().map(here).collect()),
                budget,
                floor,
            };
            out.context(&req.run(ws)?)?
        }
        Command::Eval { cases, k } => out.eval(&ws.eval(&cases, k)?)?,
        Command::Calibrate { cases } => out.calibration(&ws.calibrate(&cases)?)?,
        other => unreachable!("dispatch routes only questions commands here, not {other:?}"),
    };
    Ok(Answer::Found(found))
}
