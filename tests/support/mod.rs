//! Helpers shared by the model tests.
#![allow(dead_code)]

use lockstep::model::*;

pub fn size(n: u64) -> SubgroupSize {
    SubgroupSize::new(n).unwrap()
}

pub fn call(op: &str, n: u64, args: Args) -> OpCall {
    OpCall::new(lookup(op).unwrap(), size(n), args).unwrap()
}

pub fn with_delta(d: u32) -> Args {
    Args {
        delta: Some(LaneArg::Uniform(d)),
        ..Args::default()
    }
}

pub fn with_id(i: u32) -> Args {
    Args {
        id: Some(LaneArg::Uniform(i)),
        ..Args::default()
    }
}

pub fn with_ballot(b: u128) -> Args {
    Args {
        ballot: Some(Ballot(b)),
        ..Args::default()
    }
}

pub fn with_cluster(c: u64) -> Args {
    Args {
        cluster: Some(c),
        ..Args::default()
    }
}

/// Evaluates with u32 lane values.
pub fn eval_u32(c: &OpCall, active: u128, vals: &[u32]) -> Vec<Outcome> {
    let v: Vec<[u32; 1]> = vals.iter().map(|&x| [x]).collect();
    evaluate_typed(c, LaneMask(active), &v).unwrap()
}

/// Evaluates with f32 lane values.
pub fn eval_f32(c: &OpCall, active: u128, vals: &[f32]) -> Vec<Outcome> {
    let v: Vec<[f32; 1]> = vals.iter().map(|&x| [x]).collect();
    evaluate_typed(c, LaneMask(active), &v).unwrap()
}

/// Evaluates an op without a value operand.
pub fn eval_none(c: &OpCall, active: u128) -> Vec<Outcome> {
    evaluate(c, LaneMask(active), &[]).unwrap()
}

pub fn u32_of(o: &Outcome) -> u32 {
    o.value().expect("defined").component_bits(0) as u32
}

pub fn f32_of(o: &Outcome) -> f32 {
    f32::from_bits(o.value().expect("defined").component_bits(0) as u32)
}

pub fn bool_of(o: &Outcome) -> bool {
    o.value().expect("defined").component_bits(0) != 0
}

pub fn ballot_of(o: &Outcome) -> u128 {
    let v = o.value().expect("defined");
    let w = v.bits();
    Ballot::from_words([w[0] as u32, w[1] as u32, w[2] as u32, w[3] as u32]).0
}

pub fn reason(o: &Outcome) -> Reason {
    match o {
        Outcome::Undefined(r) => *r,
        other => panic!("expected undefined, got {other:?}"),
    }
}

/// The default Vulkan device for a device test. Without one the test *fails* — `./test` installs
/// lavapipe, so every machine that runs the suite has a device — unless
/// `LOCKSTEP_SKIP_DEVICE_TESTS` is set, which skips it with a note on stderr. Never a silent skip.
#[cfg(feature = "vulkan")]
pub fn device() -> Option<lockstep::vulkan::Context> {
    match lockstep::vulkan::Context::new(None) {
        Ok(c) => Some(c),
        Err(e) if std::env::var_os("LOCKSTEP_SKIP_DEVICE_TESTS").is_some() => {
            eprintln!("skipping a device test (LOCKSTEP_SKIP_DEVICE_TESTS): {e}");
            None
        }
        Err(e) => panic!(
            "{e}\n(./test installs lavapipe; set LOCKSTEP_SKIP_DEVICE_TESTS=1 to skip device tests)"
        ),
    }
}

/// [`device`], created once per test binary.
#[cfg(feature = "vulkan")]
pub fn shared_device() -> Option<&'static lockstep::vulkan::Context> {
    static CTX: std::sync::OnceLock<Option<lockstep::vulkan::Context>> = std::sync::OnceLock::new();
    CTX.get_or_init(device).as_ref()
}

/// The `lockstep` binary of this build run as a child process, with the assertions the tests make
/// on how it ended (what `assert_cmd` gave; cargo tells an integration test the binary's path).
pub mod cmd {
    use std::process::Output;

    /// `Command::cargo_bin("lockstep")` on a [`std::process::Command`]: the binary, stdin empty.
    pub trait CargoBin: Sized {
        /// The binary `name` of this package (only `lockstep` is there).
        fn cargo_bin(name: &str) -> Result<Self, String>;
    }

    impl CargoBin for std::process::Command {
        fn cargo_bin(name: &str) -> Result<Self, String> {
            match name {
                "lockstep" => {
                    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_lockstep"));
                    c.stdin(std::process::Stdio::null());
                    Ok(c)
                }
                other => Err(format!("this package has no binary {other}")),
            }
        }
    }

    /// `.assert()` on a command: runs it to the end, its output kept for the checks.
    pub trait Assertions {
        /// Runs the command, waiting for it.
        fn assert(&mut self) -> Assert;
    }

    impl Assertions for std::process::Command {
        fn assert(&mut self) -> Assert {
            let out = self
                .output()
                .unwrap_or_else(|e| panic!("{self:?} did not start: {e}"));
            Assert(out)
        }
    }

    /// How a command ended, with its output.
    pub struct Assert(Output);

    impl Assert {
        fn shown(&self) -> String {
            format!(
                "exit {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                self.0.status.code(),
                String::from_utf8_lossy(&self.0.stdout),
                String::from_utf8_lossy(&self.0.stderr)
            )
        }

        /// It exited with status 0.
        #[track_caller]
        pub fn success(self) -> Self {
            assert!(
                self.0.status.success(),
                "expected success: {}",
                self.shown()
            );
            self
        }

        /// It exited with status `code`.
        #[track_caller]
        pub fn code(self, code: i32) -> Self {
            assert_eq!(self.0.status.code(), Some(code), "{}", self.shown());
            self
        }

        /// Its output.
        pub fn get_output(&self) -> &Output {
            &self.0
        }
    }
}
