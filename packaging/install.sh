#!/bin/sh
# Installs kc from this release tarball, as `make install` does from source:
#   ./install.sh                      # into /usr/local (PREFIX), as root
#   PREFIX=$HOME/.local ./install.sh  # for one user
#   DESTDIR=/tmp/stage ./install.sh   # into a staging folder (packagers)
# kc needs libsodium 1.0.18 or later (Debian, Ubuntu: apt install libsodium23), libzxcvbn0, libcrypto
# (libssl3) and, for FTP only, libcurl (libcurl4); it needs no Swift toolchain (the Swift runtime
# is linked in).
set -eu
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
here=$(cd "$(dirname "$0")" && pwd)
bindir="$DESTDIR$PREFIX/bin"
mandir="$DESTDIR$PREFIX/share/man/man1"
bashdir="$DESTDIR$PREFIX/share/bash-completion/completions"
zshdir="$DESTDIR$PREFIX/share/zsh/site-functions"
fishdir="$DESTDIR$PREFIX/share/fish/vendor_completions.d"
# Holds `security`, a link to kc, for scripts written for macOS: on PATH only where a user puts it.
securitydir="$DESTDIR$PREFIX/lib/kc/security-compat"

install -d "$bindir" "$mandir" "$bashdir" "$zshdir" "$fishdir" "$securitydir"
install -m 0755 "$here/bin/kc" "$bindir/kc"
ln -sfn kc "$bindir/git-credential-kc"
ln -sfn "$PREFIX/bin/kc" "$securitydir/security"
install -m 0644 "$here/share/man/man1/kc.1" "$mandir/kc.1"
install -m 0644 "$here/share/completions/kc.bash" "$bashdir/kc"
install -m 0644 "$here/share/completions/_kc" "$zshdir/_kc"
install -m 0644 "$here/share/completions/kc.fish" "$fishdir/kc.fish"
echo "installed kc in $DESTDIR$PREFIX/bin"
if [ -z "$DESTDIR" ] && command -v ldconfig >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q 'libsodium\.so\.23 '; then
    echo "install.sh: warning: libsodium.so.23 is not installed; kc needs it (apt install libsodium23)" >&2
fi
