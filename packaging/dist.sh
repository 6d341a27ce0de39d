#!/bin/bash
# dist.sh BINARY OUTDIR: builds OUTDIR/kc-VERSION-linux-ARCH.tar.gz (`make dist`): the release
# BINARY (the Swift runtime linked in statically, stripped, checked by check-binary.sh), the man
# page, the completions, install.sh (PREFIX, DESTDIR) and the copyright notices. It runs on Debian
# 12 or later (glibc 2.36) with libsodium23 installed and no Swift toolchain.
set -euo pipefail
umask 022
binary=${1:?usage: dist.sh BINARY OUTDIR}
out=${2:?usage: dist.sh BINARY OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
binary=$(realpath "$binary")
mkdir -p "$out" && out=$(cd "$out" && pwd)
repo=$(dirname "$here")
version=$("$binary" --version | sed -n 's/^kc \([^ ]*\)$/\1/p')
[ -n "$version" ] || { echo "dist: $binary --version does not print 'kc VERSION'" >&2; exit 1; }
machine=$(uname -m)
name="kc-$version-linux-$machine"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date -d "$(sed -n 's/^ -- .*>  //p' "$here/debian/changelog" | head -n 1)" +%s)}

stage=$(mktemp -d "$out/dist-stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
top="$stage/$name"
install -d "$top/bin" "$top/share/man/man1" "$top/share/completions"
install -m 0755 "$binary" "$top/bin/kc"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$top/bin/kc"
"$repo/Tests/packaging/check-binary.sh" "$top/bin/kc"
install -m 0644 "$repo/Docs/kc.1" "$top/share/man/man1/kc.1"
install -m 0644 "$repo/completions/kc.bash" "$repo/completions/_kc" "$repo/completions/kc.fish" "$top/share/completions/"
install -m 0644 "$repo/Docs/kc-agent.service" "$top/share/kc-agent.service"
install -m 0755 "$here/install.sh" "$top/install.sh"
install -m 0644 "$here/debian/copyright" "$top/COPYRIGHT"

tarball="$out/$name.tar.gz"
rm -f "$out"/kc-*-linux-"$machine".tar.gz
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -cf - "$name" |
    gzip -9n > "$tarball"
echo "dist: $tarball"
