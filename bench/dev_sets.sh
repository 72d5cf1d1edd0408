#!/usr/bin/env bash
# Scores `loci context` on the retrieval development sets (fixtures/eval/dev: questions
# written independently of loci, with verified gold answers) against a whole-file BM25
# baseline in the same run, and fails when loci's recall@5 falls below the baseline's.
#
#   bench/dev_sets.sh [LOCI_BINARY] [WORK_DIR]
#
# Corpora: a copy of this machine's CPython standard library without site-packages, and
# six crates copied from the cargo registry (fixtures/eval/dev/make_crates_corpus.sh; a
# build of loci fetches them). Each is scanned into its own store first.
set -euo pipefail
cd "$(dirname "$0")/.."
loci=$(realpath "${1:-target/release/loci}")
work=${2:-$(mktemp -d)}
dev=fixtures/eval/dev
stdlib=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['stdlib'])")
if [ ! -d "$work/stdlib" ]; then
    python3 - "$stdlib" "$work/stdlib" <<'PY'
import shutil, sys
shutil.copytree(sys.argv[1], sys.argv[2], ignore=lambda d, names: [n for n in names if n in ("site-packages", "__pycache__") or n.endswith(".so")])
PY
fi
[ -d "$work/crates" ] || bash $dev/make_crates_corpus.sh "$work/crates" >/dev/null
status=0
for set in stdlib crates; do
    (cd "$work/$set" && "$loci" scan . >/dev/null)
    out=$(python3 $dev/score.py --loci "$loci" --corpus "$work/$set" --cases $dev/$set-dev.jsonl)
    echo "$set-dev: $out"
    python3 - "$out" "$set" <<'PY' || status=1
import json, sys
r = json.loads(sys.argv[1])
loci, bm25 = r["loci"]["recall@5"], r["bm25_files"]["recall@5"]
if r["errors"] or loci < bm25:
    sys.exit(f"{sys.argv[2]}-dev: loci recall@5 {loci} is below the whole-file BM25 baseline {bm25} (errors: {r['errors']})")
PY
done
exit $status
