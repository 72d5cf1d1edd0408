//! Dependency versions declared by the repository's manifests, for `version_mismatch`:
//! `Cargo.toml` (every `*dependencies` table, including `[workspace.dependencies]` and
//! target tables, and `[package]`), `Cargo.lock`, `package.json`, `requirements*.txt`
//! (`==` pins), `pyproject.toml` (`[project]` and `[tool.poetry]`), and `go.mod`.

use std::path::Path;

use serde::Serialize;

/// One declared version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Declared {
    /// Package name as written.
    pub name: String,
    /// The version or requirement as written (`^1.2`, `==2.31.0`, `v1.9.1`).
    pub spec: String,
    /// The manifest (repo-relative).
    pub manifest: String,
}

/// True when `path`'s file name is a manifest loci reads.
pub fn is_manifest(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "Cargo.toml" | "Cargo.lock" | "package.json" | "pyproject.toml" | "go.mod"
    ) || (name.starts_with("requirements") && name.ends_with(".txt"))
}

/// The library a `Cargo.toml` (repo-relative `manifest`) declares: its name as code names
/// it (`[lib] name`, else `[package] name` with `-` as `_`, per Cargo's target rules) and
/// its root file, repo-relative (`[lib] path`, else `src/lib.rs` beside the manifest).
/// `None` for a manifest that cannot be read or parsed, or has no package (a virtual
/// workspace).
pub(crate) fn rust_library(root: &Path, manifest: &str) -> Option<(String, String)> {
    let text = std::fs::read_to_string(root.join(manifest)).ok()?;
    let doc: toml::Table = text.parse().ok()?;
    let package = doc.get("package")?.as_table()?;
    let lib = doc.get("lib").and_then(|l| l.as_table());
    let name = lib
        .and_then(|l| l.get("name"))
        .or_else(|| package.get("name"))?
        .as_str()?
        .replace('-', "_");
    let dir = manifest.strip_suffix("Cargo.toml")?;
    let path = lib
        .and_then(|l| l.get("path"))
        .and_then(|p| p.as_str())
        .unwrap_or("src/lib.rs")
        .trim_start_matches("./")
        .replace('\\', "/");
    Some((name, format!("{dir}{path}")))
}

/// Reads every manifest among `paths` (repo-relative) under `root`. Unreadable or
/// malformed manifests are skipped (they cannot contradict anything).
pub fn load(root: &Path, paths: &[String]) -> Vec<Declared> {
    let mut out = Vec::new();
    for path in paths.iter().filter(|p| is_manifest(p)) {
        let Ok(text) = std::fs::read_to_string(root.join(path)) else {
            continue;
        };
        let name = path.rsplit('/').next().unwrap_or(path);
        let mut push = |n: &str, spec: &str| {
            if !n.is_empty() && !spec.is_empty() {
                out.push(Declared {
                    name: n.to_string(),
                    spec: spec.to_string(),
                    manifest: path.clone(),
                });
            }
        };
        match name {
            "Cargo.toml" => {
                let Ok(doc) = text.parse::<toml::Table>() else {
                    continue;
                };
                cargo_toml(&doc, &mut push);
            }
            "Cargo.lock" => {
                let Ok(doc) = text.parse::<toml::Table>() else {
                    continue;
                };
                for p in doc
                    .get("package")
                    .and_then(|p| p.as_array())
                    .into_iter()
                    .flatten()
                {
                    if let (Some(n), Some(v)) = (
                        p.get("name").and_then(|x| x.as_str()),
                        p.get("version").and_then(|x| x.as_str()),
                    ) {
                        push(n, v);
                    }
                }
            }
            "package.json" => {
                let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) else {
                    continue;
                };
                if let (Some(n), Some(v)) = (doc["name"].as_str(), doc["version"].as_str()) {
                    push(n, v);
                }
                for table in [
                    "dependencies",
                    "devDependencies",
                    "peerDependencies",
                    "optionalDependencies",
                ] {
                    if let Some(deps) = doc[table].as_object() {
                        for (n, v) in deps {
                            if let Some(v) = v.as_str() {
                                push(n, v);
                            }
                        }
                    }
                }
            }
            "pyproject.toml" => {
                let Ok(doc) = text.parse::<toml::Table>() else {
                    continue;
                };
                if let Some(project) = doc.get("project") {
                    if let (Some(n), Some(v)) = (
                        project.get("name").and_then(|x| x.as_str()),
                        project.get("version").and_then(|x| x.as_str()),
                    ) {
                        push(n, v);
                    }
                    for dep in project
                        .get("dependencies")
                        .and_then(|d| d.as_array())
                        .into_iter()
                        .flatten()
                    {
                        if let Some((n, v)) = dep.as_str().and_then(pep508) {
                            push(&n, &v);
                        }
                    }
                }
                if let Some(poetry) = doc.get("tool").and_then(|t| t.get("poetry")) {
                    for table in ["dependencies", "dev-dependencies"] {
                        for (n, v) in poetry
                            .get(table)
                            .and_then(|d| d.as_table())
                            .into_iter()
                            .flatten()
                        {
                            match v {
                                toml::Value::String(s) => push(n, s),
                                toml::Value::Table(t) => {
                                    if let Some(s) = t.get("version").and_then(|x| x.as_str()) {
                                        push(n, s)
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                }
            }
            "go.mod" => {
                let mut in_block = false;
                for line in text.lines() {
                    let line = line.split("//").next().unwrap_or("").trim();
                    let spec = if in_block {
                        if line == ")" {
                            in_block = false;
                            continue;
                        }
                        line
                    } else if let Some(rest) = line.strip_prefix("require") {
                        let rest = rest.trim();
                        if rest == "(" {
                            in_block = true;
                            continue;
                        }
                        rest
                    } else {
                        continue;
                    };
                    let mut parts = spec.split_whitespace();
                    if let (Some(n), Some(v)) = (parts.next(), parts.next()) {
                        push(n, v);
                    }
                }
            }
            _ => {
                // requirements*.txt: only exact pins are claims about a version.
                for line in text.lines() {
                    let line = line.split('#').next().unwrap_or("").trim();
                    if let Some((n, v)) = line.split_once("==") {
                        let n = n.split('[').next().unwrap_or(n).trim();
                        let v = v.split([';', ' ']).next().unwrap_or(v).trim();
                        push(n, v);
                    }
                }
            }
        }
    }
    out
}

fn cargo_toml(doc: &toml::Table, push: &mut impl FnMut(&str, &str)) {
    if let Some(pkg) = doc.get("package")
        && let (Some(n), Some(v)) = (
            pkg.get("name").and_then(|x| x.as_str()),
            pkg.get("version").and_then(|x| x.as_str()),
        )
    {
        push(n, v);
    }
    let mut tables: Vec<&toml::Table> = Vec::new();
    for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
        tables.extend(doc.get(key).and_then(|t| t.as_table()));
    }
    if let Some(ws) = doc
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(|t| t.as_table())
    {
        tables.push(ws);
    }
    for target in doc
        .get("target")
        .and_then(|t| t.as_table())
        .into_iter()
        .flat_map(|t| t.values())
    {
        for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
            tables.extend(target.get(key).and_then(|t| t.as_table()));
        }
    }
    for table in tables {
        for (n, v) in table {
            let name = v.get("package").and_then(|p| p.as_str()).unwrap_or(n);
            match v {
                toml::Value::String(s) => push(name, s),
                toml::Value::Table(t) => {
                    if let Some(s) = t.get("version").and_then(|x| x.as_str()) {
                        push(name, s)
                    }
                }
                _ => {}
            }
        }
    }
}

/// `requests==2.31.0` / `flask>=2` (PEP 508, simplified) → (name, spec).
fn pep508(dep: &str) -> Option<(String, String)> {
    let dep = dep.split(';').next()?.trim();
    let at = dep.find(|c: char| "<>=!~ ".contains(c))?;
    let name = dep[..at].split('[').next()?.trim();
    Some((name.to_string(), dep[at..].trim().to_string()))
}

/// Normalized package name: lower case, and `_`/`.` read as `-` (PEP 503 for Python;
/// harmless elsewhere).
pub fn normalize_name(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

/// The version numbers of a spec: `^1.2.3` → `[1, 2, 3]`, `>=2.0,<3` → `[2, 0]`,
/// `v1.9.1` → `[1, 9, 1]`; `None` for specs without a version (`*`, a path, a URL).
pub fn version_numbers(spec: &str) -> Option<Vec<u64>> {
    let start = spec.find(|c: char| c.is_ascii_digit())?;
    let rest = &spec[start..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let nums: Vec<u64> = rest[..end]
        .split('.')
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    (!nums.is_empty()).then_some(nums)
}

/// Whether a claimed version agrees with a declared spec: the shorter of the two number
/// lists is a prefix of the longer (`1.2` agrees with `^1.2.3`; `1.3.0` does not).
pub fn agrees(claimed: &str, spec: &str) -> bool {
    match (version_numbers(claimed), version_numbers(spec)) {
        (Some(c), Some(s)) => {
            let n = c.len().min(s.len());
            c[..n] == s[..n]
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_agreement_is_a_prefix_match() {
        assert!(agrees("1.2", "^1.2.3"));
        assert!(agrees("1.2.3", "=1.2.3"));
        assert!(agrees("2.31.0", "==2.31.0"));
        assert!(agrees("1.9.1", "v1.9.1"));
        assert!(!agrees("1.3.0", "^1.2.3"));
        assert!(!agrees("2.0", "1.2"));
        assert!(
            agrees("1.0", "*"),
            "no declared version: nothing to contradict"
        );
    }

    #[test]
    fn manifests_of_every_ecosystem_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let w = |p: &str, t: &str| {
            let f = dir.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, t).unwrap();
        };
        w(
            "Cargo.toml",
            "[package]\nname = \"app\"\nversion = \"0.3.0\"\n[dependencies]\nserde = \"1.0.200\"\ntokio = { version = \"1.38\", features = [\"rt\"] }\n[workspace.dependencies]\nrayon = \"1.10\"\n",
        );
        w(
            "web/package.json",
            r#"{"name":"web","version":"2.0.0","dependencies":{"react":"^18.2.0"},"devDependencies":{"vite":"~5.1.0"}}"#,
        );
        w(
            "requirements-dev.txt",
            "requests==2.31.0  # pinned\nflask>=2\n",
        );
        w(
            "pyproject.toml",
            "[project]\nname = \"svc\"\nversion = \"1.0\"\ndependencies = [\"httpx==0.27.0\", \"pydantic>=2.5\"]\n",
        );
        w(
            "go.mod",
            "module example.com/m\n\nrequire (\n\tgithub.com/pkg/errors v0.9.1\n)\nrequire golang.org/x/text v0.14.0\n",
        );
        let paths: Vec<String> = [
            "Cargo.toml",
            "web/package.json",
            "requirements-dev.txt",
            "pyproject.toml",
            "go.mod",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let got: Vec<String> = load(dir.path(), &paths)
            .into_iter()
            .map(|d| format!("{} {} {}", d.manifest, d.name, d.spec))
            .collect();
        assert_eq!(
            got,
            [
                "Cargo.toml app 0.3.0",
                "Cargo.toml serde 1.0.200",
                "Cargo.toml tokio 1.38",
                "Cargo.toml rayon 1.10",
                "web/package.json web 2.0.0",
                "web/package.json react ^18.2.0",
                "web/package.json vite ~5.1.0",
                "requirements-dev.txt requests 2.31.0",
                "pyproject.toml svc 1.0",
                "pyproject.toml httpx ==0.27.0",
                "pyproject.toml pydantic >=2.5",
                "go.mod github.com/pkg/errors v0.9.1",
                "go.mod golang.org/x/text v0.14.0",
            ]
        );
    }
}
