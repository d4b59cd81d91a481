#!/usr/bin/env bash
# Issue 12 §4 on the GPU machine: how fast `lockstep reconverge` runs random programs, and where the
# time goes. Prints programs/s and values compared/s per configuration and per mode, as markdown
# tables for docs/reconvergence.md.
#
#   1. sweep (base mode, SWEEP_SECONDS each): every program compiled as itself (--variants 1) at
#      BATCHES programs per shader; then VARIANTS programs per shape (8) at SHAPES shapes per shader,
#      other variant counts (VARIANT_LIST) at the best for information, then with the best:
#      other context counts (logical devices), more threads, and NVIDIA's on-disk shader cache off
#      (__GL_SHADER_DISK_CACHE=0: every program is a new pipeline, so the cache only writes);
#      then, for information only, VK_PIPELINE_CREATE_DISABLE_OPTIMIZATION_BIT
#      (--no-driver-optimization; never chosen as the best: the device would run other code);
#   2. every mode (maximal, sucf, base) with the best configuration and seed SEED itself: up to
#      PROGRAMS programs or MODE_SECONDS seconds, JSON reports kept. With --variants 1 in BEST_ARGS
#      and 10,000 programs of seed 20261121 the values compared must equal those of the earlier
#      H100/H200 runs (docs/reconvergence.md): the same programs, compared as strictly;
#   3. if BEFORE names an older lockstep binary (e.g. .dev/lockstep-main, built from main before
#      this change), the same base run with it, for a before/after in one call.
# Every other run has its own seed (SEED+1, SEED+2, …, printed): the same programs twice would let
# the driver's shader cache serve the second run.
#
# Prepare on the build machine, from the repository root:
#   ../shared/device/prepare.sh                  # .gl/ (Vulkan loader), .dev/lockstep
#   [cp <main's target/release/lockstep> .dev/lockstep-main && strip .dev/*]   # optional, BEFORE
# then run on the device with carry [".gl", ".dev"]:
#   bash scripts/device/reconverge-speed.sh      # about 8 minutes with the defaults
#   BEFORE=.dev/lockstep-main bash scripts/device/reconverge-speed.sh
#
# Environment: SEED (20261121), SWEEP_SECONDS (15), MODE_SECONDS (60), PROGRAMS (10000),
# BATCHES ("1 4 16"), VARIANTS (8), SHAPES ("1 2 4 8"), VARIANT_LIST ("4 16 32"), MODES ("maximal sucf base"), BEFORE (unset), PHASES ("sweep modes
# before": a subset splits the script over several device calls), BEST_ARGS (the configuration for
# the modes when the sweep is skipped, e.g. "--batch 4 --contexts 2"), QUICK=1 (a dry run of the
# script itself on lavapipe: small numbers, no NVIDIA settings). Each device call may run 10
# minutes; the whole script takes about 8.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${QUICK:-}" ] && ls .gl/*.deb >/dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  export VK_DRIVER_FILES="${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}"
fi
bin="${LOCKSTEP:-.dev/lockstep}"
if [ ! -x "$bin" ]; then
  echo "missing $bin: run ../shared/device/prepare.sh first" >&2
  exit 2
fi
out="${OUT:-out}/reconverge-speed"
mkdir -p "$out"
base_seed="${SEED:-20261121}"
if [ -n "${QUICK:-}" ]; then
  export MESA_SHADER_CACHE_DISABLE=true
  sweep_s="${SWEEP_SECONDS:-3}"; mode_s="${MODE_SECONDS:-5}"; programs="${PROGRAMS:-40}"
  batches="${BATCHES:-1 2}"; shapes_list="${SHAPES:-1 2}"; variant_list="${VARIANT_LIST:-1 4}"
else
  sweep_s="${SWEEP_SECONDS:-15}"; mode_s="${MODE_SECONDS:-60}"; programs="${PROGRAMS:-10000}"
  batches="${BATCHES:-1 4 16}"; shapes_list="${SHAPES:-1 2 4 8}"; variant_list="${VARIANT_LIST:-4 16 32}"
fi
modes="${MODES:-maximal sucf base}"
status=0
t0=$(date +%s)

echo "# lockstep reconverge: speed, $(date -u +%Y-%m-%dT%H:%MZ)"
"$bin" devices 2>&1 | head -4
echo "cores: $(nproc)"

# One run: prints a table row; remembers programs/s in $rate. Arguments: label, mode, seconds,
# programs, then extra lockstep arguments; ENV (optional) is prefixed to the command. Every run
# gets its own seed (SEED+1, SEED+2, …; RUN_SEED overrides): a driver's on-disk shader cache must
# not serve a run the programs of an earlier one.
rate=0
runs=0
run() {
  local label=$1 mode=$2 secs=$3 n=$4
  shift 4
  runs=$(( runs + 1 ))
  local seed=${RUN_SEED:-$(( base_seed + runs ))}
  local log="$out/$(echo "$label-$mode" | tr -c 'A-Za-z0-9_.=-' _).txt"
  local TIMEFORMAT='%R %U %S' rc
  { time {
    env ${ENV:-} "$bin" reconverge --mode "$mode" --programs "$n" --seed "$seed" \
      --max-seconds "$secs" --json "${log%.txt}.json" "$@" > "$log" 2>&1
    echo $? > "$log.rc"
  }; } 2> "$log.time"
  rc=$(cat "$log.rc")
  local real user sys cpu
  read -r real user sys < <(tail -1 "$log.time")
  cpu=$(awk -v r="$real" -v u="$user" -v s="$sys" 'BEGIN { printf "%.0f s wall, CPU %.0f s = %.1f cores", r, u + s, (u + s) / r }')
  [ "$rc" -eq 0 ] || status=1
  local counts speed phases
  counts=$(sed -n 's/^programs run: \([0-9]*\).*operations compared: \([0-9]*\).*mismatches: \([0-9]*\).*/\1|\2|\3/p' "$log")
  speed=$(sed -n 's/^seed .* · \([0-9.]*\) s · \([0-9.]*\) programs\/s.*/\1|\2/p' "$log")
  phases=$(sed -n 's/.*summed over threads: //p' "$log")
  IFS='|' read -r ran compared mism <<< "${counts:-?|?|?}"
  IFS='|' read -r secs_run pps <<< "${speed:-0|0}"
  local vps
  vps=$(awk -v c="$compared" -v s="$secs_run" 'BEGIN { if (s > 0 && c ~ /^[0-9]+$/) printf "%.0f", c / s; else print "?" }')
  rate=$pps
  if grep -q unsupported "$log"; then
    echo "| $label | $mode | $seed | unsupported | | | | | $(sed -n 's/.*unsupported on [^:]*: //p' "$log") |"
  else
    echo "| $label | $mode | $seed | $ran | $compared | $mism | $secs_run | **$pps** / $vps | ${phases:--} (exit $rc; $cpu, start-up included) |"
  fi
}
header() {
  echo
  echo "| configuration | mode | seed | programs | values compared | mismatches | s | programs/s / values/s | time summed over threads |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
}
better() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }

phases=" ${PHASES:-sweep modes before} "
best_args=(); best_label="defaults"; best_env=""
if [ -n "${BEST_ARGS:-}" ]; then read -r -a best_args <<< "$BEST_ARGS"; best_label="$BEST_ARGS"; fi
if [[ $phases == *" sweep "* ]]; then
echo
echo "## 1. Sweep, base mode, ${sweep_s} s each (10^8 programs requested, stopped by --max-seconds)"
header
run "defaults (no options)" base "$sweep_s" 100000000
# Tiny programs (the fixed seed 001 kernel, ~10 statements) one per shader: the cost of a pipeline
# that has almost nothing to compile.
run "seed001-fixed kernel, batch 1" base "$sweep_s" 100000000 --kernel seed001-fixed --batch 1 --variants 1
# Every program compiled as itself (--variants 1: the loop before parameters were read from a
# buffer, the same GLSL and the same programs), programs per shader swept.
for b in $batches; do
  run "variants 1, batch $b" base "$sweep_s" 100000000 --variants 1 --batch "$b"
done
# Programs of one shape share a shader's code: shapes per shader swept at VARIANTS programs per
# shape (the CLI's default, 8), then other variant counts at the best, for information.
v0=${VARIANTS:-8}
best_shapes=${shapes_list%% *}; best=0
for k in $shapes_list; do
  run "variants $v0, $k shapes per shader" base "$sweep_s" 100000000 --variants "$v0" --batch $(( v0 * k ))
  if better "$rate" "$best"; then best=$rate; best_shapes=$k; fi
done
for v in $variant_list; do
  [ "$v" = "$v0" ] && continue
  run "variants $v, $best_shapes shapes per shader (information)" base "$sweep_s" 100000000 --variants "$v" --batch $(( v * best_shapes ))
done
best_args=(--variants "$v0" --batch $(( v0 * best_shapes )))
best_label="variants $v0, $best_shapes shapes per shader"
best_env=""
base_args=("${best_args[@]}"); base_label=$best_label
for c in 1 4 8; do
  run "$base_label, $c contexts" base "$sweep_s" 100000000 "${base_args[@]}" --contexts "$c"
  if better "$rate" "$best"; then best=$rate; best_args=("${base_args[@]}" --contexts "$c"); best_label="$base_label, $c contexts"; fi
done
threads=$(( $(nproc) * 2 ))
run "${best_label}, $threads threads" base "$sweep_s" 100000000 "${best_args[@]}" --threads "$threads"
if better "$rate" "$best"; then best=$rate; best_args+=(--threads "$threads"); best_label="$best_label, $threads threads"; fi
if [ -z "${QUICK:-}" ]; then
  ENV="__GL_SHADER_DISK_CACHE=0" run "${best_label}, __GL_SHADER_DISK_CACHE=0" base "$sweep_s" 100000000 "${best_args[@]}"
  if better "$rate" "$best"; then best=$rate; best_env="__GL_SHADER_DISK_CACHE=0"; best_label="$best_label, __GL_SHADER_DISK_CACHE=0"; fi
fi
# Measured, never chosen: the device would then run unoptimised code, unlike what kernels run.
ENV="$best_env" run "${best_label}, --no-driver-optimization" base "$sweep_s" 100000000 "${best_args[@]}" --no-driver-optimization
echo
echo "best: $best_label ($best programs/s)"
fi

if [[ $phases == *" modes "* ]]; then
echo
echo "## 2. Every mode with the best configuration: $programs programs or ${mode_s} s"
header
for mode in $modes; do
  ENV="$best_env" RUN_SEED=$base_seed run "$best_label" "$mode" "$mode_s" "$programs" "${best_args[@]}"
done
if [ "$base_seed" = 20261121 ] && [ "$programs" = 10000 ] && [[ " ${best_args[*]} " == *" --variants 1 "* ]]; then
  echo
  echo "Seed 20261121, 10,000 programs, earlier runs (docs/reconvergence.md): values compared"
  echo "maximal 5,926,819 · sucf 1,280,396 · base 914,980 — equal counts mean the same programs,"
  echo "compared as strictly (if a run stopped at the time limit, it ran fewer programs)."
fi
fi

if [[ $phases == *" before "* ]] && [ -n "${BEFORE:-}" ] && [ -x "${BEFORE}" ]; then
  echo
  echo "## 3. Before ($BEFORE) and after, base, each with its defaults, ${sweep_s} s each, same seed, shader caches off"
  header
  # The same programs for both (one seed), with the driver's on-disk shader caches off so that the
  # second run compiles everything too.
  cache_off="__GL_SHADER_DISK_CACHE=0 MESA_SHADER_CACHE_DISABLE=true"
  bin_saved=$bin; bin=$BEFORE
  ENV="$cache_off" RUN_SEED=$(( base_seed + 1000 )) run "before (defaults)" base "$sweep_s" 100000000
  bin=$bin_saved
  ENV="$cache_off" RUN_SEED=$(( base_seed + 1000 )) run "after (defaults)" base "$sweep_s" 100000000
fi
echo
echo "logs and JSON reports: $out"
echo "total: $(( $(date +%s) - t0 )) s, status $status"
exit $status
