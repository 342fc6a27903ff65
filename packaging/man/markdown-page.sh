#!/bin/sh
# A section-5 manual page from one of the project's Markdown files, so the page and the guide cannot drift:
#   markdown-page.sh LOWDOWN NAME SECTION WHATIS VERSION INPUT.md OUTPUT
# NAME (the whatis line) comes first, then the file under DESCRIPTION with its own title dropped; lowdown
# (Debian's lowdown) writes the roff.
set -eu
lowdown=$1 name=$2 section=$3 whatis=$4 version=$5 input=$6 output=$7
{
  printf '# NAME\n\n%s - %s\n\n# DESCRIPTION\n\n' "$name" "$whatis"
  # The file's first-level title is the page's NAME now; its other headings keep their level.
  awk 'NR == 1 && /^# / { next } { print }' "$input"
} | "$lowdown" -s -Tman -M "title=$name" -M "section=$section" -M "source=Ringmaster $version" \
    -M "date=" -o "$output.tmp"
mv "$output.tmp" "$output"
