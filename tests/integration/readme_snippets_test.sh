#!/usr/bin/env bash
# Every ```cpp block of README.md, built against the installed package with
# find_package(talaria) as a newcomer would, then run: the README's code stays true. Each block
# is a whole program whose main returns 0 when what the README says holds.
set -euo pipefail
build_dir=$1 readme=$2 cxx=$3
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
awk -v dir="$work/blocks" '
  /^```cpp$/ { n++; inside = 1; system("mkdir -p " dir "/" n); file = dir "/" n "/main.cpp"; next }
  /^```$/ && inside { inside = 0; close(file); next }
  inside { print > file }
' "$readme"
blocks=$(ls "$work/blocks" 2>/dev/null | wc -l)
[ "$blocks" -gt 0 ] || { echo "no cpp block in $readme"; exit 1; }
for dir in "$work"/blocks/*; do
  cat > "$dir/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(readme_block CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(talaria REQUIRED)
add_executable(block main.cpp)
target_link_libraries(block PRIVATE talaria::talaria)
CMAKE
  cmake -S "$dir" -B "$dir/build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
  ninja -C "$dir/build" >/dev/null
  mkdir -p "$dir/run"
  (cd "$dir/run" && TALARIA_HOME="$work/home/.talaria" HOME="$work/home" \
     LD_LIBRARY_PATH="$work/prefix/lib" "$dir/build/block")
  echo "README cpp block $(basename "$dir") builds and runs"
done
echo "README snippets OK ($blocks)"
