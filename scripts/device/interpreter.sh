#!/usr/bin/env bash
# Users' kernels on the GPU machine (issues 9 and 10), one device call of a few minutes:
#   1. the Vulkan CTS subgroup-uniform-control-flow Amber tests in .dev/cts/ (copy the folders you
#      have there: ../shared/cts-amber-small/*.amber → .dev/cts/), on the device and on the model
#      under the mode each declares, then on the model under every mode;
#   2. examples/*.amber on the device and the model (every mode);
#   3. `lockstep run` on examples/*.comp and on the Gray-Scott subgroup_1d shader, model vs device.
# Reports (JSON, JUnit, logs) go to $OUT (else .dev/out).
#
# Prepare on the build machine, from the repository root:
#   ../shared/device/prepare.sh && mkdir -p .dev/cts && cp ../shared/cts-amber-small/*.amber .dev/cts/
#   strip .dev/lockstep
# then run on the device with carry [".gl", ".dev"]:
#   bash scripts/device/interpreter.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
if ls .gl/*.deb >/dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  export VK_DRIVER_FILES="${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}"
fi
L="${LOCKSTEP:-.dev/lockstep}"
out="${OUT:-.dev/out}"
mkdir -p "$out"
date -u
"$L" devices | head -20

echo "## CTS: device + model (declared mode)"
n=$(ls .dev/cts/*.amber 2>/dev/null | wc -l)
echo "$n files"
/usr/bin/time -f "%e s" "$L" amber .dev/cts/*.amber --json "$out/cts-device.json" --junit "$out/cts-device.xml" > "$out/cts-device.txt" 2>&1
echo "exit $?"; grep -E "^\.dev/cts/.*: " "$out/cts-device.txt" | sed 's/^\.dev\/cts\///' | cut -c1-200
tail -2 "$out/cts-device.txt"
for m in maximal sucf base; do
  echo "## CTS: model, $m"
  /usr/bin/time -f "%e s" "$L" amber .dev/cts/*.amber --model-only --mode "$m" --subgroup-size 32 --json "$out/cts-model-$m.json" > "$out/cts-model-$m.txt" 2>&1
  echo "exit $?"; tail -2 "$out/cts-model-$m.txt"
done

echo "## examples/*.amber, --mode all"
"$L" amber examples/*.amber --mode all --json "$out/examples.json" 2>&1 | tee "$out/examples.txt" | grep -E "amber: |files:"

echo "## lockstep run"
"$L" run examples/max_reduce.comp --buffer 0=series:u32:512 --buffer 1=zeros:u32:1 --workgroups 4 --json "$out/run-max.json"; echo "exit $?"
"$L" run examples/allocation.comp --buffer 0=zeros:u32:1 --buffer 1=values:u32:1,0,1,1,0,0,1,0 --buffer 2=zeros:u32:8; echo "exit $?"
"$L" run examples/shuffle_down_edge.comp --buffer 0=series:f32:16 --buffer 1=zeros:f32:16 --json "$out/run-shuffle.json"; echo "exit $?"
# Gray-Scott subgroup_1d at 510x254 cells (padded 512x256), workgroup 128, random U and V.
"$L" run shaders/grayscott/subgroup_1d.comp --spec 0=128 --spec 2=512 --spec 3=256 \
  --buffer 0=random:f32:131072:1 --buffer 1=random:f32:131072:2 \
  --buffer 2=zeros:f32:131072 --buffer 3=zeros:f32:131072 --workgroups 6,256 \
  --mode maximal --json "$out/run-grayscott.json"; echo "exit $?"
date -u
