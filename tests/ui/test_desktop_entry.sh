#!/usr/bin/env bash
# The desktop entry and the MIME type it opens (packaging/ringmaster.desktop, packaging/ringmaster-mime.xml).
#   claims     the entry's MimeType line names application/x-ringmaster-job and nothing else (not
#              application/json, which is every JSON file), that type is the one the XML defines, and
#              Exec passes the file (%f).
#   validates  desktop-file-validate passes the entry with no error or warning; the XML is well-formed
#              (xmllint) and update-mime-database takes it without a complaint into a MIME database of its
#              own, whose globs map *.ringmaster.json to the type (a subclass of application/json); GIO, reading
#              that database, types NAME.ringmaster.json and an extensionless job file as
#              application/x-ringmaster-job, leaves any other .json file application/json and an
#              extensionless JSON file without the "launch" key not a job file.
# Usage: tests/ui/test_desktop_entry.sh claims|validates
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
desktop=$here/packaging/ringmaster.desktop
mime_xml=$here/packaging/ringmaster-mime.xml
type=application/x-ringmaster-job
fail() { echo "FAIL: $*"; exit 1; }

case ${1:-} in
claims)
  lines=$(grep -c '^MimeType=' "$desktop" || true)
  [ "$lines" -eq 1 ] || fail "$desktop has $lines MimeType lines, want 1"
  claimed=$(sed -n 's/^MimeType=//p' "$desktop" | tr ';' '\n' | sed '/^$/d')
  [ "$claimed" = "$type" ] || fail "$desktop claims '$(echo $claimed)', want only $type"
  defined=$(grep -o '<mime-type type="[^"]*"' "$mime_xml" | sed 's/.*type="//; s/"$//')
  [ "$defined" = "$type" ] || fail "$mime_xml defines '$(echo $defined)', want only $type"
  grep -q '^Exec=ringmaster %f$' "$desktop" || fail "$desktop: Exec must be 'ringmaster %f' (the file opened)"
  echo "desktop entry claims only $type"
  ;;
validates)
  for tool in desktop-file-validate xmllint update-mime-database gio; do
    command -v "$tool" >/dev/null || fail "$tool is missing (scripts/setup.sh installs it)"
  done
  out=$(desktop-file-validate "$desktop" 2>&1) || fail "desktop-file-validate: $out"
  if echo "$out" | grep -Ei 'error|warning'; then fail "desktop-file-validate complains (above)"; fi
  xmllint --noout "$mime_xml" || fail "$mime_xml is not well-formed XML"

  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/share/mime/packages" "$work/files" "$work/home"
  cp /usr/share/mime/packages/freedesktop.org.xml "$work/share/mime/packages/"
  cp "$mime_xml" "$work/share/mime/packages/ringmaster.xml"
  # update-mime-database exits 0 even on a bad file: anything it says is a failure.
  said=$(XDG_DATA_DIRS=$work/share update-mime-database "$work/share/mime" 2>&1) || fail "update-mime-database: $said"
  [ -z "$said" ] || fail "update-mime-database: $said"
  grep -qx "50:$type:\*.ringmaster.json" "$work/share/mime/globs2" || fail "globs2 lacks *.ringmaster.json: $(grep ringmaster "$work/share/mime/globs2")"
  grep -qx "$type application/json" "$work/share/mime/subclasses" || fail "$type is not a subclass of application/json"

  printf '{\n    "launch": {\n        "device": "cpu",\n        "nproc": 2\n    },\n    "version": 1\n}\n' > "$work/files/sweep.ringmaster.json"
  cp "$work/files/sweep.ringmaster.json" "$work/files/sweep"
  cp "$work/files/sweep.ringmaster.json" "$work/files/job.json"
  printf '{"name": "not a job"}\n' > "$work/files/package.json"
  printf '{"name": "not a job"}\n' > "$work/files/notes.ringmaster.json"
  printf '{"name": "not a job"}\n' > "$work/files/notes"
  content_type() {
    env -i PATH=/usr/bin:/bin HOME="$work/home" XDG_DATA_HOME="$work/home/.local/share" XDG_DATA_DIRS="$work/share" \
      gio info -a standard::content-type "$work/files/$1" | sed -n 's/^ *standard::content-type: //p'
  }
  for expected in sweep.ringmaster.json=$type notes.ringmaster.json=$type sweep=$type \
                  job.json=application/json package.json=application/json; do
    file=${expected%%=*}; want=${expected#*=}
    got=$(content_type "$file")
    [ "$got" = "$want" ] || fail "$file is typed '$got', want $want"
  done
  # The magic wants the "launch" key: other JSON without a name that says so is not a job file.
  got=$(content_type notes)
  [ -n "$got" ] && [ "$got" != "$type" ] || fail "notes (JSON, no launch key, no suffix) is typed '$got'"
  echo "desktop entry and MIME type valid"
  ;;
*) echo "usage: $0 claims|validates" >&2; exit 2 ;;
esac
