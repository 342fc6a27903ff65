#!/usr/bin/env bash
# Fetches what scripts/gpu-check.sh needs on a GPU machine that has a CUDA PyTorch, a compiler, CMake and ninja
# but no package registry: Debian 12's development packages of spdlog, fmt, nlohmann-json, zlib, libarchive,
# Nettle, libpng and libjpeg, the libraries they and libarchive link, and the Fashion-MNIST dataset, as .deb files
# (about 44 MB) in .gpu-deps/ (git-ignored). Carry that folder to the GPU machine (the device tool: carry
# [".gpu-deps"]); gpu-check.sh unpacks them there into a prefix of its own. Idempotent.
#   scripts/gpu-deps.sh [DIR]        (default .gpu-deps)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$here/.gpu-deps}
packages=(
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 nlohmann-json3-dev zlib1g-dev zlib1g
  libarchive-dev libarchive13 libpng-dev libpng16-16 libjpeg62-turbo-dev libjpeg62-turbo nettle-dev
  # What libarchive13 and libxml2 link, in Debian 12's versions (the GPU machine may have others, or none).
  libacl1 libbz2-1.0 liblz4-1 liblzma5 libnettle8 libxml2 libzstd1 libicu72
  dataset-fashion-mnist
)
mkdir -p "$dir"
missing=()
for p in "${packages[@]}"; do
  compgen -G "$dir/${p}_*.deb" >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  (cd "$dir" && apt-get download -q "${missing[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
fi
for p in "${packages[@]}"; do
  compgen -G "$dir/${p}_*.deb" >/dev/null || { echo "gpu-deps: $p could not be downloaded" >&2; exit 1; }
done
echo "gpu-deps: ${#packages[@]} packages in $dir ($(du -sh "$dir" | cut -f1))"
