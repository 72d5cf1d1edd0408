//! The audit's commands: `lint`, `check` (plain or SARIF), `resolve` and `drift`.

use loci_engine::requests::{DriftArgs, ResolveArgs};

use super::*;

/// Runs one of this module's commands (see the module's doc); another is a bug of
/// [`super::dispatch`].
pub(crate) fn run(command: Command, ws: &mut Workspace, ctx: &Ctx<'_>) -> anyhow::Result<Answer> {
    let out = ctx.out;
    let found = match command {
        Command::Lint => {
            refresh_the_map(ws)?;
            out.lint(&ws.lint()?)?
        }
        Command::Check { sarif } => {
            refresh_the_map(ws)?;
            let env = ws.check()?;
            if sarif {
                out.sarif(&loci_engine::audit::to_sarif(ws, &env.result))?;
                out.check_verdict(&env.result);
            } else {
                out.check(&env)?;
            }
            env.result.passed
        }
        Command::Resolve { id, notes, session } => {
            match (ResolveArgs { id, notes, session }).run(ws) {
                Err(EngineError::NotFound(m)) => return not_found(out, ws, &m).map(Answer::Exit),
                env => out.resolved(&env?)?,
            }
        }
        Command::Drift { since } => out.drift(&DriftArgs { since }.run(ws)?)?,
        other => unreachable!("dispatch routes only audit commands here, not {other:?}"),
    };
    Ok(Answer::Found(found))
}
