#!/usr/bin/env bash
# The GPU check, in one go, for a machine with an NVIDIA GPU, a CUDA PyTorch, a compiler, CMake and ninja, and
# no package registry (the H200 this project is sometimes lent: 15 minutes in all). Prepare on a Debian 12
# machine: scripts/gpu-deps.sh (Debian's -dev packages of spdlog, fmt, nlohmann-json, zlib, libarchive, libpng,
# libjpeg, their libraries and Fashion-MNIST, as .deb files in .gpu-deps/); carry .gpu-deps. Then, there:
#   scripts/gpu-check.sh [DEPS_DIR]     (default .gpu-deps; "none": the machine has those packages installed)
# Environment: PYTHON (default python3, whose torch it builds against), STEPS (default 600), OUT (where the
# figures and logs are copied, if set), GPU_CHECK_DEVICE=cpu (the same script on a CPU, gloo instead of NCCL:
# how it is checked on machines without a GPU before it is run on one).
#  1. unpacks the packages into a prefix of its own and builds ringmaster-trainer against PYTHON's torch with
#     scripts/build-trainer.sh (the GPU user's command); only the trainer sees the unpacked libraries (run path);
#  2. 1 rank, --device cuda --backend nccl --force-collectives true: the NCCL group, the parameter broadcast and
#     every gradient all-reduce really run;
#  3. the same job under torchrun --nproc-per-node 1 --no-python (torchrun's environment contract);
#  4. PyTorch's own DDP on the same GPU (tests/bench/reference_ddp.py --ddp --eval), same model, data, batch,
#     and the same math as the trainer's defaults (TF32, cuDNN benchmark: --cuda-fast-math);
#  4b. both again with --precision bf16 (the trainer's autocast against torch.autocast), and the ratio;
#  5. exactness on the GPU with --deterministic true: a run stopped at half and resumed equals the straight run
#     (checkpoint with the CUDA generator), and data held in host memory (--data-placement host: pinned,
#     non-blocking copies) equals data on the GPU, bit for bit;
#  6. prints samples/s of 2-4, the ratio to PyTorch, validation accuracy and peak GPU memory, and PASS/FAIL per
#     stage; exit 1 when a stage failed;
#  7. (GPU only) PyTorch's NCCL flight recorder asked through its pipe, as the launcher asks a hung rank, and its
#     trace read by torch's fr_trace. Stages 2-5 run even when an earlier one failed (one lease, all the
#     answers); without a build or the dataset there is nothing to run. Bad input: one line, exit 2.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
deps=${1:-$here/.gpu-deps}
python=${PYTHON:-python3}
steps=${STEPS:-600}
device=${GPU_CHECK_DEVICE:-cuda}
bad() { echo "gpu-check: $*" >&2; exit 2; }
case $device in cuda|cpu) ;; *) bad "GPU_CHECK_DEVICE=$device: give cuda (the default) or cpu" ;; esac
[[ "$steps" =~ ^[0-9]+$ ]] && [ "$steps" -ge 40 ] || bad "STEPS=$steps: give a whole number of at least 40 (20 are warm-up)"
if [ "$deps" != none ]; then
  compgen -G "$deps/*.deb" >/dev/null || bad "$deps holds no .deb files: run scripts/gpu-deps.sh on a Debian 12 machine and carry .gpu-deps, or pass none"
fi
work=$(mktemp -d /tmp/ringmaster-gpu-check.XXXXXX)
results=()
failed=0
started=$(date +%s)

note() { echo "gpu-check: $*"; }
stage() { # name, status (0 pass), detail
  if [ "$2" -eq 0 ]; then results+=("PASS  $1${3:+: $3}"); else results+=("FAIL  $1${3:+: $3}"); failed=1; fi
  note "$(tail -n 1 <<<"${results[-1]}")"
}
finish() {
  {
    echo "== gpu-check summary ($(( $(date +%s) - started )) s, device $device, torch $torch_version)"
    printf '%s\n' "${results[@]}"
  } | tee "$work/summary.txt"
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    cp "$work/summary.txt" "$OUT/gpu-check.txt"
    tar -czf "$OUT/gpu-check-logs.tar.gz" -C "$work" --exclude='*.pt' --exclude='data-cache' . 2>/dev/null
  fi
  exit $failed
}

torch_version=$("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null) || {
  torch_version=none; stage "PyTorch" 1 "$python cannot import torch (set PYTHON)"; finish; }
if [ "$device" = cuda ]; then
  gpu=$("$python" -c 'import torch; assert torch.cuda.is_available(); print(torch.cuda.get_device_name(0))' 2>/dev/null) || {
    stage "GPU" 1 "PyTorch sees no CUDA device"; finish; }
  note "torch $torch_version on $gpu"
fi

# 1. The packages, unpacked where only this check looks, and the trainer built against PYTHON's torch.
cmake_args=()
data=/usr/share/datasets/fashion-mnist
build=$here/build-gpu
if [ "$deps" != none ]; then
  # A fixed place beside the build folder: the build's CMake cache refers to it.
  prefix=$here/build-gpu-deps
  rm -rf "$prefix"
  mkdir -p "$prefix"
  for deb in "$deps"/*.deb; do
    if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$deb" "$prefix"
    else ar p "$deb" data.tar.xz | tar -xJ -C "$prefix"; fi  # Debian 12's packages hold data.tar.xz
  done
  lib=$prefix/usr/lib/x86_64-linux-gnu
  inc=$prefix/usr/include
  data=$prefix/usr/share/datasets/fashion-mnist
  # Found through the prefix; linked with an inherited run path (--disable-new-dtags), so libarchive finds its
  # own libraries there too, while nothing else on the machine (its Python included) sees them.
  cmake_args=("-DCMAKE_PREFIX_PATH=$prefix/usr;$lib/cmake" "-DCMAKE_CXX_FLAGS=-isystem $inc/x86_64-linux-gnu"
              "-DZLIB_INCLUDE_DIR=$inc" "-DZLIB_LIBRARY=$lib/libz.so" "-DLibArchive_INCLUDE_DIR=$inc"
              "-DLibArchive_LIBRARY=$lib/libarchive.so" "-DPNG_PNG_INCLUDE_DIR=$inc/libpng16" "-DPNG_LIBRARY=$lib/libpng16.so"
              "-DJPEG_INCLUDE_DIR=$inc" "-DJPEG_LIBRARY=$lib/libjpeg.so" "-DNETTLE_INCLUDE_DIR=$inc" "-DNETTLE_LIBRARY=$lib/libnettle.so" "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags"
              "-DCMAKE_BUILD_RPATH=$lib")
fi
t0=$(date +%s)
if bash "$here/scripts/build-trainer.sh" --python "$python" --build-dir "$build" --no-install -- "${cmake_args[@]}" \
     > "$work/build.log" 2>&1; then
  stage "build against torch $torch_version" 0 "$(( $(date +%s) - t0 )) s; $(grep -h 'CUDA:\|NCCL:' "$work/build.log" | sed 's/build-trainer: *//' | tr '\n' ' ')"
else
  tail -n 30 "$work/build.log"
  stage "build against torch $torch_version" 1 "see build.log"
  finish
fi
trainer=$build/app/ringmaster-trainer
[ -f "$data/train-images-idx3-ubyte.gz" ] || { stage "dataset" 1 "Fashion-MNIST not found in $data"; finish; }

backend=nccl
[ "$device" = cuda ] || backend=gloo
common=(--data "$data" --model cnn --batch-size 64 --eval-every 0 --log-every 100 --threads 4 --data-cache "$work/data-cache")
rank_env=(RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1)

# samples/s from metrics.csv after the first 20 steps (the reference's warm-up), and summary.json's fields.
figures() { # run_dir -> "samples/s val_accuracy peak_allocated_mb peak_reserved_mb digest"
  "$python" - "$1" <<'PY'
import csv, json, sys
run = sys.argv[1]
rows = list(csv.DictReader(open(f"{run}/metrics.csv")))
t0, t1 = float(rows[19]["wall_time"]), float(rows[-1]["wall_time"])
summary = json.load(open(f"{run}/summary.json"))
fmt = lambda v: "-" if v is None else (f"{v:.4f}" if isinstance(v, float) and v < 1 else f"{v:.1f}")
print(f"{(len(rows) - 20) * 64 / (t1 - t0):.1f}", fmt(summary.get("val_accuracy")), fmt(summary.get("peak_gpu_allocated_mb")),
      fmt(summary.get("peak_gpu_reserved_mb")))
PY
}
digest_of() { sed -n 's/.*parameter_digest=\([0-9a-f]*\).*/\1/p' "$1" | tail -n 1; }

# 2. One rank through NCCL.
if env "${rank_env[@]}" MASTER_PORT=29531 "$trainer" --device "$device" --backend "$backend" --force-collectives true \
     "${common[@]}" --max-steps "$steps" --out "$work/nccl" > "$work/nccl.log" 2>&1; then
  read -r ours ours_acc ours_alloc ours_reserved < <(figures "$work/nccl")
  stage "1 rank, $backend, forced collectives" 0 "$ours samples/s, val_accuracy $ours_acc, peak GPU MB allocated $ours_alloc reserved $ours_reserved"
else
  tail -n 20 "$work/nccl.log"; ours=; stage "1 rank, $backend, forced collectives" 1 "see nccl.log"
fi

# 3. The same job under torchrun.
if "$python" -m torch.distributed.run --standalone --nproc-per-node 1 --no-python "$trainer" --device "$device" \
     --backend "$backend" --force-collectives true "${common[@]}" --max-steps "$steps" --out "$work/torchrun" \
     > "$work/torchrun.log" 2>&1; then
  read -r viarun viarun_acc _ _ < <(figures "$work/torchrun")
  stage "the same under torchrun --nproc-per-node 1" 0 "$viarun samples/s, val_accuracy $viarun_acc"
else
  tail -n 20 "$work/torchrun.log"; stage "the same under torchrun --nproc-per-node 1" 1 "see torchrun.log"
fi

# 4. PyTorch's own DDP on the same GPU.
if env "${rank_env[@]}" MASTER_PORT=29532 "$python" "$here/tests/bench/reference_ddp.py" --device "$device" --ddp --eval \
     --threads 4 --data "$data" --steps "$steps" --warmup 20 --cuda-fast-math > "$work/reference.log" 2>&1; then
  line=$(grep '^reference ' "$work/reference.log")
  reference=$(sed -n 's/.*samples_per_sec=\([0-9.]*\).*/\1/p' <<<"$line")
  stage "PyTorch DDP reference" 0 "${line#reference }"
  if [ -n "$ours" ] && [ -n "$reference" ]; then
    results+=("      ratio ringmaster / PyTorch DDP, 1 rank: $("$python" -c "print(f'{$ours / $reference:.2f}x')")")
  fi
else
  tail -n 20 "$work/reference.log"; stage "PyTorch DDP reference" 1 "see reference.log"
fi

# 4b. bf16 autocast, the trainer's and PyTorch's.
if env "${rank_env[@]}" MASTER_PORT=29534 "$trainer" --device "$device" --backend "$backend" --force-collectives true \
     "${common[@]}" --max-steps "$steps" --precision bf16 --out "$work/bf16" > "$work/bf16.log" 2>&1; then
  read -r ours_bf16 bf16_acc bf16_alloc _ < <(figures "$work/bf16")
  stage "1 rank, --precision bf16" 0 "$ours_bf16 samples/s, val_accuracy $bf16_acc, peak GPU MB allocated $bf16_alloc"
else
  tail -n 20 "$work/bf16.log"; ours_bf16=; stage "1 rank, --precision bf16" 1 "see bf16.log"
fi
if env "${rank_env[@]}" MASTER_PORT=29535 "$python" "$here/tests/bench/reference_ddp.py" --device "$device" --ddp --eval \
     --threads 4 --data "$data" --steps "$steps" --warmup 20 --cuda-fast-math --precision bf16 \
     > "$work/reference-bf16.log" 2>&1; then
  line=$(grep '^reference ' "$work/reference-bf16.log")
  reference_bf16=$(sed -n 's/.*samples_per_sec=\([0-9.]*\).*/\1/p' <<<"$line")
  stage "PyTorch DDP reference, torch.autocast bf16" 0 "${line#reference }"
  if [ -n "$ours_bf16" ] && [ -n "$reference_bf16" ]; then
    results+=("      ratio ringmaster / PyTorch DDP, 1 rank, bf16: $("$python" -c "print(f'{$ours_bf16 / $reference_bf16:.2f}x')") (goal >= 1.0x)")
  fi
else
  tail -n 20 "$work/reference-bf16.log"; stage "PyTorch DDP reference, torch.autocast bf16" 1 "see reference-bf16.log"
fi

# 5. Exactness with deterministic kernels: resume, and host-held data, bit for bit.
exact=(--deterministic true --device "$device" --max-steps 120 "${common[@]}")
run_exact() { # name, extra arguments...
  local name=$1; shift
  env "${rank_env[@]}" MASTER_PORT=29533 "$trainer" "${exact[@]}" "$@" > "$work/$name.log" 2>&1
}
run_exact straight --out "$work/straight" && run_exact half --max-steps 60 --out "$work/half" \
  && run_exact resumed --resume "$work/half" --out "$work/half" && run_exact host --data-placement host --out "$work/host"
status=$?
a=$(digest_of "$work/straight.log"); b=$(digest_of "$work/resumed.log"); c=$(digest_of "$work/host.log")
if [ $status -eq 0 ] && [ -n "$a" ] && [ "$a" = "$b" ]; then stage "deterministic resume at step 60 = straight run" 0 "digest $a"
else stage "deterministic resume at step 60 = straight run" 1 "straight $a, resumed $b (logs straight/half/resumed)"; fi
if [ $status -eq 0 ] && [ -n "$a" ] && [ "$a" = "$c" ]; then stage "--data-placement host = device" 0 "digest $c"
else stage "--data-placement host = device" 1 "device $a, host $c (host.log)"; fi

# 7. PyTorch's half of the launcher's NCCL flight-recorder request (core/supervisor/script_environment.h): a rank
#    whose group did one all-reduce is asked through TORCH_NCCL_DEBUG_INFO_PIPE_FILE<rank>.pipe, as the launcher asks a
#    hung one, and writes TORCH_FR_DUMP_TEMP_FILE<rank>; torch's own reader (fr_trace) then reads it.
if [ "$device" = cuda ]; then
  fr=$work/flight-recorder; mkdir -p "$fr"
  env "${rank_env[@]}" MASTER_PORT=29536 TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_FR_DUMP_TEMP_FILE="$fr/nccl-trace-rank-" \
    TORCH_NCCL_DEBUG_INFO_PIPE_FILE="$fr/nccl-trace-rank-" "$python" -c '
import time, torch, torch.distributed as dist
dist.init_process_group("nccl", device_id=torch.device("cuda:0"))
x = torch.ones(1024, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print("ready", flush=True)
time.sleep(120)' > "$work/flight-recorder.log" 2>&1 &
  fr_pid=$!
  for _ in $(seq 600); do grep -q '^ready' "$work/flight-recorder.log" && [ -p "$fr/nccl-trace-rank-0.pipe" ] && break; sleep 0.1; done
  [ -p "$fr/nccl-trace-rank-0.pipe" ] && timeout 5 sh -c "echo 1 > '$fr/nccl-trace-rank-0.pipe'"
  size=-1 # the trace is complete once it exists and keeps its size for a poll
  for _ in $(seq 300); do
    now=$(stat -c %s "$fr/nccl-trace-rank-0" 2>/dev/null || echo -1)
    [ "$now" -gt 0 ] && [ "$now" = "$size" ] && break
    size=$now; sleep 0.2
  done
  kill "$fr_pid" 2>/dev/null; wait "$fr_pid" 2>/dev/null
  rm -f "$fr"/*.pipe # a reader of the folder would block on it (the launcher removes it too)
  if [ -s "$fr/nccl-trace-rank-0" ] && timeout 60 "$python" -m torch.distributed.flight_recorder.fr_trace "$fr" \
       -p nccl-trace-rank- --allow-incomplete-ranks > "$work/fr-trace.log" 2>&1; then
    stage "NCCL flight recorder asked through its pipe" 0 "$(stat -c %s "$fr/nccl-trace-rank-0") bytes, read by fr_trace"
  else
    tail -n 20 "$work/flight-recorder.log" "$work/fr-trace.log" 2>/dev/null
    stage "NCCL flight recorder asked through its pipe" 1 "no trace, or fr_trace could not read it (flight-recorder.log, fr-trace.log)"
  fi
fi
finish
