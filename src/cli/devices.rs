//! `lockstep devices`: every Vulkan device and its subgroup capabilities.

use crate::cli::CliError;
use crate::vulkan::{Context, DeviceInfo, VkError};

/// Arguments of `lockstep devices`.
#[derive(clap::Args, Debug)]
pub struct DevicesArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Maps a Vulkan error to the CLI's exit codes (2 for no loader/device, 64 for work that does
/// not fit the module).
///
/// ```
/// use lockstep::cli::{devices::vk_error, EXIT_NO_DEVICE, EXIT_USAGE};
/// use lockstep::vulkan::VkError;
/// assert_eq!(vk_error(VkError::NoDevice(String::new())).code, EXIT_NO_DEVICE);
/// assert_eq!(vk_error(VkError::Input("binding 0.1 is missing".into())).code, EXIT_USAGE);
/// ```
pub fn vk_error(e: VkError) -> CliError {
    if e.is_no_device() {
        CliError::no_device(e)
    } else if matches!(e, VkError::Input(_)) {
        CliError::usage(e)
    } else {
        CliError::internal(e)
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// lavapipe fixes its subgroup size per process from its vector width: the other sizes it offers
/// and how to get each (measured with Mesa 22.3: 128 bits give 4, 256 give 8, 512 give 16).
fn lavapipe_sizes(d: &DeviceInfo) -> String {
    if !d.name.contains("llvmpipe") {
        return String::new();
    }
    let now = std::env::var("LP_NATIVE_VECTOR_WIDTH").unwrap_or_default();
    let all = [(4, "128"), (8, "256"), (16, "512")];
    let other: Vec<String> = all
        .iter()
        .filter(|(s, _)| *s != d.capabilities.subgroup_size)
        .map(|(s, w)| format!("{s} with LP_NATIVE_VECTOR_WIDTH={w}"))
        .collect();
    format!(
        "; lavapipe also gives {} (set before the process starts{})",
        other.join(", "),
        if now.is_empty() {
            String::new()
        } else {
            format!("; now {now}")
        }
    )
}

/// One device as text.
pub fn describe(d: &DeviceInfo) -> String {
    let c = &d.capabilities;
    let types: Vec<&str> = [
        (c.int8, "int8"),
        (c.int16, "int16"),
        (c.int64, "int64"),
        (c.float16, "float16"),
        (c.float64, "float64"),
    ]
    .into_iter()
    .filter(|t| t.0)
    .map(|t| t.1)
    .collect();
    let mut s = format!("[{}] {} ({})\n", d.index, d.name, d.device_type);
    let rows = [
        ("API version", d.api_version.clone()),
        ("driver", d.driver.clone()),
        (
            "subgroup size",
            format!(
                "{} (min {}, max {}){}",
                c.subgroup_size,
                c.min_subgroup_size,
                c.max_subgroup_size,
                lavapipe_sizes(d)
            ),
        ),
        ("size control (compute)", yes(c.size_control).into()),
        ("full subgroups", yes(c.full_subgroups).into()),
        (
            "max workgroup subgroups",
            c.max_workgroup_subgroups.to_string(),
        ),
        ("subgroup stages", c.stages.join(", ")),
        ("operations", c.ops.names().join(", ")),
        ("rotate", yes(c.ops.rotate).into()),
        ("clustered rotate", yes(c.ops.rotate_clustered).into()),
        ("maximal reconvergence", yes(c.maximal_reconvergence).into()),
        (
            "subgroup uniform control flow",
            yes(c.subgroup_uniform_control_flow).into(),
        ),
        (
            "subgroup extended types",
            yes(c.subgroup_extended_types).into(),
        ),
        (
            "shader types",
            if types.is_empty() {
                "-".into()
            } else {
                types.join(", ")
            },
        ),
    ];
    for (k, v) in rows {
        s += &format!("    {k:<30} {v}\n");
    }
    s
}

/// Runs `lockstep devices`.
///
/// Needs a Vulkan loader and device, so the example is compiled but not run by the tests:
///
/// ```no_run
/// use lockstep::cli::devices::{run, DevicesArgs};
/// let json = run(&DevicesArgs { json: true }).map_err(|e| e.message)?;
/// let devices: serde_json::Value = serde_json::from_str(&json).unwrap();
/// println!("{} device(s)", devices.as_array().map_or(0, |d| d.len()));
/// # Ok::<(), String>(())
/// ```
pub fn run(a: &DevicesArgs) -> Result<String, CliError> {
    let list = Context::list().map_err(vk_error)?;
    if a.json {
        return Ok(serde_json::to_string_pretty(&list).unwrap_or_default() + "\n");
    }
    Ok(list.iter().map(describe).collect::<Vec<_>>().join("\n"))
}
