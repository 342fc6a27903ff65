#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs the embedded default job
# (Fashion-MNIST cnn, one epoch, on every GPU, or 2 CPU ranks without one). On a machine with NVIDIA GPUs it
# first builds the GPU trainer (below).
# With a display it opens the Ringmaster window with that job ready (add --start to start it at once);
# without one it runs the headless launcher. Extra arguments go to the program.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/setup.sh"
"$here/scripts/build.sh"
# On a machine with NVIDIA GPUs the packaged-style CPU trainer cannot use them: build the GPU trainer against
# the pinned CUDA PyTorch (scripts/setup-torch.sh) and install it where the launcher and the app look first
# ($XDG_DATA_HOME/ringmaster/bin). RINGMASTER_GPU_TRAINER=yes builds it anyway, =no never.
gpu_trainer=${RINGMASTER_GPU_TRAINER:-auto}
case $gpu_trainer in auto|yes|no) ;; *) echo "run: RINGMASTER_GPU_TRAINER=$gpu_trainer: give auto, yes or no" >&2; exit 2 ;; esac
if [ "$gpu_trainer" = auto ]; then
  gpu_trainer=no
  if compgen -G "/proc/driver/nvidia/gpus/*" >/dev/null || nvidia-smi -L >/dev/null 2>&1; then gpu_trainer=yes; fi
fi
if [ "$gpu_trainer" = yes ]; then
  echo "run: NVIDIA GPUs here: building the GPU trainer against scripts/torch-env.in's torch (scripts/build-trainer.sh)"
  "$here/scripts/setup-torch.sh" && "$here/scripts/build-trainer.sh" --python "${RINGMASTER_TORCH_ENV:-$here/.torch-env}/bin/python" \
    --build-dir "${RINGMASTER_CUDA_BUILD_DIR:-$here/build-cuda}" || {
    echo "run: the GPU trainer could not be built (above); the main job needs it on this machine's GPUs" >&2; exit 1; }
fi
bin=${RINGMASTER_BUILD_DIR:-$here/build}/app
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$bin/ringmaster" ]; then
  exec "$bin/ringmaster" "$@"
fi
# The launcher always starts the job: --start is the app's flag only.
args=()
for arg in "$@"; do [ "$arg" = "--start" ] || args+=("$arg"); done
exec "$bin/ringmaster-launch" "${args[@]}"
