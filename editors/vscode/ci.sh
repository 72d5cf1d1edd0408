#!/usr/bin/env bash
# CI for the VS Code extension: install exactly the locked dependencies, typecheck, lint,
# unit-test the pure modules, and package a .vsix. Run from anywhere; needs Node 20+.
set -euo pipefail
cd "$(dirname "$0")"
echo "editors/vscode: node $(node --version), npm $(npm --version)"
npm ci --no-audit --no-fund
npm run typecheck
npm run lint
npm test
rm -f loci.vsix
npm run package
test -s loci.vsix
# The package holds the bundle and the manifest, nothing else of the tree.
files=$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' loci.vsix)
grep -qx 'extension/dist/extension.js' <<<"$files"
if grep -qE 'node_modules|/src/|\.map$' <<<"$files"; then
  echo "loci.vsix contains files it should not:" >&2
  echo "$files" >&2
  exit 1
fi
echo "editors/vscode: ok ($(du -h loci.vsix | cut -f1) loci.vsix)"
