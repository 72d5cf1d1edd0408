#!/usr/bin/env bash
# CI for the VS Code extension: install exactly the locked dependencies, typecheck, lint,
# unit-test the pure modules, package a .vsix, and test that package end to end in
# code-server driven by Debian's chromium (e2e/codeserver.ts). Run from anywhere; needs
# Node 20+, and for the end-to-end test what .ci/setup installs (code-server, Node 24,
# chromium) and a loci binary (target/debug/loci, else target/release/loci).
# LOCI_VSCODE_E2E=0 skips the end-to-end test.
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
echo "editors/vscode: packaged ($(du -h loci.vsix | cut -f1) loci.vsix)"
if [ "${LOCI_VSCODE_E2E:-1}" = 0 ]; then
  echo "editors/vscode: end-to-end test skipped (LOCI_VSCODE_E2E=0)"
else
  start=$SECONDS
  npm run --silent e2e
  echo "editors/vscode: end-to-end test in code-server took $((SECONDS - start)) s"
fi
echo "editors/vscode: ok"
