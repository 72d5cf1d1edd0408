//! The team server's address: `[team] url` or `LOCI_TEAM_URL`, parsed by tokio-postgres,
//! with the password taken only from the environment (`PGPASSWORD`) or a password file
//! (`PGPASSFILE`, else `~/.pgpass`, in libpq's format), and shown only without it.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use postgres::config::Host;

use crate::{Result, TeamError};

/// Where the URL came from: a URL in a file of the checkout must not carry a password.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UrlSource {
    /// `.loci/config.toml` (`[team] url`): a password there is refused.
    ConfigFile,
    /// `LOCI_TEAM_URL`: the environment, where a password may be.
    Environment,
}

/// A parsed server address; its [`std::fmt::Display`] never shows a password.
#[derive(Clone)]
pub struct TeamUrl {
    config: postgres::Config,
    shown: String,
}

impl std::fmt::Debug for TeamUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl std::fmt::Display for TeamUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl TeamUrl {
    /// Parses `url` (`postgres://user@host:port/db?sslmode=require`, or libpq's
    /// `key=value` form). A password in a URL from the config file is refused (the
    /// checkout's files are read by anyone who reads the repository); without one in the
    /// URL, `PGPASSWORD`, then the password file, supply it. The error never repeats the
    /// URL, which may hold a password.
    pub fn parse(url: &str, source: UrlSource) -> Result<TeamUrl> {
        let mut config = postgres::Config::from_str(url.trim()).map_err(|e| {
            TeamError::Config(format!(
                "the team url is not a PostgreSQL connection string ({e}); write it as \
                 postgres://USER@HOST:PORT/DATABASE"
            ))
        })?;
        if config.get_password().is_some() && source == UrlSource::ConfigFile {
            return Err(TeamError::Config(
                "the team url in .loci/config.toml holds a password: remove it from the file \
                 and set PGPASSWORD, or add a line to ~/.pgpass (host:port:database:user:password)"
                    .into(),
            ));
        }
        if config.get_user().is_none() {
            let user = std::env::var("PGUSER")
                .or_else(|_| std::env::var("USER"))
                .unwrap_or_else(|_| "postgres".into());
            config.user(&user);
        }
        if config.get_hosts().is_empty() {
            config.host(&std::env::var("PGHOST").unwrap_or_else(|_| "localhost".into()));
        }
        if config.get_password().is_none() {
            if let Some(pw) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
                config.password(pw.to_string_lossy().as_bytes());
            } else if let Some(pw) = pgpass_lookup(&config) {
                config.password(pw.as_bytes());
            }
        }
        config.connect_timeout(std::time::Duration::from_secs(3));
        config.application_name("loci");
        let shown = show(&config);
        Ok(TeamUrl { config, shown })
    }

    /// The connection settings (with the password, if one was found).
    pub fn config(&self) -> &postgres::Config {
        &self.config
    }

    /// Sets how long a connection attempt may take.
    pub fn set_connect_timeout(&mut self, timeout: std::time::Duration) {
        self.config.connect_timeout(timeout);
    }
}

/// `postgres://user@host:port/db` from the parsed settings (never the text given).
fn show(config: &postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or(""),
        config
            .get_dbname()
            .or(config.get_user())
            .unwrap_or("postgres")
    )
}

/// The password file: `PGPASSFILE`, else `~/.pgpass`.
fn pgpass_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PGPASSFILE") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".pgpass"))
}

/// The password of the first matching line of the password file
/// (`hostname:port:database:username:password`, `*` matching anything, `\:` and `\\`
/// escaped), as libpq reads it; a file others may read is ignored, as libpq ignores it.
fn pgpass_lookup(config: &postgres::Config) -> Option<String> {
    let path = pgpass_path()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).ok()?.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!(
                "{}: ignored, others may read it (chmod 0600 it)",
                path.display()
            );
            return None;
        }
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        _ => "localhost".into(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default().to_string();
    let db = config.get_dbname().unwrap_or(&user).to_string();
    let wanted = [host.as_str(), port.as_str(), db.as_str(), user.as_str()];
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() != 5 {
            continue;
        }
        if fields[..4]
            .iter()
            .zip(wanted)
            .all(|(f, w)| f == "*" || f == w)
        {
            return Some(fields[4].clone());
        }
    }
    None
}

/// One password-file line's fields, with `\:` and `\\` unescaped.
fn split_pgpass(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    out.last_mut().expect("one field").push(n);
                }
            }
            ':' if out.len() < 5 => out.push(String::new()),
            c => out.last_mut().expect("one field").push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_the_config_file_is_refused_and_never_repeated() {
        let err = TeamUrl::parse(
            "postgres://ann:hunter2@db.example:5433/team",
            UrlSource::ConfigFile,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("holds a password"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[test]
    fn the_shown_url_has_no_password() {
        let url = TeamUrl::parse(
            "postgres://ann:hunter2@db.example:5433/team",
            UrlSource::Environment,
        )
        .unwrap();
        assert_eq!(url.to_string(), "postgres://ann@db.example:5433/team");
        assert_eq!(format!("{url:?}"), "postgres://ann@db.example:5433/team");
    }

    #[test]
    fn pgpass_lines_unescape_colons() {
        assert_eq!(
            split_pgpass(r"db\:1:5432:*:ann:pa\:ss"),
            vec!["db:1", "5432", "*", "ann", "pa:ss"]
        );
    }
}
