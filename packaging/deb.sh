#!/bin/bash
# deb.sh BINARY OUTDIR: builds OUTDIR/kc_VERSION_ARCH.deb with dpkg-deb from the release BINARY
# (`make deb`). The package holds what `make install` installs, in Debian's places: /usr/bin/kc and
# git-credential-kc, the `security` link in /usr/lib/kc/security-compat (off PATH), the man page,
# the completions, the agent's systemd user unit, and /usr/share/doc/kc (copyright, changelog).
# Depends is computed: dpkg-shlibdeps from the binary's NEEDED libraries (a library kc starts to
# link follows by itself), plus libcurl4 and libssl3 (libcrypto), which kc loads with dlopen
# (Sources/CCurl, Sources/CLibCrypto) and no tool can see. VERSION is what `kc --version` prints; packaging/debian/changelog must start with it.
set -euo pipefail
umask 022
binary=${1:?usage: deb.sh BINARY OUTDIR}
out=${2:?usage: deb.sh BINARY OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
binary=$(realpath "$binary")
mkdir -p "$out" && out=$(cd "$out" && pwd)
repo=$(dirname "$here")
# Libraries kc opens with dlopen, as Debian packages (the sonames in Sources/CCurl/kc_curl.c and
# Sources/CLibCrypto/kc_libcrypto.c).
DLOPEN_DEPENDS="libcurl4 libssl3"

for tool in dpkg-deb dpkg-shlibdeps strip gzip; do
    command -v "$tool" >/dev/null || { echo "deb: $tool is missing: run make test-deps (dpkg-dev, binutils)" >&2; exit 1; }
done
version=$("$binary" --version | sed -n 's/^kc \([^ ]*\)$/\1/p')
[ -n "$version" ] || { echo "deb: $binary --version does not print 'kc VERSION'" >&2; exit 1; }
changelog_version=$(sed -n '1s/^kc (\([^)]*\)).*/\1/p' "$here/debian/changelog")
if [ "$changelog_version" != "$version" ]; then
    echo "deb: packaging/debian/changelog starts with version '$changelog_version' but kc is $version: add an entry" >&2
    exit 1
fi
arch=$(dpkg --print-architecture)
maintainer=${DEB_MAINTAINER:-$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$here/debian/changelog" | head -n 1)}
# Reproducible: every file's time is the changelog entry's date.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date -d "$(sed -n 's/^ -- .*>  //p' "$here/debian/changelog" | head -n 1)" +%s)}

stage=$(mktemp -d "$out/deb-stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root="$stage/root"
install -d "$root/DEBIAN" "$root/usr/bin" "$root/usr/lib/kc/security-compat" "$root/usr/lib/systemd/user" \
    "$root/usr/share/man/man1" "$root/usr/share/doc/kc" "$root/usr/share/bash-completion/completions" \
    "$root/usr/share/zsh/vendor-completions" "$root/usr/share/fish/vendor_completions.d"
install -m 0755 "$binary" "$root/usr/bin/kc"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/kc"
"$repo/Tests/packaging/check-binary.sh" "$root/usr/bin/kc"
ln -s kc "$root/usr/bin/git-credential-kc"
ln -s ../../../bin/kc "$root/usr/lib/kc/security-compat/security"
gzip -9n < "$repo/Docs/kc.1" > "$root/usr/share/man/man1/kc.1.gz"
ln -s kc.1.gz "$root/usr/share/man/man1/git-credential-kc.1.gz"
install -m 0644 "$repo/completions/kc.bash" "$root/usr/share/bash-completion/completions/kc"
install -m 0644 "$repo/completions/_kc" "$root/usr/share/zsh/vendor-completions/_kc"
install -m 0644 "$repo/completions/kc.fish" "$root/usr/share/fish/vendor_completions.d/kc.fish"
sed -e 's|^ExecStart=/usr/local/bin/kc |ExecStart=/usr/bin/kc |' \
    -e 's|^#   cp Docs/kc-agent.service ~/.config/systemd/user/$|#   (installed by the kc package in /usr/lib/systemd/user)|' \
    -e '/^#   mkdir -p ~\/.config\/systemd\/user$/d' \
    -e 's|^# kc as installed by make install (PREFIX /usr/local); change the path for another PREFIX.$|# kc as the Debian package installs it.|' \
    "$repo/Docs/kc-agent.service" > "$root/usr/lib/systemd/user/kc-agent.service"
grep -q '^ExecStart=/usr/bin/kc ' "$root/usr/lib/systemd/user/kc-agent.service" ||
    { echo "deb: Docs/kc-agent.service has no 'ExecStart=/usr/local/bin/kc ...' line to point at /usr/bin/kc" >&2; exit 1; }
install -m 0644 "$here/debian/copyright" "$root/usr/share/doc/kc/copyright"
# A native package's Debian changelog is changelog.gz (Debian policy 12.7).
gzip -9n < "$here/debian/changelog" > "$root/usr/share/doc/kc/changelog.gz"

# Depends: dpkg-shlibdeps reads the binary's NEEDED libraries and the symbol versions it uses
# (it wants a debian/control beside it, of which it reads nothing kc needs).
mkdir -p "$stage/src/debian"
printf 'Source: kc\n\nPackage: kc\nArchitecture: any\n' > "$stage/src/debian/control"
shlibs=$(cd "$stage/src" && dpkg-shlibdeps -O -e "$root/usr/bin/kc" 2>"$stage/shlibdeps.err") ||
    { cat "$stage/shlibdeps.err" >&2; exit 1; }
depends=$(sed -n 's/^shlibs:Depends=//p' <<<"$shlibs")
[ -n "$depends" ] || { echo "deb: dpkg-shlibdeps found no dependency: $shlibs" >&2; exit 1; }
depends="$depends, ${DLOPEN_DEPENDS// /, }"

find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
installed_size=$(du -s -k --apparent-size "$root/usr" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$maintainer|" \
    -e "s|@INSTALLED_SIZE@|$installed_size|" -e "s|@DEPENDS@|$depends|" \
    "$here/debian/control.in" > "$root/DEBIAN/control"
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"

deb="$out/kc_${version}_${arch}.deb"
rm -f "$out"/kc_*_"$arch".deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "deb: $deb (Depends: $depends)"
