//! Path arguments as the map names them: relative to the current folder when it is below
//! the workspace root, root-relative otherwise.

use std::path::Path;

/// A path argument as the map names it. A path that exists relative to the current
/// directory, when that is a folder below the workspace root, becomes root-relative with
/// `/` separators (as git resolves `git log parse.py` in a subfolder); so does an absolute
/// path inside the workspace. Anything else (a root-relative path, a symbol name, a
/// subject such as `decisions` or `topic:billing`) is passed on as given. `..` and `.`
/// are resolved by name, not through symlinks, so a path keeps the name the map has.
pub(crate) fn from_cwd(arg: String, cwd: &Path, root: &Path) -> String {
    use std::path::Component;
    let given = Path::new(&arg);
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        match cwd.strip_prefix(root) {
            Ok(below) if !below.as_os_str().is_empty() => cwd.join(given),
            _ => return arg,
        }
    };
    let Ok(inside) = joined.strip_prefix(root) else {
        return arg;
    };
    let mut parts: Vec<String> = Vec::new();
    for c in inside.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            // `..` pops a name (in the guard); above the root it is not the map's.
            Component::ParentDir if parts.pop().is_none() => return arg,
            _ => {}
        }
    }
    let rel = parts.join("/");
    if rel.is_empty() || !root.join(&rel).exists() {
        return arg;
    }
    rel
}

/// `PATH:LINE` with its path as [`from_cwd`] names it (`why generator.py:71` in the
/// folder of `email/generator.py`); anything else as [`from_cwd`] takes it.
pub(crate) fn from_cwd_with_line(arg: String, cwd: &Path, root: &Path) -> String {
    if let Some((path, line)) = arg.rsplit_once(':')
        && !path.is_empty()
        && !line.is_empty()
        && line.bytes().all(|b| b.is_ascii_digit())
    {
        return format!("{}:{line}", from_cwd(path.to_string(), cwd, root));
    }
    from_cwd(arg, cwd, root)
}
