//! Writing report files atomically: a reader (or a crash) never sees half a file.

use std::path::Path;

/// Writes `content` to `path` atomically (a temporary file in the same directory, then a rename).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("r.json");
/// lockstep::files::write_atomic(&p, "{}").unwrap();
/// assert_eq!(std::fs::read_to_string(&p).unwrap(), "{}");
/// ```
pub fn write_atomic(path: &Path, content: &str) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, content.as_bytes())?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Checks before a run that `path` can be written (its directory exists and is writable).
pub fn check_writable(path: &Path) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    tempfile::NamedTempFile::new_in(dir)
        .map(|_| ())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
