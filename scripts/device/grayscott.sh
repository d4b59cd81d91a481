#!/usr/bin/env bash
# Gray-Scott on the GPU machine (issue 4): agreement of every gpu variant with the reference, then
# the benchmarks at 8192×8192 (every variant × workgroup size, subgroup size 32, with the
# compute-shader copy ceiling) and at the course's 2048×1024. Prints markdown tables for
# docs/grayscott.md. Ran in 146 s on an H200.
#
# Prepare on the build machine, from the repository root (see docs/grayscott.md, "NVIDIA H200 results"):
#   ../shared/device/prepare.sh --tests          # .gl/ (Vulkan loader), .dev/lockstep, .dev/test-*
#   cargo bench --bench grayscott --no-run       # prints "Executable benches/grayscott.rs (PATH)"
#   cp PATH .dev/bench-grayscott
# then run on the device with carry [".gl", ".dev"]:
#   bash scripts/device/grayscott.sh
#
# QUICK=1 shrinks every size (a dry run of the script itself, e.g. on lavapipe).
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -n "${QUICK:-}" ]; then
  BIG=256x256 BIG_STEPS=4 SMALL=128x64 SMALL_STEPS=4 SQ=64 P1=61 P2=67 N_IMG=2
else
  BIG=8192x8192 BIG_STEPS=100 SMALL=2048x1024 SMALL_STEPS=512 SQ=1024 P1=1009 P2=1021 N_IMG=0
fi

if [ -d .gl ] && [ -z "${GRAYSCOTT_NO_LOADER:-}" ]; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  export VK_DRIVER_FILES="${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}"
fi

LOCKSTEP=.dev/lockstep
BENCH=.dev/bench-grayscott
# Full logs go where the device tool collects files ($OUT), else into .dev/.
LOGS="${OUT:-.dev}"
mkdir -p "$LOGS"
status=0
start=$(date +%s)
echo "# Gray-Scott device run, $(date -u +%Y-%m-%dT%H:%MZ)"
if [ ! -x "$LOCKSTEP" ]; then
  echo "missing $LOCKSTEP: run ../shared/device/prepare.sh first" >&2
  exit 2
fi
"$LOCKSTEP" devices | head -8

echo
echo "## Agreement with the reference (tolerance 1e-4, checked after every image)"
echo
echo "| variant | workgroup | domain | steps | max abs difference | result |"
echo "| --- | --- | --- | --- | --- | --- |"
agree() { # variant workgroup rows cols steps images
  local out rc
  out=$("$LOCKSTEP" grayscott --backend gpu --variant "$1" --workgroup-size "$2" \
    --rows "$3" --cols "$4" --steps "$5" --images "$6" --check --no-output 2>&1)
  rc=$?
  local diff
  diff=$(printf '%s\n' "$out" | sed -n 's/^check: *max |Δ| vs reference = \(.*\) over.*/\1/p')
  if [ $rc -eq 0 ]; then
    echo "| $1 | $2 | $3×$4 | $(( $5 * $6 )) | ${diff:-?} | agree |"
  else
    status=1
    echo "| $1 | $2 | $3×$4 | $(( $5 * $6 )) | ${diff:-?} | FAILED (exit $rc) |"
    printf '%s\n' "$out" | tail -3 | sed 's/^/    /' >&2
  fi
}
# 500 steps (the tolerance's limit) on a square and on a domain of primes (no multiple of any
# per-subgroup or per-workgroup output), at small and large workgroups.
for v in naive subgroup-1d subgroup-stacked subgroup-shared; do
  if [ "$v" = naive ]; then wgs="16x16 32x8"; else wgs="64 1024"; fi
  for wg in $wgs; do
    agree "$v" "$wg" $SQ $SQ 50 $(( N_IMG ? N_IMG : 10 ))
    agree "$v" "$wg" $P1 $P2 100 $(( N_IMG ? N_IMG : 5 ))
  done
done

# The proptest agreement tests and the requirement checks on this device (subgroup size 32).
tests=$(ls .dev/test-suite-* 2>/dev/null | head -1)
if [ -n "$tests" ]; then
  echo
  echo "## tests/grayscott.rs on this device"
  # grayscott::gpu:: only: the CLI tests look for a cargo target directory that is not here.
  "$tests" grayscott::gpu:: > "$LOGS/grayscott-tests.log" 2>&1 || status=1
  grep -E "^test |test result" "$LOGS/grayscott-tests.log"
else
  echo "(no .dev/test-suite-*: run prepare.sh with --tests to include the test binary)"
fi

if [ ! -x "$BENCH" ]; then
  echo "missing $BENCH: copy the path printed by 'cargo bench --bench grayscott --no-run'" >&2
  exit 2
fi
criterion=(--bench --warm-up-time 1 --measurement-time 2 --sample-size 10 --noplot)
export CRITERION_HOME=.dev/criterion

echo
echo "## Benchmarks at ${BIG/x/×}, $BIG_STEPS steps per iteration, subgroup size ${SUBGROUP:-32}"
GRAYSCOTT_DOMAINS=$BIG GRAYSCOTT_STEPS=$BIG_STEPS GRAYSCOTT_BACKENDS=gpu-ceiling,gpu \
  GRAYSCOTT_SUBGROUPS=${SUBGROUP:-32} GRAYSCOTT_WORKGROUPS=64,128,256,512,1024 \
  GRAYSCOTT_NAIVE_WORKGROUPS=8x8,16x8,16x16,32x16,32x32 \
  "$BENCH" "${criterion[@]}" > "$LOGS/grayscott-bench-8192.log" 2>&1 || status=1
grep -E "^\||^skipped|^device" "$LOGS/grayscott-bench-8192.log"

echo
echo "## Benchmarks at ${SMALL/x/×} (the course's domain: 32 MB, fits the GPU's L2), $SMALL_STEPS steps per iteration"
GRAYSCOTT_DOMAINS=$SMALL GRAYSCOTT_STEPS=$SMALL_STEPS GRAYSCOTT_BACKENDS=gpu-ceiling,gpu \
  GRAYSCOTT_SUBGROUPS=${SUBGROUP:-32} GRAYSCOTT_WORKGROUPS=128,256,512 \
  GRAYSCOTT_NAIVE_WORKGROUPS=16x16,32x16 \
  "$BENCH" "${criterion[@]}" > "$LOGS/grayscott-bench-2048x1024.log" 2>&1 || status=1
grep -E "^\||^skipped" "$LOGS/grayscott-bench-2048x1024.log"

echo
echo "total: $(( $(date +%s) - start )) s, status $status"
exit $status
