#!/bin/bash
# Builds the libFuzzer targets and runs each for a while.
#
#   Tests/Fuzz/run.sh [TARGET...] [-t SECONDS] [--merge]
#
# TARGET: vault_parser, cli_parser (default: both). SECONDS per target (default 60).
# Seeds: Docs/vectors/*.txt (decoded to vault files) and Tests/Fuzz/corpus/TARGET/ (committed
# interesting inputs, kept as regression inputs). New inputs go to .build/fuzz/work/TARGET/;
# --merge adds those that reach new coverage to Tests/Fuzz/corpus/TARGET/ (commit them).
# A crash: exit status 1, the input saved under .build/fuzz/artifacts/ and printed in hex. A target
# that ran no input fails too. With FUZZ_RESULTS=FILE, each target's outcome is also written there as
# one line `TARGET<TAB>ok|crash|build-failed|no-input<TAB>INPUTS` (make test's summary reads it).
# Not a SwiftPM target: `swift build` and `swift test` never compile this folder. The cli_parser
# target links KCCLI and the layers below it, built by SwiftPM with the fuzzer sanitizer into
# .build/fuzz/spm, and fuzzes kc's real command table.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_PER_TARGET=60
MERGE=0
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    -t) SECONDS_PER_TARGET="$2"; shift 2 ;;
    --merge) MERGE=1; shift ;;
    vault_parser|cli_parser) TARGETS+=("$1"); shift ;;
    *) echo "usage: $0 [vault_parser|cli_parser]... [-t SECONDS] [--merge]" >&2; exit 2 ;;
  esac
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(vault_parser cli_parser)
SWIFTC=${SWIFTC:-swiftc}
OUT=.build/fuzz
mkdir -p "$OUT"
export SWIFT_BACKTRACE=enable=no   # else the Swift runtime's backtracer keeps libFuzzer from saving crashes
FLAGS=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6)

build() {
  case "$1" in
    vault_parser)
      "$SWIFTC" "${FLAGS[@]}" Sources/KCFormat/*.swift Tests/Fuzz/vault_parser_fuzz.swift -o "$OUT/vault_parser" ;;
    cli_parser)
      # One -sanitize=fuzzer,address (SwiftPM's --sanitize=fuzzer --sanitize=address passes two flags,
      # and the last one wins: the modules would get no coverage instrumentation).
      local spm=(-c release -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address
                 --scratch-path "$OUT/spm")
      # KCCLI, and the C loader that only C code (CCurl, CLibCrypto) includes, which building KCCLI
      # alone leaves without an object.
      swift build "${spm[@]}" --target KCCLI && swift build "${spm[@]}" --target CLibraryLoader
      local bin; bin=$(swift build "${spm[@]}" --show-bin-path)
      # Every library module under Sources (all but the kc executable, whose main the fuzzer replaces);
      # the system-library shims have no sources and add no objects.
      local modules=() objects=() m f
      for m in Sources/*/; do m=$(basename "$m"); [ "$m" = kc ] || modules+=("$m"); done
      for m in "${modules[@]}"; do   # the objects of today's sources only (a deleted file's object stays behind)
        for f in $(find "Sources/$m" -name '*.swift' -o -name '*.c'); do objects+=("$bin/$m.build/$(basename "$f").o"); done
      done
      "$SWIFTC" "${FLAGS[@]}" -I "$bin/Modules" \
        -Xcc -fmodule-map-file=Sources/CSodium/module.modulemap -Xcc -fmodule-map-file=Sources/CSystemShim/module.modulemap \
        -Xcc -fmodule-map-file=Sources/CZxcvbn/module.modulemap \
        -Xcc -fmodule-map-file="$bin/CCurl.build/module.modulemap" -Xcc -fmodule-map-file="$bin/CWordList.build/module.modulemap" \
        -Xcc -fmodule-map-file="$bin/CLibCrypto.build/module.modulemap" \
        Tests/Fuzz/cli_parser_fuzz.swift "${objects[@]}" -lsodium -lzxcvbn -ldl -o "$OUT/cli_parser" ;;
  esac
}

seed() {   # fills $OUT/seeds/TARGET
  local dir="$OUT/seeds/$1"
  rm -rf "$dir" && mkdir -p "$dir"
  if [ "$1" = vault_parser ]; then
    for v in Docs/vectors/*.txt; do
      "${PYTHON:-python3}" -c 'import sys; t = open(sys.argv[1]).read().split("\n\n", 1)[1]; sys.stdout.buffer.write(bytes.fromhex(t.replace("\n", "")))' \
        "$v" > "$dir/$(basename "$v" .txt).kc"
    done
  fi
}

status=0
RESULTS=${FUZZ_RESULTS:-/dev/null}
: > "$RESULTS"
result() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$RESULTS"; }
for t in "${TARGETS[@]}"; do
  echo "fuzz: building $t"
  if ! build "$t" >"$OUT/$t.build.log" 2>&1; then grep -E "error" "$OUT/$t.build.log" | head -20; echo "fuzz: $t: build failed (log: $OUT/$t.build.log)"; result "$t" build-failed 0; status=1; continue; fi
  seed "$t"
  rm -rf "$OUT/artifacts/$t"
  mkdir -p "$OUT/work/$t" "$OUT/artifacts/$t" "Tests/Fuzz/corpus/$t"
  echo "fuzz: running $t for ${SECONDS_PER_TARGET}s"
  log="$OUT/$t.log"
  if "$OUT/$t" "$OUT/work/$t" "Tests/Fuzz/corpus/$t" "$OUT/seeds/$t" \
       -max_total_time="$SECONDS_PER_TARGET" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$t/" >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
    echo "fuzz: $t: 0 crashes in $runs runs (${SECONDS_PER_TARGET}s, $cov)"
    case "$runs" in
      ''|*[!0-9]*|0) status=1; echo "fuzz: $t: ran no input (log: $log)"; result "$t" no-input 0 ;;
      *) result "$t" ok "$runs" ;;
    esac
  else
    status=1
    echo "fuzz: $t: CRASH (log: $log)"
    result "$t" crash "$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)"
    grep -E 'ERROR|Fatal error|SUMMARY|Test unit written' "$log" | head -20 || true
    for a in "$OUT/artifacts/$t"/*; do
      [ -f "$a" ] && { echo "input $a (reproduce: SWIFT_BACKTRACE=enable=no $OUT/$t $a):"; od -An -tx1 -v "$a" | head -40; }
    done
  fi
  if [ "$MERGE" = 1 ]; then
    before=$(ls "Tests/Fuzz/corpus/$t" | wc -l)
    "$OUT/$t" -merge=1 "Tests/Fuzz/corpus/$t" "$OUT/work/$t" >"$OUT/$t.merge.log" 2>&1
    echo "fuzz: $t: corpus $before -> $(ls "Tests/Fuzz/corpus/$t" | wc -l) inputs in Tests/Fuzz/corpus/$t"
  fi
done
exit $status
