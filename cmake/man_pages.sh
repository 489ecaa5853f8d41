#!/usr/bin/env bash
# A manual page per command, made from its --help by help2man: faultline(1) and
# faultline-COMMAND(1) for each command `faultline --help` lists, gzipped as Debian ships them.
# Usage: man_pages.sh FAULTLINE OUTPUT_DIR VERSION
set -euo pipefail
faultline=$1 out=$2 version=$3
rm -rf "$out" && mkdir -p "$out/wrappers"
commands=$("$faultline" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NR > 1 && NF {print $1}')
[[ -n $commands ]] || { echo "man_pages.sh: $faultline --help lists no commands" >&2; exit 1; }
# help2man runs "PROGRAM --help"; a command's page runs "faultline COMMAND --help" through a
# wrapper named after the page.
page() {  # page NAME SUMMARY PROGRAM
  help2man --no-info --no-discard-stderr --version-string="$version" --section=1 \
    --source="faultline $version" --manual="faultline manual" --name="$2" "$3" |
    gzip -9n >"$out/$1.1.gz"
}
page faultline "RDMA fault diagnosis and protocol conformance" "$faultline"
for command in $commands; do
  summary=$("$faultline" --help | awk -v c="$command" '$1 == c {$1 = ""; sub(/^ +/, ""); print; exit}')
  wrapper=$out/wrappers/faultline-$command
  printf '#!/bin/sh\nexec %q %q "$@"\n' "$faultline" "$command" >"$wrapper"
  chmod +x "$wrapper"
  page "faultline-$command" "$summary" "$wrapper"
done
rm -rf "$out/wrappers"
