#!/usr/bin/env bash
# scripts/deb-src-entry.sh against made-up apt configurations: a one-line sources.list on a local
# mirror with signed-by, a deb822 file (disabled and other-suite paragraphs skipped), an inline key
# (falls back to Debian's keyring), and no usable source (one clear line, exit 1).
set -euo pipefail
script=$(cd "$(dirname "$0")/../.." && pwd)/scripts/deb-src-entry.sh
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$work/a/sources.list.d"
printf '# a comment\ndeb [arch=amd64 signed-by=/etc/apt/keyrings/local.gpg] http://mirror.lan/debian bookworm main contrib\n' > "$work/a/sources.list"
out=$("$script" "$work/a" bookworm)
[ "$out" = "$(printf 'Types: deb-src\nURIs: http://mirror.lan/debian\nSuites: bookworm\nComponents: main\nSigned-By: /etc/apt/keyrings/local.gpg')" ] || fail "one-line: $out"

mkdir -p "$work/b/sources.list.d"
cat > "$work/b/sources.list.d/debian.sources" <<'SRC'
Types: deb
URIs: http://disabled.lan/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb
URIs: http://security.lan/debian-security
Suites: bookworm-security
Components: main

Types: deb deb-src
URIs: http://mirror.lan/debian http://other.lan/debian
Suites: bookworm bookworm-updates
Components: main non-free-firmware
Signed-By: /usr/share/keyrings/local.gpg
SRC
out=$("$script" "$work/b" bookworm)
echo "$out" | grep -qx 'URIs: http://mirror.lan/debian' || fail "deb822 URI: $out"
echo "$out" | grep -qx 'Signed-By: /usr/share/keyrings/local.gpg' || fail "deb822 Signed-By: $out"

sed -i 's|^Signed-By: .*|Signed-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----|' "$work/b/sources.list.d/debian.sources"
out=$("$script" "$work/b" bookworm)
echo "$out" | grep -qx 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' || fail "inline key: $out"

mkdir -p "$work/c/sources.list.d"
printf 'deb http://mirror.lan/debian trixie main\n' > "$work/c/sources.list"
if err=$("$script" "$work/c" bookworm 2>&1); then fail "no bookworm source but exit 0: $err"; fi
[ "$(echo "$err" | wc -l)" -eq 1 ] && echo "$err" | grep -q "no Debian 'bookworm' source" || fail "message: $err"
echo "deb-src entry test passed"
