#!/usr/bin/env bash
# Runs the talaria workloads of WORKLOADS.md: every workload in its own process, the whole
# suite --repeat K times (default 3), then one `METRIC <name> <median> <unit>` line per metric.
# Per-repeat lines are printed first, prefixed with '#'. Checksums (unit "hash") must be equal
# in every repeat; any mismatch or failing workload makes the script exit non-zero.
#
#   bench/run.sh [--repeat K] [--quick] [--only W1,W3b,...] [--bin path/to/talaria_bench]
#
# Without --bin: $TALARIA_BENCH, else build-bench/ or build/ of this checkout.
set -euo pipefail

repeat=3
quick=()
only=""
bin="${TALARIA_BENCH:-}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --repeat) repeat="$2"; shift 2 ;;
    --quick) quick=(--quick); shift ;;
    --only) only="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 64 ;;
  esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -z "$bin" ]]; then
  for candidate in "$root/build-bench/bench/talaria_bench" "$root/build/bench/talaria_bench"; do
    if [[ -x "$candidate" ]]; then bin="$candidate"; break; fi
  done
fi
if [[ -z "$bin" || ! -x "$bin" ]]; then
  echo "run.sh: talaria_bench not found; build it or pass --bin" >&2
  exit 1
fi

if [[ -n "$only" ]]; then
  IFS=',' read -r -a workloads <<<"$only"
else
  mapfile -t workloads < <("$bin" list)
fi

all="$(mktemp)"
trap 'rm -f "$all"' EXIT
status=0
for ((rep = 1; rep <= repeat; rep++)); do
  for w in "${workloads[@]}"; do
    out="$("$bin" "${quick[@]}" "$w")" || { echo "run.sh: $w failed in repeat $rep (exit $?)" >&2; status=1; }
    while read -r tag name value unit; do
      [[ "$tag" == METRIC ]] || continue
      echo "# repeat $rep: METRIC $name $value $unit"
      echo "$name $value $unit" >>"$all"
    done <<<"$out"
  done
done

# Median per metric, in first-seen order; hashes must agree across repeats.
awk '
  { if (!($1 in count)) { order[++n] = $1; unit[$1] = $3 }
    vals[$1, ++count[$1]] = $2 }
  END {
    bad = 0
    for (i = 1; i <= n; i++) {
      m = order[i]; c = count[m]
      if (unit[m] == "hash") {
        for (j = 2; j <= c; j++) if (vals[m, j] != vals[m, 1]) {
          printf "run.sh: %s differs across repeats (%s vs %s)\n", m, vals[m, 1], vals[m, j] > "/dev/stderr"; bad = 1
        }
        printf "METRIC %s %s %s\n", m, vals[m, 1], unit[m]
        continue
      }
      for (j = 1; j <= c; j++) a[j] = vals[m, j] + 0
      for (j = 2; j <= c; j++) { v = a[j]; k = j - 1; while (k >= 1 && a[k] > v) { a[k + 1] = a[k]; k-- } a[k + 1] = v }
      med = (c % 2) ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
      printf "METRIC %s %.10g %s\n", m, med, unit[m]
    }
    exit bad
  }' "$all" || status=1
exit "$status"
