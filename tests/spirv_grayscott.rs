//! The Gray-Scott shaders of `shaders/grayscott/` run by the SPIR-V interpreter: the very modules
//! the GPU runs, lane by lane on the model.
#![cfg(feature = "vulkan")]
use crate::spirv_support;
use lockstep::grayscott::layout::{Shape, Tiling as GsLayout};
use lockstep::grayscott::{reference, Domain, Fields, Padded, Params};
use lockstep::model::SubgroupSize;
use lockstep::reconverge::Mode;
use lockstep::spirv::*;
use spirv_support::*;

struct Out {
    fields: Fields,
    undefined: Vec<String>,
    findings: Vec<String>,
}

fn run(
    variant: &str,
    layout: GsLayout,
    s: u32,
    wg: u32,
    domain: Domain,
    mode: Mode,
    input: &Fields,
) -> Out {
    let words = glsl_file(&format!("shaders/grayscott/{variant}.comp"));
    run_words(&words, layout, s, wg, domain, mode, input)
}

/// The specialization constants every Gray-Scott kernel takes (params.glsl): the workgroup width,
/// the padded domain and the parameters.
/// The shader's four buffers: `input`'s fields padded, the outputs NaN.
pub(crate) fn buffers(input: &Fields) -> Vec<BufferInput> {
    let u = Padded::from_array(&input.u);
    let v = Padded::from_array(&input.v);
    let nan = vec![f32::NAN; u.data.len()];
    [&u.data, &v.data, &nan, &nan]
        .iter()
        .enumerate()
        .map(|(i, d)| BufferInput {
            set: 0,
            binding: i as u32,
            bytes: bytes_f32(d),
            ..Default::default()
        })
        .collect()
}

/// The domain and workgroup width the decode-time passes' Gray-Scott comparisons use.
pub(crate) const SMALL: (usize, usize, u32) = (12, 40, 32);

/// The `subgroup_1d` shader decoded `ks.len()` ways runs one step of [`SMALL`] under the base and
/// maximal models at subgroup sizes 8 and 16: the reports must be the same to the letter.
pub(crate) fn same_reports_small(what: &str, ks: &[&Kernel]) {
    let domain = Domain::new(SMALL.0, SMALL.1).unwrap();
    let bufs = buffers(&Fields::initial(domain));
    for mode in [Mode::Base, Mode::Maximal] {
        for s in [8u32, 16] {
            let [gx, gy] = Shape::new(GsLayout::OneD, s, SMALL.2).unwrap().grid(domain);
            let mut cfg = RunConfig::new(SubgroupSize::new(s as u64).unwrap(), [gx, gy, 1]);
            cfg.mode = mode;
            let reports: Vec<String> = ks
                .iter()
                .map(|k| report(&run_model(k, cfg.clone(), &bufs, None).unwrap()))
                .collect();
            for (i, r) in reports.iter().enumerate().skip(1) {
                assert_eq!(
                    &reports[0], r,
                    "{what}: {mode:?}, subgroup {s}, decoding {i}"
                );
            }
        }
    }
}

/// [`spec`] for [`SMALL`].
pub(crate) fn spec_small() -> Vec<(u32, SpecInput)> {
    spec(SMALL.2, Domain::new(SMALL.0, SMALL.1).unwrap())
}

pub(crate) fn spec(wg: u32, domain: Domain) -> Vec<(u32, SpecInput)> {
    let p = Params::default();
    vec![
        (0, SpecInput::Bits(wg as u64)),
        (2, SpecInput::Bits(domain.padded_cols() as u64)),
        (3, SpecInput::Bits(domain.padded_rows() as u64)),
        (4, SpecInput::Bits(p.feed.to_bits() as u64)),
        (5, SpecInput::Bits(p.kill.to_bits() as u64)),
        (6, SpecInput::Bits(p.dt.to_bits() as u64)),
        (7, SpecInput::Bits(p.du.to_bits() as u64)),
        (8, SpecInput::Bits(p.dv.to_bits() as u64)),
    ]
}

fn decode_with(words: &[u32], spec: Vec<(u32, SpecInput)>) -> Kernel {
    decode(
        words,
        &DecodeOptions {
            spec,
            ..Default::default()
        },
    )
    .unwrap()
}

/// `groups` workgroups at subgroup size `s`, row-major lanes.
fn config(s: u32, mode: Mode, groups: [u32; 2]) -> RunConfig {
    let mut c = RunConfig::new(
        SubgroupSize::new(s as u64).unwrap(),
        [groups[0], groups[1], 1],
    );
    c.mode = mode;
    c
}

fn run_words(
    words: &[u32],
    layout: GsLayout,
    s: u32,
    wg: u32,
    domain: Domain,
    mode: Mode,
    input: &Fields,
) -> Out {
    let k = decode_with(words, spec(wg, domain));
    assert_eq!(k.local_size, [wg, 1, 1]);
    let shape = Shape::new(layout, s, wg).unwrap();
    let [gx, gy] = shape.grid(domain);
    let bufs = buffers(input);
    let cfg = config(s, mode, [gx, gy]);
    let r = run_model(&k, cfg, &bufs, None).unwrap();
    let mut undefined = Vec::new();
    let w = domain.padded_cols();
    let mut out = [Padded::zeros(domain), Padded::zeros(domain)];
    for (fi, b) in r.buffers.iter().filter(|b| b.binding >= 2).enumerate() {
        out[fi].data = f32s(&b.bytes);
        for row in 0..domain.rows() {
            for col in 0..domain.cols() {
                let i = (row + 1) * w + col + 1;
                match r.status(b.word_taint(i)) {
                    WordStatus::Exact | WordStatus::Inexact => {}
                    other => undefined.push(format!(
                        "cell ({row}, {col}) of binding {}: {other:?}",
                        b.binding
                    )),
                }
            }
        }
    }
    let findings = r.findings.iter().map(|f| r.finding_text(f)).collect();
    let [ou, ov] = out;
    Out {
        fields: Fields {
            u: ou.to_array(),
            v: ov.to_array(),
        },
        undefined,
        findings,
    }
}

fn input(domain: Domain) -> Fields {
    // One step of the reference from the initial condition, so that U and V are both non-zero
    // around the seed rectangle.
    let f = Fields::initial(domain);
    reference::step_clear(&Params::default(), &f)
}

#[test]
fn subgroup_1d_under_maximal_reconvergence_matches_the_reference_at_every_size() {
    let domain = Domain::new(7, 45).unwrap();
    let inp = input(domain);
    let want = reference::step_clear(&Params::default(), &inp);
    for s in [4u32, 8, 16, 32, 64, 128] {
        let out = run(
            "subgroup_1d",
            GsLayout::OneD,
            s,
            128,
            domain,
            Mode::Maximal,
            &inp,
        );
        assert!(
            out.undefined.is_empty(),
            "S={s}: {:?}",
            &out.undefined[..out.undefined.len().min(3)]
        );
        assert!(out.findings.is_empty(), "S={s}: {:?}", out.findings);
        let d = out.fields.max_abs_diff(&want);
        assert!(d.value <= 1e-6, "S={s}: {d}");
    }
}

#[test]
fn stacked_and_shared_match_the_reference_under_maximal_reconvergence() {
    let domain = Domain::new(7, 45).unwrap();
    let inp = input(domain);
    let want = reference::step_clear(&Params::default(), &inp);
    for (v, l) in [
        ("subgroup_stacked", GsLayout::Stacked),
        ("subgroup_shared", GsLayout::Shared),
    ] {
        for s in [4u32, 8, 16, 32, 64, 128] {
            let out = run(v, l, s, 4 * s, domain, Mode::Maximal, &inp);
            assert!(
                out.undefined.is_empty(),
                "{v} S={s}: {:?}",
                out.undefined.first()
            );
            assert!(out.findings.is_empty(), "{v} S={s}: {:?}", out.findings);
            let d = out.fields.max_abs_diff(&want);
            assert!(d.value <= 1e-6, "{v} S={s}: {d}");
        }
    }
}

#[test]
fn under_base_and_sucf_the_early_return_leaves_the_last_workgroups_shuffles_unpinned() {
    // subgroup_1d returns early for lanes past the data (`if (... >= data_end_pos()) return;`).
    // In the partial last workgroup that return diverges, and neither base Vulkan nor sucf
    // guarantees which invocations then run the later subgroupShuffleUp/Down together (only
    // maximal reconvergence does): the model names the shuffle and the construct.
    let domain = Domain::new(7, 45).unwrap();
    let inp = input(domain);
    for mode in [Mode::Base, Mode::Sucf] {
        let out = run("subgroup_1d", GsLayout::OneD, 8, 32, domain, mode, &inp);
        assert!(!out.undefined.is_empty(), "{mode}");
        let first = &out.undefined[0];
        assert!(
            first.contains("subgroupShuffle")
                && first.contains(&format!("not pinned down under {mode}")),
            "{mode}: {first}"
        );
    }
}

#[test]
fn a_variant_without_border_lanes_is_reported_with_its_chain() {
    // The broken variant of the course (GRAYSCOTT.md, "no border"): every lane of a subgroup
    // produces an output, so lane 0 takes its left neighbour from subgroupShuffleUp(x, 1) —
    // undefined by GL_KHR_shader_subgroup (delta > gl_SubgroupInvocationID) — and the last lane
    // its right one from subgroupShuffleDown(x, 1) (past the subgroup).
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "params.glsl",
        "common.glsl",
        "subgroup.glsl",
        "subgroup_1d.comp",
    ] {
        let text = std::fs::read_to_string(format!("shaders/grayscott/{f}")).unwrap();
        let text = text.replace("const uint BORDER_SIZE = 1;", "const uint BORDER_SIZE = 0;");
        std::fs::write(dir.path().join(f), text).unwrap();
    }
    let words = glsl_file(dir.path().join("subgroup_1d.comp").to_str().unwrap());
    let domain = Domain::new(7, 45).unwrap();
    let inp = input(domain);
    let out = run_words(&words, GsLayout::OneD, 8, 32, domain, Mode::Maximal, &inp);
    assert!(!out.undefined.is_empty());
    assert!(
        out.undefined
            .iter()
            .any(|u| u.contains("subgroupShuffleUp subgroup.glsl:")),
        "{:?}",
        &out.undefined[..3]
    );
    assert!(
        out.undefined
            .iter()
            .any(|u| u.contains("subgroupShuffleDown subgroup.glsl:")),
        "{:?}",
        &out.undefined[..3]
    );
}

/// The four shaders through `lockstep run`, model (maximal) against the default device (lavapipe
/// here): every cell of U and V compared, nothing undefined (issue 9 §6; the same on the H100 in
/// docs/results/interpreter-h100.md, `scripts/device/grayscott-run.sh`).
#[test]
fn the_four_shaders_agree_with_the_device_through_lockstep_run() {
    if std::env::var("LOCKSTEP_SKIP_DEVICE_TESTS").is_ok() {
        eprintln!("LOCKSTEP_SKIP_DEVICE_TESTS set: no device run");
        return;
    }
    let n = 64 * 32;
    let common = [
        "--spec".to_string(),
        "2=64".into(),
        "--spec".into(),
        "3=32".into(),
        "--buffer".into(),
        format!("0=random:f32:{n}:1"),
        "--buffer".into(),
        format!("1=random:f32:{n}:2"),
        "--buffer".into(),
        format!("2=zeros:f32:{n}"),
        "--buffer".into(),
        format!("3=zeros:f32:{n}"),
        "--mode".into(),
        "maximal".into(),
    ];
    for (shader, local, groups) in [
        ("subgroup_1d", vec!["--spec", "0=64"], "8,32"),
        ("subgroup_stacked", vec!["--spec", "0=64"], "32,32"),
        ("subgroup_shared", vec!["--spec", "0=64"], "32,32"),
        ("naive", vec!["--spec", "0=8", "--spec", "1=8"], "8,4"),
    ] {
        let out = <std::process::Command as crate::support::cmd::CargoBin>::cargo_bin("lockstep")
            .unwrap()
            .arg("run")
            .arg(format!("shaders/grayscott/{shader}.comp"))
            .args(&local)
            .args(["--workgroups", groups])
            .args(&common)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{shader}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("PASS (model and device agree; nothing undefined reached a buffer)"),
            "{shader}: {stdout}"
        );
        // Every cell of the 62×30 domain written: 1,860 inexact (computed) elements per output.
        assert!(
            stdout.contains("binding 2  f32   2048      188    1860"),
            "{shader}: {stdout}"
        );
    }
}

/// An interleaved-storage kernel (`common_uv.glsl`: binding 0 in, binding 1 out, one `(U, V)` pair
/// per cell, row stride [`gpu::uv_pitch`]) on the interpreter: `extra` specialization constants
/// beside the domain's, `groups` workgroups of `wg` lanes.
#[allow(clippy::too_many_arguments)]
fn run_uv(
    variant: &str,
    extra: &[(u32, u32)],
    s: u32,
    wg: u32,
    groups: [u32; 2],
    domain: Domain,
    mode: Mode,
    input: &Fields,
) -> Out {
    use lockstep::grayscott::gpu;
    let words = glsl_file(&format!("shaders/grayscott/{variant}.comp"));
    let pitch = gpu::uv_pitch(domain);
    let mut spec = spec(wg, domain);
    spec.push((11, SpecInput::Bits(pitch as u64)));
    spec.extend(extra.iter().map(|&(id, v)| (id, SpecInput::Bits(v as u64))));
    let k = decode_with(&words, spec);
    let (u, v) = (Padded::from_array(&input.u), Padded::from_array(&input.v));
    let w = domain.padded_cols();
    let mut uv = vec![0f32; 2 * pitch * domain.padded_rows()];
    for row in 0..domain.padded_rows() {
        for col in 0..w {
            uv[2 * (row * pitch + col)] = u.data[row * w + col];
            uv[2 * (row * pitch + col) + 1] = v.data[row * w + col];
        }
    }
    let nan = vec![f32::NAN; uv.len()];
    let bufs = vec![
        BufferInput {
            set: 0,
            binding: 0,
            bytes: bytes_f32(&uv),
            ..Default::default()
        },
        BufferInput {
            set: 0,
            binding: 1,
            bytes: bytes_f32(&nan),
            ..Default::default()
        },
    ];
    let cfg = config(s, mode, groups);
    let r = run_model(&k, cfg, &bufs, None).unwrap();
    let b = r.buffers.iter().find(|b| b.binding == 1).unwrap();
    let got = f32s(&b.bytes);
    let mut undefined = Vec::new();
    let mut out = [Padded::zeros(domain), Padded::zeros(domain)];
    for row in 0..domain.rows() {
        for col in 0..domain.cols() {
            let cell = (row + 1) * pitch + col + 1;
            for (fi, o) in out.iter_mut().enumerate() {
                let i = 2 * cell + fi;
                o.data[(row + 1) * w + col + 1] = got[i];
                match r.status(b.word_taint(i)) {
                    WordStatus::Exact | WordStatus::Inexact => {}
                    other => undefined.push(format!("cell ({row}, {col}) field {fi}: {other:?}")),
                }
            }
        }
    }
    let findings = r.findings.iter().map(|f| r.finding_text(f)).collect();
    let [ou, ov] = out;
    Out {
        fields: Fields {
            u: ou.to_array(),
            v: ov.to_array(),
        },
        undefined,
        findings,
    }
}

#[test]
fn stacked_uv_matches_the_reference_at_every_size() {
    // The one-step kernel on interleaved storage, the very module the H100 benchmark runs.
    let domain = Domain::new(7, 45).unwrap();
    let inp = input(domain);
    let want = reference::step_clear(&Params::default(), &inp);
    for s in [4u32, 8, 16, 32, 64, 128] {
        let wg = 4 * s;
        let groups = Shape::new(GsLayout::Stacked, s, wg).unwrap().grid(domain);
        let out = run_uv(
            "subgroup_stacked_uv",
            &[],
            s,
            wg,
            groups,
            domain,
            Mode::Maximal,
            &inp,
        );
        assert!(
            out.undefined.is_empty(),
            "S={s}: {:?}",
            out.undefined.first()
        );
        assert!(out.findings.is_empty(), "S={s}: {:?}", out.findings);
        let d = out.fields.max_abs_diff(&want);
        assert!(d.value <= 1e-6, "S={s}: {d}");
    }
}

#[test]
fn the_tile_kernel_is_proven_by_the_interpreter_at_every_size_and_step_count() {
    // Issue 12 §2: the several-steps-per-pass kernel (shaders/grayscott/subgroup_tile.comp), the
    // very SPIR-V the GPU runs, lane by lane: after one dispatch of T steps every data cell is
    // defined — no undefined shuffle result (lanes 0 and S−1 have no left/right source) reaches a
    // written cell — and equals T steps of the reference. T = 1 is the sliding window, T = 2..4 the
    // wavefront, T ≥ 5 the register array; the domain (23 × 45) leaves partial tiles at the right
    // and the bottom.
    use lockstep::grayscott::gpu::Tile;
    let domain = Domain::new(23, 45).unwrap();
    let p = Params::default();
    let inp = input(domain);
    let mut cases = 0;
    for (s, steps, rows) in [
        (4u32, 1u32, 3u32),
        (8, 1, 10),
        (32, 1, 16),
        (128, 1, 8),
        (8, 2, 10),
        (16, 3, 12),
        (32, 3, 16),
        (64, 2, 8),
        (16, 4, 9),
        (32, 4, 40),
        (16, 5, 12),
        (32, 6, 16),
    ] {
        let tile = Tile { steps, rows };
        tile.check(s).unwrap();
        let n = 2;
        let groups = tile.grid(domain, s, n);
        let extra = [(9, steps), (10, rows)];
        let out = run_uv(
            "subgroup_tile",
            &extra,
            s,
            n * s,
            groups,
            domain,
            Mode::Maximal,
            &inp,
        );
        let mut want = inp.clone();
        for _ in 0..steps {
            want = reference::step_clear(&p, &want);
        }
        let case = format!("S={s} T={steps} R={rows}");
        assert!(
            out.undefined.is_empty(),
            "{case}: {:?}",
            out.undefined.first()
        );
        assert!(out.findings.is_empty(), "{case}: {:?}", out.findings);
        let d = out.fields.max_abs_diff(&want);
        assert!(d.value <= 1e-6, "{case}: {d}");
        cases += 1;
    }
    assert_eq!(cases, 12);
}
