#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's promise on a new machine: builds a minimal Debian 12 (debootstrap
# --variant=minbase bookworm: no compiler, no make, no python), copies this checkout's
# tree in (tracked and untracked-not-ignored files, as they are now), and runs, as root
# inside it:
#   1. ./make.sh test, cut off as by a power cut (SIGKILL to every process in the chroot)
#      as soon as dpkg has packages unpacked and not configured: dpkg left half-way;
#   2. ./make.sh test again, interrupted as soon as CMake has started configuring
#      (a CMakeCache.txt and no configure stamp): a configure cut short (Ctrl-C, then
#      SIGKILL after 20 s);
#   3. ./make.sh bench, then ./make.sh test, which must both succeed.
# Needs root and a Debian mirror (MIRROR, default the host's first or deb.debian.org);
# installs debootstrap with apt-get if missing. Takes about 10 minutes on 2 cores.
# Usage: scripts/fresh-debian-check.sh [WORK_DIR]   (KEEP=1 keeps the chroot afterwards)
set -euo pipefail
# (all in one function: bash reads it whole, so editing the file during a run is harmless)
main() {
src=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/var/tmp/llmk-fresh-debian}
root=$work/chroot
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian-check: needs root (debootstrap, chroot)" >&2; exit 2; }
if [ -z "${MIRROR:-}" ]; then
  MIRROR=$(sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p; s/^deb \(http[^ ]*\/debian\) .*/\1/p' \
    /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2> /dev/null | head -n1 || true)
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
command -v debootstrap > /dev/null || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap > /dev/null
}

kill_chroot() { # every process whose root is the chroot (apt-get runs dpkg in a session of its own)
  local p r
  for p in /proc/[0-9]*; do
    r=$(readlink "$p/root" 2> /dev/null) || continue
    [ "$r" = "$root" ] && kill -KILL "${p#/proc/}" 2> /dev/null || true
  done
}
cleanup() {
  kill_chroot
  sleep 0.5
  for m in dev/pts dev sys proc; do umount -l "$root/$m" 2> /dev/null || true; done
  [ "${KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT
rm -rf "$work" && mkdir -p "$work"
t0=$SECONDS
echo "== debootstrap --variant=minbase bookworm ($MIRROR)"
debootstrap --variant=minbase bookworm "$root" "$MIRROR" > "$work/debootstrap.log" 2>&1 ||
  { tail -n 20 "$work/debootstrap.log"; exit 1; }
echo "   done in $((SECONDS - t0)) s; in it: $(for c in cc gcc c++ make cmake pkg-config python3; do
  chroot "$root" sh -c "command -v $c > /dev/null" && printf '%s ' "$c"; done)(of cc gcc c++ make cmake pkg-config python3)"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/root/llmk"
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
  tar --null -T - -c) | tar -x -C "$root/root/llmk"
echo "   tree copied: $(cd "$src" && git describe --always --dirty)"

in_chroot() { # command...: runs it in the chroot's project folder, in a new process group
  setsid chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TERM=dumb bash -c "cd /root/llmk && $*" &
}
interrupt() { # pid seconds: Ctrl-C to its group, then KILL everything in the chroot
  kill -INT -- "-$1" 2> /dev/null || true
  for _ in $(seq $(($2 * 10))); do kill -0 "$1" 2> /dev/null || break; sleep 0.1; done
  kill_chroot
  wait "$1" 2> /dev/null || true
  sleep 0.5
}

echo "== 1. ./make.sh test, cut off while dpkg installs the build tools"
in_chroot "./make.sh test > /root/run1.log 2>&1"
pid=$!
hit=0
for _ in $(seq 12000); do
  kill -0 $pid 2> /dev/null || break
  if grep -q -s -E '^Status: install ok (unpacked|half-installed|half-configured)' \
       "$root/var/lib/dpkg/status" "$root"/var/lib/dpkg/updates/*; then
    hit=1; break
  fi
  sleep 0.02
done
[ $hit = 1 ] || { echo "FAIL: run 1 never reached dpkg's unpacking"; tail -n 20 "$root/root/run1.log"; exit 1; }
kill_chroot
wait $pid 2> /dev/null || true
echo "   cut off; dpkg --audit then reports $(chroot "$root" dpkg --audit 2>&1 | grep -c '^ ' || true)" \
  "packages half-way; make: $(chroot "$root" sh -c 'command -v make || echo absent')"
tail -n 3 "$root/root/run1.log" | sed 's/^/   | /'

echo "== 2. ./make.sh test, interrupted while CMake configures"
in_chroot "./make.sh test > /root/run2.log 2>&1"
pid=$!
hit=0
for _ in $(seq 6000); do
  kill -0 $pid 2> /dev/null || break
  if [ -f "$root/root/llmk/build/CMakeCache.txt" ] && [ ! -f "$root/root/llmk/build/.llmk-configured" ]; then
    hit=1; break
  fi
  sleep 0.05
done
[ $hit = 1 ] || { echo "FAIL: run 2 never reached the configure step"; tail -n 20 "$root/root/run2.log"; exit 1; }
interrupt $pid 20
echo "   interrupted during configure; build/CMakeCache.txt left behind: $([ -f "$root/root/llmk/build/CMakeCache.txt" ] && echo yes || echo no)"
{ grep '^deps:' "$root/root/run2.log" || true; tail -n 3 "$root/root/run2.log"; } | sed 's/^/   | /'

rc=0
for cmd in "./make.sh bench" "./make.sh test"; do
  echo "== 3. $cmd"
  t=$SECONDS
  in_chroot "$cmd > /root/run3.log 2>&1"
  pid=$!
  if wait $pid; then
    echo "   passed in $((SECONDS - t)) s; its last lines:"
    tail -n 6 "$root/root/run3.log" | sed 's/^/   | /'
  else
    rc=1; echo "FAIL: $cmd"; tail -n 40 "$root/root/run3.log" | sed 's/^/   | /'; break
  fi
done
[ $rc = 0 ] && echo "fresh-debian-check: passed in $((SECONDS - t0)) s"
exit $rc
}
main "$@"
