#!/usr/bin/env bash
# Installs the build tree to a scratch prefix, builds examples/embed against it with
# find_package(talaria), runs it, and checks what it printed.
set -euo pipefail
build_dir=$1 example_dir=$2 cxx=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$example_dir" -B "$work/build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
ninja -C "$work/build" >/dev/null
export TALARIA_HOME="$work/home"
out=$(LD_LIBRARY_PATH="$work/prefix/lib" "$work/build/embed_example")
echo "$out"
grep -q '^add -> {"sum":42}$' <<<"$out"
grep -q '^bad -> {"error":"Invalid arguments for add' <<<"$out"
grep -q "^tools in 'all': " <<<"$out"
echo "embed example OK"
