# Source this file (". scripts/node24.sh"): it puts Node.js 24 first on PATH,
# installing it from the npm registry into ~/.cache/node24 when the machine's
# own Node is older. The registry's `node` package ships the official binary.
NODE24_PREFIX="${NODE24_PREFIX:-$HOME/.cache/node24}"
if ! "$NODE24_PREFIX/node_modules/.bin/node" --version 2>/dev/null | grep -q '^v24\.'; then
  echo "Installing Node.js 24 into $NODE24_PREFIX ..." >&2
  npm install --prefix "$NODE24_PREFIX" --no-audit --no-fund node@24 >&2
fi
export PATH="$NODE24_PREFIX/node_modules/.bin:$PATH"
node --version | grep -q '^v24\.' || { echo "Node.js 24 is not available" >&2; return 1 2>/dev/null || exit 1; }
