#!/usr/bin/env bash
# Gray-Scott speed on the GPU machine (issue 12, §2), one call of at most 8 minutes:
#   1. agreement with the reference of the new kernels (interleaved stacked, register tiles at
#      T = 1..4 steps per pass), 500 steps each, tolerance 1e-4;
#   2. the gpu:: tests of tests/grayscott.rs on this device (if the test binary is there);
#   3. ONE benchmark process at 8192×8192 sweeping every copy ceiling × the one-step kernels ×
#      the tile kernel's workgroup size, steps per pass T and rows per lane R, each against the
#      fastest copy of the same process (the ceiling), then a shorter sweep at 2048×1024.
# Prints markdown tables for docs/grayscott.md; full logs go to $OUT (else .dev/).
#
# Prepare on the build machine, from the repository root:
#   ../shared/device/prepare.sh --tests          # .gl/ (Vulkan loader), .dev/lockstep, .dev/test-*
#   cargo bench --bench grayscott --no-run       # prints "Executable benches/grayscott.rs (PATH)"
#   cp PATH .dev/bench-grayscott && strip .dev/*
# then run on the device with carry [".gl", ".dev"]:
#   bash scripts/device/grayscott-speed.sh
#
# QUICK=1 shrinks every size and SUBGROUP=8 limits T to 1..3 (a dry run, e.g. on lavapipe).
# TS_OVERRIDE, RS_OVERRIDE, WGS_OVERRIDE (the tile sweep), STACKED_WGS_OVERRIDE and
# AGREE_TILES_OVERRIDE replace those lists; SMALL_SWEEP=0 skips the 2048×1024 sweep.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -n "${QUICK:-}" ]; then
  BIG=256x256 BIG_STEPS=12 SMALL=128x64 SMALL_STEPS=12 P1=61 P2=67 STEPS_PER_IMAGE=5 IMAGES=2
  TS="1,2,3" RS="8,16" WGS="64" SMALL_WGS="64" STACKED_WGS="64" CRIT=(--warm-up-time 0.2 --measurement-time 0.3)
  AGREE_TILES="subgroup-tile-t1-r8 subgroup-tile-t2-r16 subgroup-tile-t3-r16"
else
  # 120 steps per iteration: a multiple of every T swept, so no pass runs a remainder kernel.
  BIG=8192x8192 BIG_STEPS=120 SMALL=2048x1024 SMALL_STEPS=480 P1=1009 P2=1021 STEPS_PER_IMAGE=50 IMAGES=10
  TS="1,2,3,4,6" RS="8,64,128" WGS="64,256" SMALL_WGS="64" STACKED_WGS="128,256,512"
  CRIT=(--warm-up-time 1 --measurement-time 2)
  AGREE_TILES="subgroup-tile-t1-r8 subgroup-tile-t2-r64 subgroup-tile-t3-r128 subgroup-tile-t4-r128 subgroup-tile-t6-r32"
fi
TS=${TS_OVERRIDE:-$TS} RS=${RS_OVERRIDE:-$RS} WGS=${WGS_OVERRIDE:-$WGS}
STACKED_WGS=${STACKED_WGS_OVERRIDE:-$STACKED_WGS} AGREE_TILES=${AGREE_TILES_OVERRIDE:-$AGREE_TILES}

if [ -d .gl ] && [ -z "${GRAYSCOTT_NO_LOADER:-}" ]; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  export VK_DRIVER_FILES="${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}"
fi

LOCKSTEP=.dev/lockstep
BENCH=.dev/bench-grayscott
LOGS="${OUT:-.dev}"
mkdir -p "$LOGS"
status=0
start=$(date +%s)
echo "# Gray-Scott speed run, $(date -u +%Y-%m-%dT%H:%MZ)"
for f in "$LOCKSTEP" "$BENCH"; do
  if [ ! -x "$f" ]; then
    echo "missing $f: see the top of this script" >&2
    exit 2
  fi
done
"$LOCKSTEP" devices | head -8

echo
echo "## Agreement with the reference (tolerance 1e-4, checked after every image)"
echo
echo "| variant | workgroup | domain | steps | max abs difference | result |"
echo "| --- | --- | --- | --- | --- | --- |"
agree() { # variant workgroup rows cols
  local out rc diff
  out=$(timeout 120 "$LOCKSTEP" grayscott --backend gpu --variant "$1" --workgroup-size "$2" \
    --rows "$3" --cols "$4" --steps $STEPS_PER_IMAGE --images $IMAGES --check --no-output 2>&1)
  rc=$?
  diff=$(printf '%s\n' "$out" | sed -n 's/^check: *max |Δ| vs reference = \(.*\) over.*/\1/p')
  if [ $rc -eq 0 ]; then
    echo "| $1 | $2 | $3×$4 | $(( STEPS_PER_IMAGE * IMAGES )) | ${diff:-?} | agree |"
  else
    status=1
    echo "| $1 | $2 | $3×$4 | $(( STEPS_PER_IMAGE * IMAGES )) | ${diff:-?} | FAILED (exit $rc) |"
    printf '%s\n' "$out" | tail -3 | sed 's/^/    /' >&2
  fi
}
# A domain of primes: no multiple of any per-subgroup or per-workgroup output.
agree subgroup-stacked-uv 256 $P1 $P2
for v in $AGREE_TILES; do
  agree "$v" 128 $P1 $P2
done

tests=$(ls .dev/test-suite-* 2>/dev/null | head -1)
if [ -n "$tests" ]; then
  echo
  echo "## tests/grayscott.rs on this device"
  timeout 180 "$tests" grayscott::gpu:: > "$LOGS/grayscott-tests.log" 2>&1 || status=1
  grep -E "^test |test result" "$LOGS/grayscott-tests.log"
else
  echo "(no .dev/test-suite-*: run prepare.sh with --tests to include the test binary)"
fi
echo
echo "(agreement and tests: $(( $(date +%s) - start )) s)"

export CRITERION_HOME=.dev/criterion
criterion=(--bench "${CRIT[@]}" --sample-size 10 --noplot)

echo
echo "## Sweep at ${BIG/x/×}, $BIG_STEPS steps per iteration, subgroup size ${SUBGROUP:-32} (one process)"
GRAYSCOTT_DOMAINS=$BIG GRAYSCOTT_STEPS=$BIG_STEPS GRAYSCOTT_BACKENDS=gpu-ceiling,gpu \
  GRAYSCOTT_SUBGROUPS=${SUBGROUP:-32} GRAYSCOTT_WORKGROUPS=$WGS \
  GRAYSCOTT_VARIANTS=naive,subgroup-tile GRAYSCOTT_NAIVE_WORKGROUPS=32x16 \
  GRAYSCOTT_TILE_STEPS=$TS GRAYSCOTT_TILE_ROWS=$RS \
  GRAYSCOTT_EXTRA="subgroup-stacked@$STACKED_WGS;subgroup-stacked-uv@$STACKED_WGS" \
  timeout 330 "$BENCH" "${criterion[@]}" > "$LOGS/grayscott-speed-8192.log" 2>&1 || status=1
grep -E "^\||^skipped|^GPU|ceiling on" "$LOGS/grayscott-speed-8192.log"
echo "(elapsed: $(( $(date +%s) - start )) s)"

if [ "${SMALL_SWEEP:-1}" = 0 ]; then
  echo "total: $(( $(date +%s) - start )) s, status $status"
  exit $status
fi
echo
echo "## Sweep at ${SMALL/x/×} (the course's domain, fits the L2), $SMALL_STEPS steps per iteration"
GRAYSCOTT_DOMAINS=$SMALL GRAYSCOTT_STEPS=$SMALL_STEPS GRAYSCOTT_BACKENDS=gpu-ceiling,gpu \
  GRAYSCOTT_SUBGROUPS=${SUBGROUP:-32} GRAYSCOTT_WORKGROUPS=$SMALL_WGS \
  GRAYSCOTT_VARIANTS=subgroup-tile GRAYSCOTT_TILE_STEPS=$TS GRAYSCOTT_TILE_ROWS=$RS \
  GRAYSCOTT_EXTRA="subgroup-stacked@256;subgroup-stacked-uv@256" \
  timeout 120 "$BENCH" "${criterion[@]}" > "$LOGS/grayscott-speed-2048x1024.log" 2>&1 || status=1
grep -E "^\||^skipped|ceiling on" "$LOGS/grayscott-speed-2048x1024.log"

echo
echo "total: $(( $(date +%s) - start )) s, status $status"
exit $status
