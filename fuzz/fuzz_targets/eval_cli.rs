//! Fuzz target 3: the argument parsing of `lockstep eval` must never panic, whatever argv it gets.
//!
//! argv is assembled from the fuzz input as a sequence of tokens: known flags, op names, numbers
//! and masks that reach deep into validation, and raw strings; `lockstep::cli::run` must return
//! Ok or Err (a usage error), never panic.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;

const FLAGS: &[&str] = &[
    "--size",
    "--type",
    "--active",
    "--values",
    "--id",
    "--delta",
    "--mask",
    "--cluster",
    "--index",
    "--ballot",
    "--workgroup",
    "--layout",
    "--json",
    "--help",
];
const WORDS: &[&str] = &[
    "shuffle",
    "shuffle_xor",
    "shuffle_up",
    "shuffle_down",
    "broadcast",
    "broadcast_first",
    "elect",
    "ballot",
    "inverse_ballot",
    "ballot_bit_extract",
    "ballot_bit_count",
    "ballot_find_lsb",
    "ballot_find_msb",
    "clustered_add",
    "clustered_max",
    "quad_broadcast",
    "quad_swap_diagonal",
    "rotate",
    "clustered_rotate",
    "add",
    "exclusive_mul",
    "inclusive_min",
    "all_equal",
    "num_subgroups",
    "subgroup_id",
    "subgroupShuffleDown",
    "subgroupClusteredXor",
    "u32",
    "i8x3",
    "f16x2",
    "f64",
    "bool",
    "boolx4",
    "u64x4",
    "vec3",
    "ivec2",
    "0",
    "1",
    "2",
    "3",
    "4",
    "7",
    "8",
    "16",
    "31",
    "32",
    "64",
    "127",
    "128",
    "129",
    "255",
    "4294967295",
    "4294967296",
    "-1",
    "0x",
    "0xff",
    "0xffffffffffffffffffffffffffffffff",
    "0x1ffffffffffffffffffffffffffffffff",
    "nan",
    "-inf",
    "inf",
    "0x7fc00001",
    "-0",
    "1:2",
    "1:2:3:4",
    "true",
    "false",
    "1,2,3",
    "0,0,0,0,0,0,0,0",
    "3,5,7",
    "8,8",
    "0,1",
    "row-major",
    "column-major",
    "quads",
    "zyx",
    "",
    ",",
    ":",
    "_",
    "1e400",
];

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mut argv = vec!["lockstep".to_string(), "eval".to_string()];
    while !u.is_empty() && argv.len() < 32 {
        let tok = match u.int_in_range(0u8..=4).unwrap_or(0) {
            0 | 1 => FLAGS[u.choose_index(FLAGS.len()).unwrap_or(0)].to_string(),
            2 | 3 => WORDS[u.choose_index(WORDS.len()).unwrap_or(0)].to_string(),
            _ => {
                // A list of a random length, or a raw string.
                if u.arbitrary::<bool>().unwrap_or(false) {
                    let n = u.int_in_range(0usize..=130).unwrap_or(0);
                    let w = WORDS[u.choose_index(WORDS.len()).unwrap_or(0)];
                    vec![w; n].join(",")
                } else {
                    u.arbitrary::<String>().unwrap_or_default()
                }
            }
        };
        argv.push(tok);
    }
    if std::env::var_os("LOCKSTEP_FUZZ_PRINT").is_some() {
        eprintln!("{argv:?}");
    }
    let _ = lockstep::cli::run(&argv);
});
