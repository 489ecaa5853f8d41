#!/usr/bin/env bash
# The Debian package as a user gets it: `cpack -G DEB` from the build tree, its Depends checked
# (runtime libraries only, each installed here), installed with dpkg into a fresh root made
# here (dpkg --root: no chroot, nothing of this machine's own packages touched), the smoke
# suite run from the installed paths outside the source tree, `sut exec` finding the installed
# interposers, then removed with dpkg, leaving no file behind.
# Usage: deb_package_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
for tool in cpack dpkg dpkg-deb dpkg-shlibdeps lintian readelf; do
  command -v "$tool" >/dev/null || { echo "SKIP: no $tool (Debian's dpkg-dev and cmake)"; exit 77; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

(cd "$work" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/pkg" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log"; fail "cpack -G DEB failed"; }
deb=$(ls "$work"/pkg/faultline_*.deb)
echo "package: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
# As Debian would take it: no lintian error or warning.
lintian --fail-on error,warning --tag-display-limit 0 "$deb" >"$work/lintian.log" 2>&1 ||
  { cat "$work/lintian.log"; fail "lintian found errors or warnings"; }
grep -v '^running with root privileges' "$work/lintian.log" || true
# The debug information apart, in faultline-dbgsym.
ls "$work"/pkg/faultline-dbgsym_*.ddeb >/dev/null 2>&1 || fail "no faultline-dbgsym package"
# Hardened as dpkg-buildflags asks: immediate binding, fortified calls.
dpkg-deb -x "$deb" "$work/unpacked"
# (Read whole before grep: grep -q would end the pipe early, and pipefail fail it.)
dynamic=$(readelf -d "$work/unpacked/usr/bin/faultline")
grep -q 'BIND_NOW' <<<"$dynamic" || fail "the binary is not linked with -z now"
symbols=$(readelf -W --dyn-syms "$work/unpacked/usr/bin/faultline")
grep -q '__[a-z_]*_chk@' <<<"$symbols" || fail "the binary calls no fortified function (_FORTIFY_SOURCE)"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
[[ -n $depends ]] || fail "the package declares no dependencies"
for wanted in libfabric1 libibverbs1 libc6; do
  grep -q "$wanted" <<<"$depends" || fail "Depends lacks $wanted"
done
for dependency in $(tr ',' '\n' <<<"$depends" | sed 's/(.*//; s/|.*//' | tr -d ' '); do
  [[ $dependency != *-dev ]] || fail "Depends names a development package: $dependency"
  dpkg-query -W -f='${Status}' "$dependency" 2>/dev/null | grep -q 'install ok installed' ||
    fail "Depends names $dependency, which this machine does not have installed"
done
dpkg-deb -c "$deb" | awk '{print $6}' >"$work/contents"
for path in ./usr/bin/faultline ./usr/lib/faultline/interpose/libfaultline-fi.so \
  ./usr/share/faultline/scenarios/suites/smoke.json ./usr/share/faultline/schema/report.schema.json \
  ./usr/share/faultline/grafana/faultline.json ./usr/share/doc/faultline/README.md \
  ./usr/share/doc/faultline/copyright ./usr/share/doc/faultline/changelog.gz \
  ./usr/share/man/man1/faultline.1.gz ./usr/share/man/man1/faultline-monitor.1.gz \
  ./lib/systemd/system/faultline-monitor.service ./lib/systemd/system/faultline-agent.service \
  ./etc/default/faultline-agent ./etc/default/faultline-monitor; do
  grep -qx "$path" "$work/contents" || fail "the package lacks $path"
done

# A fresh root: dpkg's database only.
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
# Its libraries are this machine's (checked above), so the root's empty database may ignore them.
dpkg --root="$root" --force-depends --force-not-root -i "$deb" >"$work/dpkg-install.log" 2>&1 ||
  { cat "$work/dpkg-install.log"; fail "dpkg -i failed"; }
faultline=$root/usr/bin/faultline
[[ -x $faultline ]] || fail "no $faultline after dpkg -i"

mkdir -p "$work/run"
cd "$work/run"
env -u FAULTLINE_SCENARIO_DIR -u FAULTLINE_INTERPOSE_DIR "$faultline" run >"$work/run.log" 2>&1 ||
  { cat "$work/run.log"; fail "faultline run from the installed package failed"; }
tail -n 4 "$work/run.log"
python3 - "$work/run/faultline-report/report.json" "$root/usr/share/faultline/scenarios" <<'PY'
import json, sys
report, installed = json.load(open(sys.argv[1])), sys.argv[2]
sources = [s["source"] for s in report["scenarios"] if s["source"] != "builtin"]
print("scenario files:", sources)
assert sources, "the smoke suite ran no scenario file"
assert all(source.startswith(installed) for source in sources), (installed, sources)
assert all(s["verdict"] == "pass" for s in report["scenarios"])
PY
# sut exec refuses to start without libfaultline-fi.so, and only the installed copy exists.
env -u FAULTLINE_INTERPOSE_DIR "$faultline" sut exec -- true >"$work/sut.log" 2>&1 ||
  { cat "$work/sut.log"; fail "sut exec did not find the installed interposers"; }

# The units as systemd reads them (where this machine has systemd-analyze).
if command -v systemd-analyze >/dev/null; then
  for unit in faultline-monitor faultline-agent; do
    systemd-analyze verify --man=no --recursive-errors=no --root="$root" \
      "$root/lib/systemd/system/$unit.service" >"$work/$unit.verify" 2>&1 ||
      { cat "$work/$unit.verify"; fail "systemd-analyze verify $unit.service"; }
  done
fi
dpkg --root="$root" --force-not-root -r faultline >"$work/dpkg-remove.log" 2>&1 ||
  { cat "$work/dpkg-remove.log"; fail "dpkg -r failed"; }
left=$(find "$root/usr" -type f 2>/dev/null | head -n 5 || true)
[[ -z $left ]] || fail "files left after dpkg -r: $left"
echo "PASS: built, installed into $root, ran the smoke suite from the installed paths, removed"
