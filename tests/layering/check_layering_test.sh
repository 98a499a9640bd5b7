#!/usr/bin/env bash
# The layering rules hold on the tree, and both guards catch a deliberately added violation:
# .ci/check-layering on a copy of the tree, and the compiler through the module's include root.
#
#   tests/layering/check_layering_test.sh SOURCE_DIR BINARY_DIR
set -euo pipefail
src="$1"
bin="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$src/.ci/check-layering" "$src" >/dev/null || fail "the tree itself breaks the layering rules"

copy() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree"
  cp -r "$src/src" "$src/include" "$src/docs" "$src/CMakeLists.txt" "$work/tree/"
}

# An upward include: core naming a tools header.
copy
sed -i '1i #include "talaria/tools/session.h"' "$work/tree/src/core/dispatcher.cpp"
if out="$("$src/.ci/check-layering" "$work/tree")"; then fail "an upward include passed the check"; fi
grep -q 'src/core/dispatcher.cpp:1: #include "talaria/tools/session.h": module core does not use tools' \
  <<<"$out" || fail "the upward include was not named: $out"

# Another module's private header: tools reaching into guard's internals.
copy
sed -i '1i #include "guard/guard_internal.h"' "$work/tree/src/tools/session.cpp"
if out="$("$src/.ci/check-layering" "$work/tree")"; then fail "a private include passed the check"; fi
grep -q 'a private header of module guard' <<<"$out" || fail "the private include was not named: $out"

# A module folder the table does not declare.
copy
mkdir "$work/tree/src/stray"
if out="$("$src/.ci/check-layering" "$work/tree")"; then fail "an undeclared module passed"; fi
grep -q 'src/stray/ is not a module' <<<"$out" || fail "the stray folder was not named: $out"

# A module missing from the design document's table.
copy
sed -i '/^| `search` |/d' "$work/tree/docs/ARCHITECTURE.md"
if out="$("$src/.ci/check-layering" "$work/tree")"; then fail "a module missing from the doc passed"; fi
grep -q 'module search is missing from the module table' <<<"$out" || fail "not named: $out"

# The compiler refuses the same upward include through core's include root.
view="$bin/module_view/core"
[[ -d "$view/public" ]] || fail "no include root for core under $view"
printf '#include "talaria/core/registry.h"\n' >"$work/ok.cpp"
"${CXX:-c++}" -std=c++20 -fsyntax-only -I"$view/public" -I"$view/private" "$work/ok.cpp" \
  || fail "core's own public header does not compile through its include root"
printf '#include "talaria/tools/session.h"\n' >"$work/up.cpp"
if "${CXX:-c++}" -std=c++20 -fsyntax-only -I"$view/public" -I"$view/private" "$work/up.cpp" \
  2>"$work/err"; then
  fail "core's include root lets it include a tools header"
fi
grep -q 'talaria/tools/session.h' "$work/err" || fail "unexpected compiler error: $(cat "$work/err")"
echo "layering: the tree passes; upward, private, undeclared and undocumented cases are caught"
