#!/bin/bash
# Builds ringmaster-trainer against the PyTorch of a Python you name (a venv's or conda's python with a CUDA
# PyTorch: its LibTorch, CUDA libraries and NCCL), and puts it where ringmaster-launch and the app look first:
# $XDG_DATA_HOME/ringmaster/bin/ringmaster-trainer (by default ~/.local/share/ringmaster/bin). Prints what it
# built (--version). cmake/RingmasterTorch.cmake checks that PyTorch before anything compiles, each problem in
# one message with its fix (ABI, CUDA toolkit version, NCCL header).
#
# Usage: build-trainer.sh --python PYTHON [--build-dir DIR] [--install-dir DIR | --no-install] [--with-tests]
#                         [-- CMAKE_ARGUMENTS...]
#   --python PYTHON   the interpreter whose torch package to build against (required)
#   --build-dir DIR   where to build (default: $XDG_CACHE_HOME/ringmaster/trainer-build, ~/.cache/...)
#   --install-dir DIR where to put the trainer (default: $XDG_DATA_HOME/ringmaster/bin); --no-install: leave it
#                     in the build folder
#   --with-tests      also build the trainer's tests, with PYTHON's torch as their reference (scripts/test.sh)
# Needs cmake 3.22+, a C++17 compiler, ninja or make, and the development files of spdlog, nlohmann-json, zlib,
# libarchive, Nettle, libpng and libjpeg (Debian, Ubuntu: apt-get install cmake ninja-build g++ libspdlog-dev
# nlohmann-json3-dev zlib1g-dev libarchive-dev nettle-dev libpng-dev libjpeg-dev); for a CUDA PyTorch, the CUDA toolkit of
# its torch.version.cuda (nvcc, cuBLAS/cuSPARSE/cuSOLVER headers). The trainer built keeps a run path into
# PYTHON's environment: remove or upgrade that torch and build again.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

fail() { echo "build-trainer: $*" >&2; exit 2; }
usage() { sed -n '8,19p' "$0" | sed 's/^# \{0,1\}//'; }

python=
build_dir=${XDG_CACHE_HOME:-$HOME/.cache}/ringmaster/trainer-build
install_dir=${XDG_DATA_HOME:-$HOME/.local/share}/ringmaster/bin
install=1
tests=OFF
cmake_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --python) [ $# -ge 2 ] || fail "--python needs a value"; python=$2; shift 2 ;;
    --build-dir) [ $# -ge 2 ] || fail "--build-dir needs a value"; build_dir=$2; shift 2 ;;
    --install-dir) [ $# -ge 2 ] || fail "--install-dir needs a value"; install_dir=$2; shift 2 ;;
    --no-install) install=0; shift ;;
    --with-tests) tests=ON; shift ;;
    --help|-h) usage; exit 0 ;;
    --version) echo "build-trainer (Ringmaster)"; exit 0 ;;
    --) shift; cmake_args=("$@"); break ;;
    *) fail "unknown argument '$1' (see --help)" ;;
  esac
done
[ -n "$python" ] || fail "--python PYTHON is required: the interpreter whose PyTorch to build against (e.g. ~/venv/bin/python)"
resolved=$(command -v -- "$python" 2>/dev/null) || fail "--python $python: no such program"
python=$(cd "$(dirname "$resolved")" && pwd)/$(basename "$resolved")
torch=$("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null) || torch=
[ -n "$torch" ] || fail "--python $python cannot import torch: name a Python with PyTorch installed (pip install torch)"

# The sources: this checkout, or the copy an installed package keeps.
source_dir=${RINGMASTER_SOURCE_DIR:-}
if [ -z "$source_dir" ]; then
  # From a checkout (scripts/..), or installed as PREFIX/bin/ringmaster-build-trainer (PREFIX/share/...).
  for candidate in "$here/.." "$here/../share/ringmaster/trainer-source"; do
    if [ -f "$candidate/core/trainer/CMakeLists.txt" ]; then source_dir=$(cd "$candidate" && pwd); break; fi
  done
fi
[ -n "$source_dir" ] || fail "the trainer's sources are neither beside this script nor in $here/../share/ringmaster/trainer-source"
command -v cmake >/dev/null || fail "cmake not found: install cmake 3.22 or newer (apt-get install cmake)"
generator=()
# Ninja where it is there, unless the build folder was configured with another generator already.
if command -v ninja >/dev/null && ! grep -qs '^CMAKE_GENERATOR:INTERNAL=' "$build_dir/CMakeCache.txt"; then generator=(-G Ninja); fi

echo "build-trainer: ringmaster-trainer against torch $torch of $python, in $build_dir"
mkdir -p "$build_dir"
build_dir=$(cd "$build_dir" && pwd)
log=$build_dir/build-trainer.log
configure=(cmake -S "$source_dir" -B "$build_dir" ${generator[@]+"${generator[@]}"} -DRINGMASTER_TRAINER_ONLY=ON
           -DRINGMASTER_TORCH_PYTHON="$python" -DRINGMASTER_BUILD_TESTS=$tests -DRINGMASTER_PYTHON="$python")
[ -f "$build_dir/CMakeCache.txt" ] || configure+=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
# ${a[@]+"${a[@]}"}: an empty array under set -u on bash before 4.4 too.
if ! "${configure[@]}" ${cmake_args[@]+"${cmake_args[@]}"} > "$log" 2>&1; then
  # The checks of cmake/RingmasterTorch.cmake say the cause and the fix in their first lines.
  grep -A8 -m1 "CMake Error" "$log" >&2 || tail -n 20 "$log" >&2
  echo "build-trainer: configure failed (log: $log)" >&2
  exit 1
fi
# One LibTorch translation unit takes about 1.2 GB: no more compile jobs than GB of memory / 1.5.
memory_gb=$(awk '/MemTotal/ { print int($2 / 1048576) }' /proc/meminfo)
jobs=$(( memory_gb * 2 / 3 ))
[ "$jobs" -ge 1 ] || jobs=1
[ "$jobs" -le "$(nproc)" ] || jobs=$(nproc)
if ! cmake --build "$build_dir" --parallel "$jobs" >> "$log" 2>&1; then
  grep -m5 -E "error|Error" "$log" >&2 || true
  echo "build-trainer: build failed (log: $log)" >&2
  exit 1
fi
trainer=$build_dir/app/ringmaster-trainer
if [ "$install" = 1 ]; then
  mkdir -p "$install_dir"
  install -m 0755 "$trainer" "$install_dir/ringmaster-trainer.new"
  mv -f "$install_dir/ringmaster-trainer.new" "$install_dir/ringmaster-trainer"
  trainer=$install_dir/ringmaster-trainer
fi
"$trainer" --version | sed 's/^/build-trainer:   /'
if [ "$install" = 1 ]; then
  echo "build-trainer: installed $trainer: ringmaster-launch and the app use it from now on"
else
  echo "build-trainer: built $trainer"
fi
