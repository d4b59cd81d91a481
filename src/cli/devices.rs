//! `lockstep devices`: every Vulkan device and its subgroup capabilities.

use crate::cli::CliError;
use crate::vulkan::{Context, DeviceInfo, VkError};

/// Arguments of `lockstep devices`.
#[derive(clap::Args, Debug)]
pub struct DevicesArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Probe how each device places the invocations of common workgroup shapes in subgroups, at
    /// every subgroup size it offers (the layout `lockstep run` gives the model).
    #[arg(long, conflicts_with = "json")]
    pub layouts: bool,
}

/// Maps a Vulkan error to the CLI's exit codes (2 for no loader/device, 64 for work that does
/// not fit the module).
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

/// Workgroup shapes `--layouts` probes: 1D, 2D and 3D, widths that are and are not multiples of
/// the subgroup size.
pub(crate) const PROBED_SHAPES: &[[u32; 3]] = &[
    [64, 1, 1],
    [100, 1, 1],
    [8, 8, 1],
    [16, 16, 1],
    [8, 4, 1],
    [4, 8, 1],
    [3, 5, 7],
    [5, 3, 1],
    [4, 4, 4],
    [2, 2, 16],
];

/// `--layouts`: one row per device, subgroup size and shape.
fn layouts(list: &[DeviceInfo]) -> Result<String, CliError> {
    let mut rows = vec![[
        "device",
        "size",
        "workgroup",
        "model layout that matches",
        "note",
    ]
    .map(String::from)
    .to_vec()];
    for d in list {
        let ctx = Context::new(Some(d.index)).map_err(vk_error)?;
        for r in layout_rows(&ctx) {
            let mut row = vec![format!("[{}] {}", d.index, d.name)];
            row.extend(r);
            rows.push(row);
        }
    }
    Ok(crate::text::table(&rows))
}

/// The device's lane layouts, probed ([`crate::kernel::run::probe_layout`]) for every shape of
/// [`PROBED_SHAPES`] at every subgroup size it offers: rows of (size, workgroup, the model layout
/// that matches or a description of the device's own, note).
pub(crate) fn layout_rows(ctx: &Context) -> Vec<Vec<String>> {
    let c = &ctx.caps;
    let sizes: Vec<u32> = if c.size_control {
        (0..8)
            .map(|k| 1u32 << k)
            .filter(|n| (c.min_subgroup_size..=c.max_subgroup_size).contains(n))
            .collect()
    } else {
        vec![c.subgroup_size]
    };
    let mut rows = Vec::new();
    for &size in &sizes {
        for &shape in PROBED_SHAPES {
            if shape.iter().product::<u32>() > c.max_workgroup_invocations {
                continue;
            }
            let (layout, note) = match crate::kernel::run::probe_layout(ctx, shape, size) {
                Ok(p) => {
                    let l = match (&p.layout, &p.placements) {
                        (crate::model::LaneOrder::Device, Some(pl)) => {
                            let mut per: std::collections::BTreeMap<u32, u32> = Default::default();
                            for x in pl.iter() {
                                *per.entry(x.subgroup).or_default() += 1;
                            }
                            let mut sizes: std::collections::BTreeMap<u32, u32> =
                                Default::default();
                            for n in per.values() {
                                *sizes.entry(*n).or_default() += 1;
                            }
                            let parts: Vec<String> = sizes
                                .iter()
                                .rev()
                                .map(|(lanes, k)| format!("{k} of {lanes} lanes"))
                                .collect();
                            format!("none: the device's own, subgroups {}", parts.join(" + "))
                        }
                        (l, _) => l.to_string(),
                    };
                    (l, p.note.unwrap_or_default())
                }
                Err(e) => ("-".to_string(), e.to_string()),
            };
            rows.push(vec![
                size.to_string(),
                format!("{}x{}x{}", shape[0], shape[1], shape[2]),
                layout,
                note,
            ]);
        }
    }
    rows
}

/// Runs `lockstep devices`.
///
/// Needs a Vulkan loader and device, so the example is compiled but not run by the tests:
pub fn run(a: &DevicesArgs) -> Result<String, CliError> {
    let list = Context::list().map_err(vk_error)?;
    if a.layouts {
        return layouts(&list);
    }
    if a.json {
        return Ok(serde_json::to_string_pretty(&list).unwrap_or_default() + "\n");
    }
    Ok(list.iter().map(describe).collect::<Vec<_>>().join("\n"))
}

/// The examples these items' documentation showed, as tests: the module is crate-private, so
/// they run here rather than as doc-tests.
#[cfg(test)]
mod examples {
    #[test]
    fn vk_error_example() {
        use crate::cli::{devices::vk_error, EXIT_NO_DEVICE, EXIT_USAGE};
        use crate::vulkan::VkError;
        assert_eq!(
            vk_error(VkError::NoDevice(String::new())).code,
            EXIT_NO_DEVICE
        );
        assert_eq!(
            vk_error(VkError::Input("binding 0.1 is missing".into())).code,
            EXIT_USAGE
        );
    }

    /// Compiled, not run (it needs a device).
    #[allow(dead_code)]
    fn run_example() -> Result<(), String> {
        use crate::cli::devices::{run, DevicesArgs};
        let json = run(&DevicesArgs {
            json: true,
            layouts: false,
        })
        .map_err(|e| e.message)?;
        let devices: serde_json::Value = serde_json::from_str(&json).unwrap();
        println!("{} device(s)", devices.as_array().map_or(0, |d| d.len()));
        Ok::<(), String>(())
    }
}
