#!/usr/bin/env bash
# The Gray-Scott shaders of shaders/grayscott/ through `lockstep run`: the very modules the GPU
# runs, on the model (maximal reconvergence, lane by lane) and on the device, every element of U
# and V compared (issue 9 §6). 254×126 cells (padded 256×128) of random U and V; workgroup counts
# generous (extra workgroups find no cell and return). Runs on lavapipe as it is; on the GPU machine
# with carry [".gl", ".dev"] (LOCKSTEP=.dev/lockstep).
set -uo pipefail
cd "$(dirname "$0")/../.."
if ls .gl/*.deb >/dev/null 2>&1 && [ -n "${NVIDIA:-}" ]; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  export VK_DRIVER_FILES="${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}"
fi
L="${LOCKSTEP:-target/release/lockstep}"
N=32768
common=(--spec 2=256 --spec 3=128 --buffer 0=random:f32:$N:1 --buffer 1=random:f32:$N:2
  --buffer 2=zeros:f32:$N --buffer 3=zeros:f32:$N --mode maximal)
for v in subgroup_1d:8,128 subgroup_stacked:64,128 subgroup_shared:64,128; do
  echo "## ${v%%:*}"
  "$L" run shaders/grayscott/${v%%:*}.comp --spec 0=128 --workgroups ${v##*:} "${common[@]}" 2>&1 | grep -v "^device:"
  echo "exit ${PIPESTATUS[0]}"
done
echo "## naive"
"$L" run shaders/grayscott/naive.comp --spec 0=16 --spec 1=16 --workgroups 16,8 "${common[@]}" 2>&1 | grep -v "^device:"
echo "exit ${PIPESTATUS[0]}"
