#!/usr/bin/env bash
# Proves the NCCL path on a machine with an NVIDIA GPU and PyTorch installed:
#  1. builds ringmaster-trainer (trainer only, no Qt) against that PyTorch's CUDA LibTorch,
#  2. runs 1 rank with --backend nccl --device cuda --force-collectives (so the NCCL process group,
#     the parameter broadcast and every gradient all-reduce really run) on Fashion-MNIST,
#  3. runs the Python reference (tests/bench/reference_ddp.py) on the same GPU,
#  4. prints samples/s of both and the ratio.
#
# Usage: scripts/gpu-check.sh [DEPS_DIR]
# A GPU box may have no package registry: DEPS_DIR is a folder where Debian packages were unpacked with
# `dpkg -x PKG.deb DEPS_DIR`: libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 nlohmann-json3-dev
# zlib1g-dev libarchive-dev libarchive13 libpng-dev libpng16-16 libjpeg62-turbo-dev libjpeg62-turbo
# dataset-fashion-mnist (download them on a Debian 12 machine with `apt-get download`).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
deps=${1:-}
[ -n "$deps" ] && deps=$(cd "$deps" && pwd)
python=${PYTHON:-python3}
steps=${STEPS:-600}

torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
"$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else "PyTorch sees no CUDA device")'
prefixes="$torch_prefix"
data=/usr/share/datasets/fashion-mnist
if [ -n "$deps" ]; then
  prefixes="$prefixes;$deps/usr;$deps/usr/lib/x86_64-linux-gnu/cmake"
  export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  [ -d "$deps/usr/share/datasets/fashion-mnist" ] && data=$deps/usr/share/datasets/fashion-mnist
fi
[ -f "$data/train-images-idx3-ubyte.gz" ] || { echo "gpu-check: Fashion-MNIST not found in $data" >&2; exit 1; }

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$here" -B "$here/build-gpu" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DRINGMASTER_TRAINER_ONLY=ON -DRINGMASTER_BUILD_TESTS=OFF -DCMAKE_PREFIX_PATH="$prefixes" \
  ${deps:+-DZLIB_INCLUDE_DIR=$deps/usr/include -DZLIB_LIBRARY=$deps/usr/lib/x86_64-linux-gnu/libz.so} \
  ${deps:+-DLibArchive_INCLUDE_DIR=$deps/usr/include -DLibArchive_LIBRARY=$deps/usr/lib/x86_64-linux-gnu/libarchive.so} \
  ${deps:+-DPNG_PNG_INCLUDE_DIR=$deps/usr/include -DPNG_LIBRARY=$deps/usr/lib/x86_64-linux-gnu/libpng16.so} \
  ${deps:+-DJPEG_INCLUDE_DIR=$deps/usr/include -DJPEG_LIBRARY=$deps/usr/lib/x86_64-linux-gnu/libjpeg.so}
cmake --build "$here/build-gpu" -j "$(nproc)"
grep -q RINGMASTER_HAVE_NCCL "$here/build-gpu/CMakeCache.txt" "$here"/build-gpu/core/trainer/CMakeFiles/*/flags.make 2>/dev/null \
  || echo "gpu-check: warning: the build did not enable NCCL (is this PyTorch built with CUDA?)"

# The wheel's libraries (libtorch_cuda, libc10_cuda, NCCL) live beside torch/lib.
torch_lib=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH="$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
run=$(mktemp -d)
env RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29531 \
  "$here/build-gpu/app/ringmaster-trainer" --device cuda --backend nccl --force-collectives true \
  --data "$data" --model cnn --batch-size 64 --max-steps "$steps" --eval-every 0 --log-every 100 --out "$run" | tee "$run/stdout.txt"
ours=$("$python" - "$run/metrics.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t0, t1 = float(rows[19]["wall_time"]), float(rows[-1]["wall_time"])
print(f"{(len(rows) - 20) * 64 / (t1 - t0):.1f}")
PY
)
reference=$(env RANK=0 WORLD_SIZE=1 "$python" "$here/tests/bench/reference_ddp.py" --device cuda --data "$data" \
  --steps "$steps" --warmup 20 | sed -n 's/^reference samples_per_sec=\([0-9.]*\).*/\1/p')
echo "ringmaster-trainer, 1 rank, NCCL, cuda: $ours samples/s"
echo "PyTorch reference, 1 rank, cuda:        $reference samples/s"
"$python" -c "print(f'ratio ringmaster / reference: {float($ours) / float($reference):.2f}x')"
grep -E "backend nccl|val_accuracy" "$run/stdout.txt" | tail -2
