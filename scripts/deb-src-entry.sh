#!/usr/bin/env bash
# Prints the deb822 deb-src entry that scripts/setup.sh adds so that `apt-get source qcustomplot` works:
# the mirror (and its Signed-By keyring) come from the machine's own configured Debian sources, the
# first `deb` source of this release's suite with the main component, in /etc/apt/sources.list,
# sources.list.d/*.list or sources.list.d/*.sources (deb822). So a machine behind a local mirror keeps
# using it. Fails with one clear line when no such source is configured.
# Usage: scripts/deb-src-entry.sh [APT_DIR [CODENAME]]   (defaults: /etc/apt and this system's codename)
set -euo pipefail
apt_dir=${1:-/etc/apt}
codename=${2:-}
if [ -z "$codename" ]; then
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
fi
[ -n "$codename" ] || { echo "deb-src-entry: cannot tell this system's Debian release (no VERSION_CODENAME in /etc/os-release)" >&2; exit 1; }

one_line_sources() {  # "URI|SIGNED_BY" for each matching one-line `deb` entry
  awk -v suite="$codename" '
    $1 == "deb" {
      i = 2; opts = ""
      if ($2 ~ /^\[/) { while (i < NF && $i !~ /\]$/) { opts = opts " " $i; i++ } opts = opts " " $i; i++ }
      uri = $i; s = $(i + 1); comps = " "
      for (j = i + 2; j <= NF; j++) comps = comps $j " "
      if (s == suite && comps ~ / main /) {
        sb = ""
        if (match(opts, /signed-by=[^] ]*/)) sb = substr(opts, RSTART + 10, RLENGTH - 10)
        print uri "|" sb
      }
    }' "$@"
}

deb822_sources() {  # the same for deb822 paragraphs
  awk -v suite="$codename" '
    BEGIN { RS = ""; FS = "\n" }
    {
      types = ""; uris = ""; suites = ""; comps = ""; sb = ""; enabled = "yes"
      for (i = 1; i <= NF; i++) {
        line = $i
        if (line ~ /^[ \t]*#/ || line !~ /:/) continue
        key = tolower(substr(line, 1, index(line, ":") - 1)); val = substr(line, index(line, ":") + 1)
        gsub(/^[ \t]+|[ \t]+$/, "", val)
        if (key == "types") types = val; else if (key == "uris") uris = val
        else if (key == "suites") suites = val; else if (key == "components") comps = val
        else if (key == "signed-by") sb = val; else if (key == "enabled") enabled = tolower(val)
      }
      if (enabled != "no" && (" " types " ") ~ / deb / && (" " suites " ") ~ (" " suite " ") && (" " comps " ") ~ / main /) {
        split(uris, u, " ")
        print u[1] "|" sb
      }
    }' "$@"
}

found=""
shopt -s nullglob
lists=("$apt_dir/sources.list" "$apt_dir"/sources.list.d/*.list)
existing=()
for f in "${lists[@]}"; do [ -f "$f" ] && existing+=("$f"); done
if [ ${#existing[@]} -gt 0 ]; then found=$(one_line_sources "${existing[@]}" | head -n 1); fi
if [ -z "$found" ]; then
  deb822=("$apt_dir"/sources.list.d/*.sources)
  if [ ${#deb822[@]} -gt 0 ]; then found=$(deb822_sources "${deb822[@]}" | head -n 1); fi
fi
if [ -z "$found" ]; then
  echo "deb-src-entry: no Debian '$codename' source with the main component in $apt_dir/sources.list or $apt_dir/sources.list.d/: configure one (see sources.list(5)) and run again" >&2
  exit 1
fi
uri=${found%%|*}
signed_by=${found#*|}
# An inline key block (deb822 allows one) or none: Debian's archive keyring.
case $signed_by in /*) ;; *) signed_by=/usr/share/keyrings/debian-archive-keyring.gpg ;; esac
printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' "$uri" "$codename" "$signed_by"
