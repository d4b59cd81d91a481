#!/usr/bin/env bash
# Installs what lockstep needs on Debian/Ubuntu if it is missing: a C++ toolchain, cmake and python3
# (shaderc is built from source), the Vulkan loader and Mesa's lavapipe driver, and Rust.
# Safe to run repeatedly; uses sudo when not root.
set -euo pipefail
need=()
for p in cmake python3 g++ make mesa-vulkan-drivers libvulkan1 ca-certificates curl; do
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
