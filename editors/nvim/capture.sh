#!/usr/bin/env bash
# Writes screen.txt: Neovim in a tmux pane on examples/broken.onnxtxt, with the server's diagnostics and a hover.
#   editors/nvim/capture.sh            (needs tmux, nvim >= 0.11 and graphlsp; NVIM and GRAPHLSP_CMD override;
#                                       CAPTURE_ANSI=FILE also writes the screen with its colours)
# Bounded: every wait gives up after 30 s, and the tmux server it starts is killed on exit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
nvim=${NVIM:-nvim}
export GRAPHLSP_CMD=${GRAPHLSP_CMD:-'["graphlsp", "serve"]'}
socket="graphlsp-capture-$$"
tmp=$(mktemp -d)
cleanup() { tmux -L "$socket" kill-server 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

# the example without its `# expect: <kind>` notes, as someone would write it
sed -E 's/[[:space:]]+# expect: .*$//' "$root/examples/broken.onnxtxt" > "$tmp/broken.onnxtxt"
mkdir -p "$tmp/xdg"
# a fresh Neovim state, the example config, a dark 256-colour terminal of 112x34
tmux -L "$socket" -f /dev/null new-session -d -s capture -x 112 -y 34 \
  "cd '$tmp' && env TERM=tmux-256color XDG_STATE_HOME='$tmp/xdg' XDG_DATA_HOME='$tmp/xdg' XDG_CACHE_HOME='$tmp/xdg' \
   GRAPHLSP_CMD='$GRAPHLSP_CMD' '$nvim' -i NONE -u '$here/example/init.lua' broken.onnxtxt"

screen() { tmux -L "$socket" capture-pane -p -t capture; }
wait_for() {  # wait_for PATTERN: until the screen shows it
  for _ in $(seq 300); do
    if screen | grep -q -- "$1"; then return 0; fi
    sleep 0.1
  done
  echo "capture.sh: timed out waiting for '$1'; the screen was:" >&2
  screen >&2
  exit 1
}
keys() { tmux -L "$socket" send-keys -t capture "$@"; }

wait_for "expected ')' to close"      # the diagnostics (virtual text) are in
keys '24G^'                            # line 24: `bad_shape = Constant <value = int64[2] {5, 7}> ()`
# hover (K), opened above the cursor so that the Reshape error on the next line stays in view
keys ':lua vim.lsp.buf.hover({ anchor_bias = "above" })' Enter
wait_for 'consumed by'
keys ':' Escape                        # clear the command line
sleep 0.3
screen | sed -e 's/[[:space:]]*$//' > "$here/screen.txt"
# CAPTURE_ANSI=FILE: the same screen with its colours (escape sequences), for docs/images/editor.png
if [ -n "${CAPTURE_ANSI:-}" ]; then tmux -L "$socket" capture-pane -e -p -t capture > "$CAPTURE_ANSI"; fi
keys Escape ':qa!' Enter
echo "wrote $here/screen.txt"
