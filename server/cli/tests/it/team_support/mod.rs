//! A throwaway PostgreSQL cluster for the team-memory tests: `initdb` and `pg_ctl` from
//! the Debian packages (`.ci/setup` installs them) on a free loopback port in a temporary
//! folder, run as an unprivileged user when the tests run as root (initdb refuses root:
//! the system user `loci-pg`, created if missing). Password authentication over TCP, so
//! loci connects as a real team would; trust over the cluster's own Unix socket for the
//! test's set-up through `psql`. Stopped when dropped. No sleeps: `pg_ctl -w` waits for
//! the server, and readiness is polled with `pg_isready` against a deadline.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The role loci connects as, and its password (the secret the tests look for).
pub const ROLE: &str = "loci_writer";
/// The password of [`ROLE`]: no output, log or store may contain it.
pub const PASSWORD: &str = "pw-Zq81-never-shown";
/// The database of team memory.
pub const DATABASE: &str = "team";

/// The system user the cluster runs as when the tests run as root.
const PG_USER: &str = "loci-pg";

/// A running (or stopped) cluster.
pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    /// The TCP port on 127.0.0.1.
    pub port: u16,
    as_user: Option<&'static str>,
}

fn bin_dir() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path().join("bin"))
                .filter(|p| p.join("initdb").exists())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!("no PostgreSQL server binaries under /usr/lib/postgresql: run .ci/setup")
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn ensure_pg_user() {
    let exists = Command::new("id")
        .arg(PG_USER)
        .output()
        .is_ok_and(|o| o.status.success());
    if !exists {
        let out = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                PG_USER,
            ])
            .output()
            .expect("useradd");
        // Another test binary may have made it meanwhile.
        let again = Command::new("id")
            .arg(PG_USER)
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            again,
            "useradd {PG_USER}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A free loopback port below Linux's ephemeral range (32768–60999), a different one per
/// call in this process: the server is stopped and started again on its port, and a port
/// from the ephemeral range could meanwhile go to another test's `bind(…:0)` (all of the
/// crate's tests share one process; `pg_ctl` had then failed to start).
fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let start = std::process::id()
        .wrapping_mul(7_919)
        .wrapping_add(call.wrapping_mul(131));
    (0..12_000u32)
        .map(|i| 20_000 + ((start.wrapping_add(i)) % 12_000) as u16)
        .find(|&port| std::net::TcpListener::bind(("127.0.0.1", port)).is_ok())
        .expect("a free loopback port below the ephemeral range")
}

impl Cluster {
    /// Creates and starts a cluster with the role [`ROLE`] (password [`PASSWORD`]) owning
    /// the database [`DATABASE`].
    pub fn start() -> Cluster {
        let bin = bin_dir();
        let as_user = if is_root() {
            ensure_pg_user();
            Some(PG_USER)
        } else {
            None
        };
        let dir = tempfile::Builder::new()
            .prefix("loci-pg-")
            .tempdir()
            .expect("tempdir");
        if let Some(user) = as_user {
            let ok = Command::new("chown")
                .args(["-R", user])
                .arg(dir.path())
                .status()
                .expect("chown");
            assert!(ok.success(), "chown the cluster folder");
        }
        let cluster = Cluster {
            dir,
            bin,
            port: free_port(),
            as_user,
        };
        let pwfile = cluster.dir.path().join("superuser.pw");
        std::fs::write(&pwfile, "superuser-pw-unused\n").unwrap();
        if let Some(user) = as_user {
            Command::new("chown")
                .arg(user)
                .arg(&pwfile)
                .status()
                .unwrap();
        }
        cluster.run_ok(
            "initdb",
            &[
                "-D",
                cluster.data().to_str().unwrap(),
                "-U",
                "postgres",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--pwfile",
                pwfile.to_str().unwrap(),
                "--no-sync",
                "-E",
                "UTF8",
            ],
        );
        cluster.start_server();
        cluster.psql(&format!("CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'"));
        cluster.psql(&format!("CREATE DATABASE {DATABASE} OWNER {ROLE}"));
        cluster
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The server's log (for the no-password check).
    pub fn log_file(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        match self.as_user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(path);
                c
            }
            None => Command::new(path),
        }
    }

    fn run_ok(&self, program: &str, args: &[&str]) -> Output {
        let out = self
            .command(program)
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}"));
        assert!(
            out.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Starts the server (again) on the same port and waits until it accepts connections.
    pub fn start_server(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.socket_dir().display()
        );
        self.run_ok(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().unwrap(),
                "-l",
                self.log_file().to_str().unwrap(),
                "-o",
                &options,
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ready = self
                .command("pg_isready")
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-t", "5"])
                .output()
                .is_ok_and(|o| o.status.success());
            if ready {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the cluster did not become ready in 60 s"
            );
        }
    }

    /// Stops the server at once (its clients see the connection drop).
    pub fn stop_server(&self) {
        self.run_ok(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().unwrap(),
                "-m",
                "fast",
                "-w",
                "stop",
            ],
        );
    }

    /// Runs SQL as the superuser over the Unix socket, in the team database once it
    /// exists; returns psql's unaligned, tuples-only output.
    pub fn psql(&self, sql: &str) -> String {
        self.psql_result(sql)
            .unwrap_or_else(|e| panic!("psql {sql}: {e}"))
    }

    /// [`Cluster::psql`], returning psql's stderr on failure.
    pub fn psql_result(&self, sql: &str) -> Result<String, String> {
        let db = if sql.starts_with("CREATE ROLE") || sql.starts_with("CREATE DATABASE") {
            "postgres"
        } else {
            DATABASE
        };
        let out = self
            .command("psql")
            .args([
                "-X",
                "-q",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                self.socket_dir().to_str().unwrap(),
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                db,
                "-c",
                sql,
            ])
            .output()
            .expect("psql");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// The team URL loci is configured with (no password).
    pub fn url(&self) -> String {
        format!(
            "postgres://{ROLE}@127.0.0.1:{}/{DATABASE}?sslmode=prefer",
            self.port
        )
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args([
                "-D",
                self.data().to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ])
            .output();
    }
}

/// A certificate authority and a server certificate it signed for `127.0.0.1` (made with
/// the `openssl` command): `(ca.crt, server.crt, server.key)`, PEM files in `dir`.
pub fn test_certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl (from the Debian package openssl)");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &["-keyout", "ca.key", "-out", "ca.crt", "-days", "2"],
            &["-subj", "/CN=loci test CA"],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName = IP:127.0.0.1\nbasicConstraints = CA:FALSE\n\
         keyUsage = digitalSignature\nextendedKeyUsage = serverAuth\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ]);
    (
        dir.join("ca.crt"),
        dir.join("server.crt"),
        dir.join("server.key"),
    )
}

impl Cluster {
    /// Restarts the server with TLS on (the certificate and key given, PEM) and accepting
    /// TCP connections only over TLS (`hostssl` in `pg_hba.conf`).
    pub fn require_tls(&self, cert: &Path, key: &Path) {
        let data = self.data();
        for (from, to) in [(cert, "server.crt"), (key, "server.key")] {
            let dest = data.join(to);
            std::fs::copy(from, &dest).unwrap();
            // PostgreSQL refuses a key others may read.
            let ok = Command::new("chmod")
                .arg("600")
                .arg(&dest)
                .status()
                .unwrap();
            assert!(ok.success());
            if let Some(user) = self.as_user {
                let ok = Command::new("chown").arg(user).arg(&dest).status().unwrap();
                assert!(ok.success());
            }
        }
        let hba = data.join("pg_hba.conf");
        let rules = std::fs::read_to_string(&hba).unwrap();
        let rules: String = rules
            .lines()
            .map(|l| match l.strip_prefix("host ") {
                Some(rest) => format!("hostssl {rest}\n"),
                None => format!("{l}\n"),
            })
            .collect();
        std::fs::write(&hba, rules).unwrap();
        self.psql("ALTER SYSTEM SET ssl = on");
        self.stop_server();
        self.start_server();
    }

    /// [`Cluster::url`] with another `sslmode`.
    pub fn url_with_sslmode(&self, mode: &str) -> String {
        self.url()
            .replace("sslmode=prefer", &format!("sslmode={mode}"))
    }
}
