#!/usr/bin/env bash
# The project identity (packaging/identity.cmake): the placeholders live in that file only; configured with
# a publisher's values, the AppStream metainfo (named after the id), debian/copyright and the changelog carry
# them and no placeholder, the metainfo passes appstreamcli validate and the changelog dpkg-parsechangelog;
# a malformed value stops the configuration with one line naming the variable.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for tool in cmake appstreamcli dpkg-parsechangelog xmllint; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/setup.sh installs it)"
done

placeholders='example\.org|org\.example'
# Every placeholder in one file: nothing else in packaging/ (or the sources it configures) names them.
elsewhere=$(grep -rlE "$placeholders" "$here/packaging" | grep -v '/packaging/identity.cmake$' || true)
[ -z "$elsewhere" ] || fail "placeholders outside packaging/identity.cmake: $elsewhere"

maintainer='Jane Doe <jane.doe+rm@lab.test>'
homepage='https://lab.test/ringmaster?ref=a&b=c'
id=io.github.labtest.ringmaster
cmake -DRINGMASTER_MAINTAINER="$maintainer" -DRINGMASTER_HOMEPAGE="$homepage" -DRINGMASTER_APPSTREAM_ID=$id \
      -DOUT="$work/out" -P "$here/packaging/identity.cmake" > "$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "identity.cmake failed"; }
metainfo=$work/out/$id.metainfo.xml
[ -f "$metainfo" ] || fail "no $id.metainfo.xml: $(ls "$work/out")"
if grep -nE "$placeholders|@[A-Z_]+@" "$work/out"/*; then fail "a placeholder is left (above)"; fi

xmllint --noout "$metainfo" || fail "$metainfo is not well-formed"
[ "$(xmllint --xpath 'string(/component/id)' "$metainfo")" = "$id" ] || fail "metainfo id"
[ "$(xmllint --xpath 'string(/component/url[@type="homepage"])' "$metainfo")" = "$homepage" ] || fail "metainfo homepage"
[ "$(xmllint --xpath 'string(//screenshot/image)' "$metainfo")" = "$homepage/screenshot-running.png" ] || fail "metainfo screenshot"
appstreamcli validate --no-net "$metainfo" > "$work/validate.txt" 2>&1 || { cat "$work/validate.txt"; fail "appstreamcli validate"; }

grep -qx "Upstream-Contact: $maintainer" "$work/out/copyright" || fail "copyright's Upstream-Contact: $(grep Upstream-Contact "$work/out/copyright")"
[ "$(dpkg-parsechangelog -l "$work/out/changelog" -S Maintainer)" = "$maintainer" ] || fail "changelog's maintainer"

# A screenshot address of its own.
cmake -DRINGMASTER_MAINTAINER="$maintainer" -DRINGMASTER_HOMEPAGE="$homepage" -DRINGMASTER_APPSTREAM_ID=$id \
      -DRINGMASTER_SCREENSHOT_URL=https://img.lab.test/rm.png -DOUT="$work/shot" -P "$here/packaging/identity.cmake" >/dev/null
[ "$(xmllint --xpath 'string(//screenshot/image)' "$work/shot/$id.metainfo.xml")" = https://img.lab.test/rm.png ] || fail "screenshot address not used"

# Bad values: one line naming the variable, nothing configured.
for bad in "RINGMASTER_MAINTAINER=jane@lab.test" "RINGMASTER_HOMEPAGE=lab.test/ringmaster" "RINGMASTER_APPSTREAM_ID=ringmaster" \
           "RINGMASTER_APPSTREAM_ID=test.lab.ring-master"; do
  name=${bad%%=*}
  args=(-DRINGMASTER_MAINTAINER="$maintainer" -DRINGMASTER_HOMEPAGE="$homepage" -DRINGMASTER_APPSTREAM_ID=$id "-D$bad")
  if out=$(cmake "${args[@]}" -DOUT="$work/bad" -P "$here/packaging/identity.cmake" 2>&1); then fail "$bad was accepted"; fi
  echo "$out" | grep -q "$name is '${bad#*=}': give" || fail "$bad: $out"
  [ ! -e "$work/bad" ] || fail "$bad: files were configured"
done
echo "identity test passed"
