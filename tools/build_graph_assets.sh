#!/usr/bin/env bash
# Bundles the graph page's layout library (elkjs, from the npm registry) into graphlsp/graphview/assets/elk.js,
# which is committed and shipped as package data: `pip install` and every graph page work with no npm and no
# network. Run it to update elkjs (change ELKJS_VERSION), then commit the asset.
set -euo pipefail
ELKJS_VERSION="${ELKJS_VERSION:-0.12.1}"
ESBUILD_VERSION="${ESBUILD_VERSION:-0.25.12}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --loglevel=error "elkjs@$ELKJS_VERSION" "esbuild@$ESBUILD_VERSION"
# elk.bundled.js runs the layout in the page itself (no web worker: a webview's and a file:// page's workers differ)
printf 'import ELK from "elkjs/lib/elk.bundled.js";\nwindow.ELK = ELK;\n' > entry.js
npx --no-install esbuild entry.js --bundle --minify --format=iife --target=es2019 \
  --banner:js="/* elkjs $ELKJS_VERSION (EPL-2.0, https://github.com/kieler/elkjs), bundled by tools/build_graph_assets.sh */" \
  --outfile="$root/graphlsp/graphview/assets/elk.js"
echo "wrote $root/graphlsp/graphview/assets/elk.js ($(wc -c < "$root/graphlsp/graphview/assets/elk.js") bytes)"
