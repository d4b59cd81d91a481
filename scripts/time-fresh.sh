#!/usr/bin/env bash
# Times the README's two commands as a new user meets them (issue 22): a fresh clone of this
# repository's HEAD, the five Debian packages `scripts/setup.sh` installs removed and apt's cache
# emptied (so that `./run` downloads and installs them), an empty cargo registry (`CARGO_HOME` a
# new folder), no `target/`, every Mesa shader cache cold. Then `./run` and `./test`, each timed.
#
# It removes packages and deletes caches of this machine: it runs only with `--yes`, as root.
# Logs: $OUT/run.log and $OUT/test.log (OUT defaults to /tmp/time-fresh).
set -uo pipefail
if [ "${1:-}" != "--yes" ] || [ "$(id -u)" -ne 0 ]; then
  echo "usage (as root): $0 --yes   — removes libshaderc-dev glslang-dev spirv-tools" \
    "mesa-vulkan-drivers libvulkan1 and the Mesa caches, then times ./run and ./test" >&2
  exit 64
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/time-fresh}
rm -rf "$out" && mkdir -p "$out/cargo"
git clone -q "$repo" "$out/clone" || exit 1
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq libshaderc-dev glslang-dev spirv-tools \
  mesa-vulkan-drivers libvulkan1 >/dev/null 2>&1
apt-get clean
rm -rf ~/.cache/mesa_shader_cache ~/.cache/lockstep-lavapipe-width-*
export CARGO_HOME="$out/cargo"
cd "$out/clone" || exit 1
echo "commit $(git rev-parse --short HEAD), start $(date -u +%FT%TZ)"
for cmd in run test; do
  s=$(date +%s)
  "./$cmd" >"$out/$cmd.log" 2>&1
  rc=$?
  echo "./$cmd: exit $rc, $(($(date +%s) - s)) s, end $(date -u +%FT%TZ)"
done
