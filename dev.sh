#!/usr/bin/env bash
# One entry point that sets everything up on a fresh machine, then does the job:
#   ./dev.sh demo        the emulator, a local control plane and the operator, live
#   ./dev.sh test        type-check, lint and every test suite (what CI runs)
#   ./dev.sh release     the release folder (npm run release: image, chart, CRDs, package, checksums)
#   ./dev.sh install     the operator onto the cluster your kubeconfig names (uninstall: off it again)
#   ./dev.sh doctor      what the operator needs (token, scopes, API, CRDs, RBAC, nodes): OK / WARN / FAIL
#   ./dev.sh <command>   any other `linode-operator` command (run, emulator, help, ...)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
source scripts/ensure-node.sh

# Install dependencies when the lockfile changed since the last install.
stamp=node_modules/.package-lock.sha
sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sum" ]; then
  npm ci --no-audit --no-fund --loglevel=error
  echo "$sum" > "$stamp"
fi

case "${1:-help}" in
  test) shift; exec npm test -- "$@" ;;
  release) shift; exec npm run release -- "$@" ;;
  # The built command through its own #! line, as the npm bin and the image start it.
  *) npm run --silent build; exec dist/cli/main.js "$@" ;;
esac
