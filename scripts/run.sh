#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs the embedded default job
# (Fashion-MNIST cnn, one epoch, on every GPU, or 2 CPU ranks without one).
# With a display it opens the Ringmaster window with that job ready (add --start to start it at once);
# without one it runs the headless launcher. Extra arguments go to the program.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/setup.sh"
"$here/scripts/build.sh"
bin=${RINGMASTER_BUILD_DIR:-$here/build}/app
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$bin/ringmaster" ]; then
  exec "$bin/ringmaster" "$@"
fi
# The launcher always starts the job: --start is the app's flag only.
args=()
for arg in "$@"; do [ "$arg" = "--start" ] || args+=("$arg"); done
exec "$bin/ringmaster-launch" "${args[@]}"
