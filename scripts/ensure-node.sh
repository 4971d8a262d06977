# Sourced by dev.sh and .ci/run: makes a Node.js >= 22.19 the `node` on PATH.
# A machine whose Node is older (Debian's is 20, end of life) gets Node 24 LTS from the npm
# registry's `node` package, cached outside the repository; a machine with a new enough Node
# keeps its own and pays nothing.
NODE_PIN=24.21.0
_node_ok() { command -v node >/dev/null 2>&1 && node -e '
  const [a, b] = process.versions.node.split(".").map(Number);
  process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)' 2>/dev/null; }
if ! _node_ok; then
  _cache="${LINODE_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/linode-operator}/node-$NODE_PIN"
  if [ ! -x "$_cache/node_modules/node/bin/node" ]; then
    command -v npm >/dev/null 2>&1 || { echo "npm is needed to fetch Node.js $NODE_PIN" >&2; return 1 2>/dev/null || exit 1; }
    echo "Fetching Node.js $NODE_PIN from the npm registry into $_cache" >&2
    mkdir -p "$_cache"
    npm install --prefix "$_cache" --no-save --no-audit --no-fund --loglevel=error "node@$NODE_PIN" >&2
  fi
  export PATH="$_cache/node_modules/node/bin:$PATH"
  _node_ok || { echo "could not get Node.js >= 22.19" >&2; return 1 2>/dev/null || exit 1; }
fi
unset -f _node_ok
