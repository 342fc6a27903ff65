#!/usr/bin/env bash
# Builds Ringmaster's Debian package: installs what is needed (setup.sh), builds (build.sh: the normal
# build folder, configured once as RelWithDebInfo), then cpack -G DEB. Idempotent: a second run rebuilds
# nothing and packages again. The last line of output is the path of the .deb (the -dbgsym .ddeb with
# the debug symbols lies beside it).
# Usage: scripts/package.sh            (RINGMASTER_BUILD_DIR picks another build folder, as for build.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${RINGMASTER_BUILD_DIR:-$here/build}

"$here/scripts/setup.sh" >&2
# Package only an optimised build: reuse the build folder when it is one, never a Debug build.
if [ -f "$build/CMakeCache.txt" ]; then
  type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
  case $type in
    Release|RelWithDebInfo|MinSizeRel) ;;
    *) echo "package: $build is a '${type:-no build type}' build; package an optimised one, e.g." \
            "RINGMASTER_BUILD_DIR=$here/build-release $0" >&2; exit 1 ;;
  esac
fi
"$here/scripts/build.sh" >&2
cd "$build"
rm -f ringmaster_*.deb ringmaster-dbgsym_*.ddeb
log=$build/cpack.log
cpack -G DEB > "$log" 2>&1 || { tail -n 30 "$log" >&2; echo "package: cpack failed (log: $log)" >&2; exit 1; }
deb=$(ls "$build"/ringmaster_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { echo "package: cpack made no ringmaster_*.deb (log: $log)" >&2; exit 1; }
echo "$deb"
