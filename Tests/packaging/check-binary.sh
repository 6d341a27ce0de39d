#!/bin/bash
# check-binary.sh BINARY [MAX_GLIBC]: fails unless BINARY runs on a plain Debian 12 machine, as
# make deb and make dist ship it: no RPATH or RUNPATH (the loader searches only the system's
# folders), no glibc symbol version newer than MAX_GLIBC (default 2.36, Debian 12's), and no
# Swift runtime library needed (it is linked in statically). Prints one line per problem.
set -euo pipefail
binary=${1:?usage: check-binary.sh BINARY [MAX_GLIBC]}
max=${2:-2.36}
[ -x "$binary" ] || { echo "check-binary: $binary is not an executable file" >&2; exit 2; }
dynamic=$(readelf --dynamic --wide "$binary")
problems=0
if grep -E '\((RPATH|RUNPATH)\)' <<<"$dynamic" >/dev/null; then
    echo "check-binary: $binary has a search path: $(grep -E '\((RPATH|RUNPATH)\)' <<<"$dynamic" | sed 's/.*: //')" >&2
    problems=1
fi
needed=$(sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' <<<"$dynamic")
if swift_libraries=$(grep -E '^lib(swift|Foundation|dispatch|BlocksRuntime|_Foundation|FoundationEssentials)' <<<"$needed"); then
    echo "check-binary: $binary needs the Swift runtime: $(tr '\n' ' ' <<<"$swift_libraries")" >&2
    problems=1
fi
# Every GLIBC_x.y version the binary references (its version needs, as the loader checks them).
versions=$(readelf --version-info --wide "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV)
newest=$(tail -n 1 <<<"$versions")
newer=""
for v in $versions; do
    [ "$(printf '%s\n%s\n' "$v" "$max" | sort -V | tail -n 1)" = "$max" ] || newer="$newer GLIBC_$v"
done
if [ -z "$newest" ]; then
    echo "check-binary: $binary references no glibc symbol version (not a dynamic glibc binary?)" >&2
    problems=1
elif [ -n "$newer" ]; then
    echo "check-binary: $binary needs glibc symbols newer than $max:$newer" >&2
    problems=1
fi
[ "$problems" = 0 ] || exit 1
echo "check-binary: $binary: no RUNPATH, glibc <= $max (newest GLIBC_$newest), needs: $(tr '\n' ' ' <<<"$needed")"
