//! The `lockstep` command line: argument parsing and the commands, on top of the library.
//!
//! Exit codes: 0 success; 1 a comparison found a mismatch; 2 no Vulkan loader or device;
//! 64 bad input (usage); 70 a device or internal error.

pub(crate) mod amber;
#[cfg(feature = "vulkan")]
pub(crate) mod conform;
#[cfg(feature = "vulkan")]
pub(crate) mod devices;
#[cfg(feature = "vulkan")]
pub(crate) mod devices_all;
pub(crate) mod docs;
#[cfg(test)]
mod docs_tests;
pub(crate) mod eval;
pub(crate) mod grayscott;
pub(crate) mod merge;
pub(crate) mod ops;
#[cfg(feature = "vulkan")]
pub(crate) mod reconverge;
#[cfg(feature = "vulkan")]
pub(crate) mod report;
pub(crate) mod run;

pub use amber::exit_code;
#[cfg(test)]
pub(crate) use docs::command_output;

use clap::{Parser, Subcommand};

/// Exit code for bad user input (sysexits EX_USAGE).
///
/// ```
/// let argv = ["lockstep", "eval", "shuffle_down", "--size", "12", "--delta", "1"].map(String::from);
/// let e = lockstep::cli::run(&argv).unwrap_err();
/// assert_eq!(e.code, 64);
/// assert!(e.message.contains("power of two"), "{}", e.message);
/// ```
pub(crate) const EXIT_USAGE: i32 = 64;
/// Exit code when no Vulkan loader or device is available.
pub(crate) const EXIT_NO_DEVICE: i32 = 2;
/// Exit code when a comparison failed.
pub(crate) const EXIT_MISMATCH: i32 = 1;
/// Exit code for a device or internal error (sysexits EX_SOFTWARE).
pub(crate) const EXIT_INTERNAL: i32 = 70;

/// An error at the CLI edge, with the exit code it maps to.
///
/// ```
/// use lockstep::cli::CliError;
/// assert_eq!(CliError::no_device("no Vulkan loader").code, 2);
/// let e = CliError::internal("pipeline creation failed");
/// assert_eq!((e.code, e.message.as_str()), (70, "pipeline creation failed"));
/// ```
#[derive(Debug)]
pub struct CliError {
    /// process exit code
    pub code: i32,
    /// one-line message (may have extra lines of context)
    pub message: String,
}

impl CliError {
    /// Bad input (exit 64).
    pub fn usage(message: impl std::fmt::Display) -> Self {
        CliError {
            code: EXIT_USAGE,
            message: message.to_string(),
        }
    }
    /// No device (exit 2).
    pub fn no_device(message: impl std::fmt::Display) -> Self {
        CliError {
            code: EXIT_NO_DEVICE,
            message: message.to_string(),
        }
    }
    /// Device or internal failure (exit 70).
    pub fn internal(message: impl std::fmt::Display) -> Self {
        CliError {
            code: EXIT_INTERNAL,
            message: message.to_string(),
        }
    }
}

impl From<crate::model::ModelError> for CliError {
    fn from(e: crate::model::ModelError) -> Self {
        CliError::usage(e)
    }
}

impl From<crate::model::TypeError> for CliError {
    fn from(e: crate::model::TypeError) -> Self {
        CliError::usage(e)
    }
}

/// lockstep: what exactly does this subgroup operation do, and does my GPU do it?
///
/// ```
/// use clap::Parser;
/// use lockstep::cli::{Cli, Command};
/// let cli = Cli::try_parse_from(["lockstep", "ops", "--category", "quad"]).unwrap();
/// assert!(matches!(cli.command, Command::Ops(ref a) if a.category.as_deref() == Some("quad")));
/// ```
#[derive(Parser, Debug)]
#[command(name = "lockstep", version, about, long_about = None)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
///
/// ```
/// use clap::Parser;
/// use lockstep::cli::{Cli, Command};
/// let cli = Cli::try_parse_from(["lockstep", "docs", "--check"]).unwrap();
/// assert!(matches!(cli.command, Command::Docs(ref a) if a.check));
/// ```
#[derive(Subcommand, Debug)]
pub enum Command {
    /// List every operation of the catalogue (name, category, arguments, types, required feature).
    Ops(ops::OpsArgs),
    /// Evaluate one operation on one subgroup with the reference model, lane by lane.
    Eval(Box<eval::EvalArgs>),
    /// List every Vulkan device with its subgroup capabilities.
    #[cfg(feature = "vulkan")]
    Devices(devices::DevicesArgs),
    /// Run every operation, type and subgroup size the device allows and compare each lane with the model.
    #[cfg(feature = "vulkan")]
    Conform(Box<conform::ConformArgs>),
    /// Generate docs/semantics/*.md from the model (every table evaluated), or check them (--check).
    Docs(docs::DocsArgs),
    /// Run the Gray-Scott simulation (reference, model or gpu backend): pictures, final fields, throughput.
    Grayscott(Box<grayscott::GrayScottArgs>),
    /// Run random structured programs (or the seed 001 kernels) on a device under a reconvergence
    /// model and compare every result the model defines; a failure is shrunk and shown as GLSL.
    #[cfg(feature = "vulkan")]
    Reconverge(reconverge::ReconvergeArgs),
    /// Run AmberScript compute tests (the Vulkan CTS format) on the device and on the model; every
    /// EXPECT checked per run (pass, fail, or undefined on the model, with the reason).
    Amber(Box<amber::AmberArgs>),
    /// Run your own compute shader (GLSL, SPIR-V, assembly, WGSL) lane by lane on the model and on
    /// the device; every output element compared or explained.
    Run(Box<run::RunArgs>),
    /// Merge the JSON reports of a run's shards into one (JSON, JUnit, markdown), with a baseline
    /// of expected failures and a flakes list.
    Merge(Box<merge::MergeArgs>),
    /// One page (markdown and HTML) on a device: subgroup properties, conformance per size, known
    /// deviations, what it returns where the spec says undefined, reconvergence, lane layouts.
    #[cfg(feature = "vulkan")]
    Report(Box<report::ReportArgs>),
}

/// Parses `argv` (including the program name) and runs the command; returns what to print on stdout.
///
/// ```
/// let argv = ["lockstep", "eval", "elect", "--size", "4", "--active", "0xc"].map(String::from);
/// let out = lockstep::cli::run(&argv).unwrap();
/// assert!(out.contains("result | - - true false"), "{out}");
/// ```
pub fn run(argv: &[String]) -> Result<String, CliError> {
    let cli = match Cli::try_parse_from(argv) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Ok(e.to_string()),
                _ => Err(CliError::usage(e.to_string().trim_end())),
            };
        }
    };
    match cli.command {
        Command::Ops(a) => ops::run(&a),
        Command::Eval(a) => eval::run(&a),
        #[cfg(feature = "vulkan")]
        Command::Devices(a) => devices::run(&a),
        #[cfg(feature = "vulkan")]
        Command::Conform(a) => conform::run(&a, argv),
        Command::Docs(a) => docs::run(&a),
        Command::Grayscott(a) => grayscott::run(&a),
        #[cfg(feature = "vulkan")]
        Command::Reconverge(a) => reconverge::run_cmd(&a),
        Command::Amber(a) => amber::run(&a),
        Command::Run(a) => run::run(&a, argv),
        Command::Merge(a) => merge::run(&a),
        #[cfg(feature = "vulkan")]
        Command::Report(a) => report::run(&a),
    }
}

/// The binary's entry point: runs, prints, and returns the exit code.
pub fn main() -> i32 {
    separate_lavapipe_cache();
    let argv: Vec<String> = std::env::args().collect();
    match run(&argv) {
        Ok(out) => {
            print!("{out}");
            0
        }
        Err(e) => {
            let msg = e.message.trim_end();
            if msg.starts_with("error:") {
                eprintln!("{msg}");
            } else {
                eprintln!("error: {msg}");
            }
            e.code
        }
    }
}

/// lavapipe (Mesa 22.3) keys its on-disk shader cache without `LP_NATIVE_VECTOR_WIDTH`: a shader
/// compiled at one width is taken from the cache at another and runs at the old subgroup size
/// (seen here: a 64-wide workgroup run with `LP_NATIVE_VECTOR_WIDTH=512` ran in subgroups of 4
/// after a run at 128). So when that variable is set and the user has not chosen a cache folder
/// (`MESA_SHADER_CACHE_DIR`) or turned the cache off (`MESA_SHADER_CACHE_DISABLE`), each width gets a
/// cache folder of its own: `$XDG_CACHE_HOME` (or `~/.cache`)`/lockstep-lavapipe-width-N`. Called
/// first thing in `main`, before any thread exists.
fn separate_lavapipe_cache() {
    let Ok(width) = std::env::var("LP_NATIVE_VECTOR_WIDTH") else {
        return;
    };
    if std::env::var_os("MESA_SHADER_CACHE_DIR").is_some()
        || std::env::var_os("MESA_SHADER_CACHE_DISABLE").is_some()
    {
        return;
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")));
    if let Some(base) = base {
        let width: String = width
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect();
        let dir = base.join(format!("lockstep-lavapipe-width-{width}"));
        // Mesa makes the last folder only; without it, it runs with no cache at all.
        if std::fs::create_dir_all(&dir).is_ok() {
            // SAFETY: called first thing in `main`, before any thread exists (see above).
            unsafe { std::env::set_var("MESA_SHADER_CACHE_DIR", dir) };
        } else {
            // SAFETY: as above, no other thread exists yet.
            unsafe { std::env::set_var("MESA_SHADER_CACHE_DISABLE", "true") };
        }
    }
}
