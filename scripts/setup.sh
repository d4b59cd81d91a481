#!/usr/bin/env bash
# Installs what lockstep needs on Debian/Ubuntu if it is missing: shaderc, glslang and SPIRV-Tools as
# the distribution's static libraries (linked by build.rs; nothing of them is compiled here), a C
# toolchain to link, the Vulkan loader and Mesa's lavapipe driver, and Rust. With
# LOCKSTEP_SHADERC_FROM_SOURCE=1 it installs cmake and python3 instead, for the `shaderc-from-source`
# feature (systems without those packages). Safe to run repeatedly; uses sudo when not root.
set -euo pipefail
need=()
pkgs=(g++ make pkg-config mesa-vulkan-drivers libvulkan1 ca-certificates curl)
if [ "${LOCKSTEP_SHADERC_FROM_SOURCE:-0}" = 1 ]; then
  pkgs+=(cmake python3)
else
  pkgs+=(libshaderc-dev glslang-dev spirv-tools)
fi
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "setup: need root or sudo to install: ${need[*]}" >&2; exit 1; fi
  echo "setup: installing ${need[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then :; else
    echo "setup: installing Rust (rustup)" >&2
    curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy -c rustfmt >/dev/null
  fi
fi
