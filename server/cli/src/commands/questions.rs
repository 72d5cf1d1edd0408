//! The questions answered from map and memory together: `why`, `search`, `context`, and
//! their measures `eval` and `calibrate`.

use super::*;

/// Runs one of this module's commands (see the module's doc); another is a bug of
/// [`super::dispatch`].
pub(crate) fn run(command: Command, ws: &mut Workspace, ctx: &Ctx<'_>) -> anyhow::Result<Answer> {
    let out = ctx.out;
    let (cwd, root) = (ctx.cwd, ctx.root);
    let here = |arg: String| from_cwd(arg, cwd, root);
    let found = match command {
        Command::Why { target } => match ws.why(&from_cwd_with_line(target, ctx.cwd, ctx.root)) {
            Err(EngineError::NotFound(m)) => return not_found(out, ws, &m).map(Answer::Exit),
            env => out.why(&env?)?,
        },
        Command::Search {
            query,
            kinds,
            path,
            limit,
        } => {
            use loci_engine::context::HitKind;
            let kinds = kinds
                .into_iter()
                .map(|k| match k {
                    KindArg::Memory => HitKind::Memory,
                    KindArg::Symbol => HitKind::Symbol,
                    KindArg::Doc => HitKind::Doc,
                })
                .collect();
            let options = loci_engine::context::SearchOptions {
                kinds,
                // From the current folder, as every path argument (`--path mime` in `email/`).
                path_prefix: path.map(here),
                limit: Some(limit),
            };
            out.search(&ws.search(&query, &options)?)?
        }
        Command::Context {
            query,
            open,
            budget,
            floor,
        } => {
            let req = loci_engine::context::ContextRequest {
                query,
                open_files: open.into_iter().map(here).collect(),
                budget,
                floor,
            };
            out.context(&ws.context(&req)?)?
        }
        Command::Eval { cases, k } => out.eval(&ws.eval(&cases, k)?)?,
        Command::Calibrate { cases } => out.calibration(&ws.calibrate(&cases)?)?,
        other => unreachable!("dispatch routes only questions commands here, not {other:?}"),
    };
    Ok(Answer::Found(found))
}
