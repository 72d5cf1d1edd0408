#!/usr/bin/env bash
# Scores `loci context` on the fresh-user trial sets (fixtures/eval/trials: questions that
# helpers new to loci wrote and verified against the source before seeing its answers),
# each against the whole-file BM25 baseline in the same run, one line per set.
#
#   bench/trial_sets.sh [LOCI_BINARY] [WORK_DIR] [SET...]
#
# Corpora (fixtures/eval/trials/corpora.txt): a copy of this machine's CPython standard
# library without site-packages, scanned once, and for each crates set its four crates
# copied from the cargo registry (a build of loci fetches them). Every corpus is scanned
# by the binary that scores it.
set -euo pipefail
cd "$(dirname "$0")/.."
loci=$(realpath "${1:-target/release/loci}")
work=${2:-$(mktemp -d)}
shift $(( $# > 2 ? 2 : $# ))
trials=fixtures/eval/trials
registry=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ | head -1)
stdlib=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['stdlib'])")
if [ ! -d "$work/stdlib" ]; then
    python3 - "$stdlib" "$work/stdlib" <<'PY'
import shutil, sys
shutil.copytree(sys.argv[1], sys.argv[2], ignore=lambda d, names: [n for n in names if n in ("site-packages", "__pycache__") or n.endswith(".so")])
PY
    (cd "$work/stdlib" && "$loci" scan . >/dev/null)
fi
# corpora.txt: `SET crate-version ...` per crates set.
while read -r set crates; do
    [ -z "$set" ] || [ "${set:0:1}" = "#" ] && continue
    if [ "$#" -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$set"; then continue; fi
    for case in "$trials/$set-stdlib.jsonl" "$trials/$set-crates.jsonl"; do
        [ -f "$case" ] || continue
        corpus="$work/stdlib"
        if [[ $case == *-crates.jsonl ]]; then
            corpus="$work/$set-crates"
            if [ ! -d "$corpus" ]; then
                mkdir -p "$corpus"
                for crate in $crates; do
                    cp -a "$registry$crate" "$corpus/${crate%-[0-9]*}"
                    rm -f "$corpus/${crate%-[0-9]*}/.cargo-ok"
                done
                (cd "$corpus" && "$loci" scan . >/dev/null)
            fi
        fi
        out=$(python3 fixtures/eval/dev/score.py --loci "$loci" --corpus "$corpus" --cases "$case")
        echo "$(basename "$case" .jsonl): $out"
    done
done < "$trials/corpora.txt"
