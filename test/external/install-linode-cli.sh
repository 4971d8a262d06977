#!/usr/bin/env bash
# Installs the official Linode CLI (linode-cli from PyPI, pinned below) into a venv cached
# outside the repository and prints the path of its linode-cli executable. Reuses the venv
# when it already holds the pinned version. Exit 3: python3, venv or pip is unavailable.
set -euo pipefail
VERSION="${LINODE_CLI_VERSION:-5.69.0}"
VENV="${LINODE_CLI_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/linode-operator/linode-cli-venv}"
BIN="$VENV/bin/linode-cli"

installed="$("$VENV/bin/python" -m pip show linode-cli 2>/dev/null || true)"
if [[ -x "$BIN" ]] && grep -qx "Version: $VERSION" <<<"$installed"; then
  echo "$BIN"
  exit 0
fi
command -v python3 >/dev/null || { echo "python3 is not on PATH" >&2; exit 3; }
python3 -c "import venv, ensurepip" 2>/dev/null || { echo "python3 lacks the venv/ensurepip modules" >&2; exit 3; }
mkdir -p "$(dirname "$VENV")"
rm -rf "$VENV"
python3 -m venv "$VENV" >&2 || { echo "python3 -m venv failed" >&2; exit 3; }
"$VENV/bin/python" -m pip --version >/dev/null 2>&1 || { echo "pip is unavailable in the venv" >&2; exit 3; }
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "linode-cli==$VERSION" >&2
echo "$BIN"
