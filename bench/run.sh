#!/usr/bin/env bash
# Builds and runs the benchmarks: `bench/run.sh full|quick` (make bench / make bench-quick).
# full writes docs/BENCHMARKS.md; quick writes $BUILD_DIR/bench/BENCHMARKS-quick.md.
set -euo pipefail

mode="${1:-quick}"
case "$mode" in
  full) doc="docs/BENCHMARKS.md" ;;
  quick) doc="" ;;
  *) echo "usage: bench/run.sh full|quick" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
if [ ! -f "$build_dir/build.ninja" ]; then
  echo "bench/run.sh: $build_dir is not configured; run make build (or make bench) first" >&2
  exit 2
fi
cmake --build "$build_dir" --target millrace millrace_bench -j "${JOBS:-$(nproc)}"
[ -n "$doc" ] || doc="$build_dir/bench/BENCHMARKS-quick.md"

revision="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  revision="$revision (with uncommitted changes)"
fi
exec "$build_dir/bench/millrace_bench" --mode "$mode" --doc "$doc" --revision "$revision" \
  ${BENCH_ONLY:+--only "$BENCH_ONLY"}
