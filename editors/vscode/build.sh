#!/usr/bin/env bash
# Builds, tests and packages the VS Code extension, from the npm registry only:
#   npm ci -> tsc (type check) -> esbuild (bundle) -> grammar tests -> node tests -> vsce package (.vsix)
# The node tests include one against the real server: set GRAPHLSP_SERVER to its command as a JSON array, e.g.
#   GRAPHLSP_SERVER='["/path/to/venv/bin/python", "-P", "-m", "graphlsp.cli", "serve"]' ./build.sh
# else `graphlsp serve` on PATH is used, and that test is skipped when there is none.
# SKIP_NPM_CI=1 keeps an existing node_modules (faster when iterating).
set -euo pipefail
cd "$(dirname "$0")"

major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "build.sh: node >= 20 is required (found $(node --version))" >&2
  exit 2
fi

step() { printf '\n== %s\n' "$*"; }

if [ "${SKIP_NPM_CI:-}" != 1 ] || [ ! -d node_modules ]; then
  step "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
step "type check (tsc)"
npx --no-install tsc -p . --noEmit
step "bundle (esbuild)"
rm -rf out
node scripts/bundle.mjs
step "grammar tests (vscode-tmgrammar-test)"
npx --no-install vscode-tmgrammar-test "test/grammar/*.test.onnxtxt" "test/grammar/*.test.onnxop"
step "node tests"
node --test out/test/
step "package (vsce)"
vsix="graphlsp-$(node -p 'require("./package.json").version').vsix"
rm -f ./*.vsix
npx --no-install vsce package --no-dependencies --skip-license --allow-missing-repository --out "$vsix"
echo
echo "built $(pwd)/$vsix"
