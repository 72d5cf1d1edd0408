//! The store as a whole: `init`, `export`, `import`, `backup`, `restore` and team memory.

use super::*;

/// Runs one of this module's commands (see the module's doc); another is a bug of
/// [`super::dispatch`].
pub(crate) fn run(command: Command, ws: &mut Workspace, ctx: &Ctx<'_>) -> anyhow::Result<Answer> {
    let out = ctx.out;
    let found = match command {
        Command::Init {
            agents,
            global,
            git_hook,
            remove_git_hook,
        } => {
            let codex_config = match global {
                false => None,
                true => Some(loci_engine::init::codex_config_path().ok_or_else(|| {
                    cli_error(
                        "invalid_argument",
                        "--global: neither CODEX_HOME nor HOME is set, so Codex's config.toml cannot be found".into(),
                    )
                })?),
            };
            let env = ws.stats()?;
            let found = out.init(ws.root(), &env)?;
            // The envelope first, then the agents' report.
            out.finish(None)?;
            if agents {
                let options = loci_engine::init::AgentsOptions { codex_config };
                print_agents(
                    &loci_engine::init::wire_agents(ws.root(), &options)?,
                    ctx.json,
                )?;
            }
            if git_hook {
                print_hooks(&loci_engine::init::hooks::install(ws.root())?, ctx.json)?;
            } else if remove_git_hook {
                print_hooks(&loci_engine::init::hooks::remove(ws.root())?, ctx.json)?;
            }
            found
        }
        Command::Export {
            obsidian: Some(dir),
            ..
        } => out.vault(&ws.export_obsidian(&dir)?)?,
        Command::Export { output, .. } => out.exported(ws.export_memory()?, output.as_deref())?,
        Command::Import { file } => {
            let (text, source) = if file.as_os_str() == "-" {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
                (s, "-".to_string())
            } else {
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| cli_error("io", format!("{}: {e}", file.display())))?;
                (text, file.display().to_string())
            };
            let doc = loci_engine::memory::parse_export(&text, &source)?;
            out.imported(&ws.import_memory(&doc, &source)?)?
        }
        Command::Backup { path } => out.backed_up(&ws.backup(&path)?)?,
        Command::Restore { path } => out.restored(&ws.restore(&path)?)?,
        Command::Team { command } => match command {
            TeamCommand::Init => out.team_init(&ws.team_init()?)?,
            TeamCommand::Status => out.team_status(&ws.team_status()?)?,
            TeamCommand::Sync => out.team_sync(&ws.team_sync()?)?,
            TeamCommand::CatchUp => out.team_sync(&ws.team_catch_up()?)?,
            TeamCommand::Join => out.team_join(&ws.team_join()?)?,
            TeamCommand::Export { output } => out.exported(ws.team_export()?, output.as_deref())?,
        },
        other => unreachable!("dispatch routes only store commands here, not {other:?}"),
    };
    Ok(Answer::Found(found))
}
