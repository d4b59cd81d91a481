#!/usr/bin/env bash
# Issue 5 on the GPU machine: >= 10,000 random programs per reconvergence mode (maximal, sucf, base)
# and the two seed 001 kernels under every mode, each with a JSON report; about 95 s per mode on an
# H200 (MAX_SECONDS bounds each random run: the whole script needs one device call of ~5 minutes, or
# one call per mode with MODES=…).
#
# Here: ../shared/device/prepare.sh            (release binaries in .dev/, Vulkan loader in .gl/)
#       [optional: ../shared/device/prepare.sh --tests   to also run the device tests there]
# Then the `device` tool, from the repo root:
#   carry:   [".gl", ".dev"]
#   command: bash scripts/device/reconverge.sh
# Reports land in $OUT/reconverge/ (the device tool's $OUT; ./out without it): <mode>.json and .txt
# for the random programs, seed001-<mode>.json and seed001-fixed-<mode>.json, devices.txt,
# summary.txt. Environment: PROGRAMS (default 10000), SEED (default 20261121), BATCH (programs per
# shader; default: lockstep's for the device),
# MODES (default "maximal sucf base"), MAX_SECONDS per random run (default 120), KERNELS (default
# "seed001 seed001-fixed"; empty skips them), TESTS (default 1; 0 skips the device tests).
set -uo pipefail
cd "$(dirname "$0")/../.."
if ls .gl/*.deb >/dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
export VK_DRIVER_FILES="${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}"
out="${OUT:-out}/reconverge"
mkdir -p "$out"
bin=.dev/lockstep
programs="${PROGRAMS:-10000}"
seed="${SEED:-20261121}"
batch_args=()
[ -n "${BATCH:-}" ] && batch_args=(--batch "$BATCH")
summary="$out/summary.txt"
modes="${MODES:-maximal sucf base}"
max_seconds="${MAX_SECONDS:-120}"
kernels="${KERNELS-seed001 seed001-fixed}"
: >> "$summary"
t0=$(date +%s)
note() { echo "$*" | tee -a "$summary"; }

note "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
"$bin" devices > "$out/devices.txt" 2>&1
head -3 "$out/devices.txt" | tee -a "$summary"

# Random programs: one run per mode. --max-seconds stops starting new batches in time; the report
# says how many programs ran.
for mode in $modes; do
  s=$(date +%s)
  "$bin" reconverge --mode "$mode" --programs "$programs" --seed "$seed" "${batch_args[@]}" \
    --max-seconds "$max_seconds" --json "$out/$mode.json" > "$out/$mode.txt" 2>&1
  rc=$?
  note "random $mode: exit $rc in $(( $(date +%s) - s )) s"
  grep -E "^(programs run|seed|reconverge:)" "$out/$mode.txt" | tee -a "$summary"
done

# Seed 001: the original kernel and the fixed one, under every mode (256 random needs_space masks).
for kernel in $kernels; do
  for mode in maximal sucf base; do
    s=$(date +%s)
    "$bin" reconverge --kernel "$kernel" --mode "$mode" --programs 256 --seed "$seed" \
      --max-seconds 20 --json "$out/$kernel-$mode.json" > "$out/$kernel-$mode.txt" 2>&1
    rc=$?
    note "$kernel $mode: exit $rc in $(( $(date +%s) - s )) s"
    grep -E "^programs run" "$out/$kernel-$mode.txt" | tee -a "$summary"
  done
done

# The device tests of tests/reconverge.rs, if prepare.sh --tests copied them.
for t in .dev/test-suite-*; do
  [ -x "$t" ] && [ "${TESTS:-1}" != 0 ] || continue
  s=$(date +%s)
  timeout 60 "$t" reconverge::device:: > "$out/tests.txt" 2>&1
  note "tests/reconverge.rs device tests: exit $? in $(( $(date +%s) - s )) s"
  tail -3 "$out/tests.txt" | tee -a "$summary"
done
note "total: $(( $(date +%s) - t0 )) s"
