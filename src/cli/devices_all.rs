//! `--device all`: a command once per Vulkan device of the machine, each in a child process of its
//! own, all at once; their JSON reports gathered for one report with a column per device
//! (`lockstep conform` and `lockstep run` use it).

use crate::cli::devices::vk_error;
use crate::cli::{CliError, EXIT_INTERNAL};
use crate::vulkan::Context;
use serde_json::Value as Json;
use std::path::Path;

/// `--device N` or `--device all`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// one device, by index
    Index(usize),
    /// every device
    All,
}

impl std::str::FromStr for DeviceChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(DeviceChoice::All),
            n => n
                .parse()
                .map(DeviceChoice::Index)
                .map_err(|_| format!("'{n}' is not a device index or `all`")),
        }
    }
}

impl DeviceChoice {
    /// The index of one device; `None` for the preferred one (and for `all`, which callers
    /// handle before).
    pub fn index(choice: Option<DeviceChoice>) -> Option<usize> {
        match choice {
            Some(DeviceChoice::Index(i)) => Some(i),
            _ => None,
        }
    }
}

/// What the children left: each device's JSON report (or `{"device": …, "error": …}` where a
/// child wrote none), and the worst exit code.
pub(crate) struct Gathered {
    /// one per device, by index
    pub reports: Vec<Json>,
    /// the worst child's exit code
    pub code: i32,
}

/// Runs `argv` (the command as typed, program name first) once per device, with `--device I` and
/// `--json FILE` in place of the ones given (and no `--junit`), each in a child process, all at
/// once.
pub(crate) fn run_children(argv: &[String]) -> Result<Gathered, CliError> {
    let n = Context::list().map_err(vk_error)?.len();
    if n == 0 {
        return Err(CliError::no_device("no Vulkan device"));
    }
    let dir =
        tempfile::tempdir().map_err(|e| CliError::internal(format!("a temporary folder: {e}")))?;
    let exe = std::env::current_exe()
        .map_err(|e| CliError::internal(format!("finding lockstep's own binary: {e}")))?;
    let mut rest: Vec<String> = Vec::new();
    let mut it = argv.iter().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--device" | "--json" | "--junit" => {
                it.next();
            }
            x if x.starts_with("--device=")
                || x.starts_with("--json=")
                || x.starts_with("--junit=") => {}
            _ => rest.push(x.clone()),
        }
    }
    let children: Vec<(usize, std::process::Child)> = (0..n)
        .map(|i| {
            let mut cmd = std::process::Command::new(&exe);
            cmd.args(&rest)
                .arg("--device")
                .arg(i.to_string())
                .arg("--json")
                .arg(dir.path().join(format!("{i}.json")))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            cmd.spawn()
                .map(|c| (i, c))
                .map_err(|e| CliError::internal(format!("starting a child for device {i}: {e}")))
        })
        .collect::<Result<_, _>>()?;
    let names: Vec<String> = Context::list()
        .map(|l| l.into_iter().map(|d| d.name).collect())
        .unwrap_or_default();
    let mut reports = Vec::new();
    let mut code = 0;
    for (i, child) in children {
        let out = child
            .wait_with_output()
            .map_err(|e| CliError::internal(format!("device {i}: {e}")))?;
        let c = out.status.code().unwrap_or(EXIT_INTERNAL);
        code = code.max(c);
        let name = names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("device {i}"));
        let json: Json = std::fs::read_to_string(dir.path().join(format!("{i}.json")))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| {
                serde_json::json!({
                    "device": {"name": name},
                    "error": format!("exit {c}: {}", String::from_utf8_lossy(&out.stderr).trim()),
                })
            });
        reports.push(json);
    }
    Ok(Gathered { reports, code })
}

/// Writes the gathered reports as one JSON file: the command and `devices`.
pub(crate) fn write_json(path: &Path, argv: &[String], reports: &[Json]) -> Result<(), CliError> {
    let all = serde_json::json!({
        "command": std::iter::once("lockstep".to_string())
            .chain(argv.iter().skip(1).cloned())
            .collect::<Vec<_>>()
            .join(" "),
        "devices": reports,
    });
    crate::files::write_atomic(
        path,
        &(serde_json::to_string_pretty(&all).unwrap_or_default() + "\n"),
    )
    .map_err(|e| CliError::internal(format!("writing {}: {e}", path.display())))
}

/// The command's result: the text, failing with the worst child's code.
pub fn finish(text: String, code: i32) -> Result<String, CliError> {
    match code {
        0 => Ok(text),
        c => Err(CliError {
            code: c,
            message: text,
        }),
    }
}

/// The examples these items' documentation showed, as tests: the module is crate-private, so
/// they run here rather than as doc-tests.
#[cfg(test)]
mod examples {
    #[test]
    fn device_choice_example() {
        use crate::cli::devices_all::DeviceChoice;
        assert_eq!("all".parse::<DeviceChoice>(), Ok(DeviceChoice::All));
        assert_eq!("1".parse::<DeviceChoice>(), Ok(DeviceChoice::Index(1)));
        assert!("gpu".parse::<DeviceChoice>().is_err());
    }
}
