#!/usr/bin/env bash
# `npm test`: build, then vitest with the four checks (tsc, svelte-check, ESLint, Prettier) beside
# it at the lowest priority (nice 19). The tests leave about a fifth of the two cores idle (they
# wait on processes they start); the checks, ~95 s of CPU, take that instead of a minute and more
# before the tests, and take next to nothing from the tests while both want the CPU. On a machine
# busy with other work they get their CPU when the tests end: the run is then as long as with the
# checks first. Ends with each step's time and the 20 slowest test files.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
timings=()
step_started=$started
step_done() {
  local now
  now=$(date +%s)
  timings+=("$(printf '%5d s  %s' $((now - step_started)) "$1")")
  step_started=$now
}

npm run build
step_done "build (with the web UI)"

work=$(mktemp -d "${TMPDIR:-/tmp}/runner-ci.XXXXXX")
# Each check writes its output and exit status to $work; a failure's output is printed after the
# tests, which run whatever the checks found.
checks=(tsc svelte-check eslint prettier)
check() {
  local name=$1
  shift
  (
    set +e
    local t0
    t0=$(date +%s)
    nice -n 19 "$@" >"$work/$name.log" 2>&1
    echo "$? $(($(date +%s) - t0))" >"$work/$name.status"
  ) &
}
check tsc npx tsc -p tsconfig.json --noEmit
check svelte-check npm run check -w ui
check eslint npx eslint .
check prettier npx prettier --check .

tests=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$work/vitest.json" || tests=$?
step_done "vitest (the checks beside it)"
wait
step_done "what was left of the checks once the tests had ended"

failed=0
for name in "${checks[@]}"; do
  if [ ! -f "$work/$name.status" ]; then
    failed=1
    echo "---- $name ended without a status"
    continue
  fi
  read -r status seconds <"$work/$name.status"
  timings+=("$(printf '%5d s    %s (exit %d)' "$seconds" "$name" "$status")")
  if [ "$status" != 0 ]; then
    failed=1
    echo "---- $name failed (exit $status):"
    cat "$work/$name.log"
  fi
done

echo
if [ -f "$work/vitest.json" ]; then node test/slowest-files.mjs "$work/vitest.json" 20 || true; fi
echo
echo "Steps:"
printf '%s\n' "${timings[@]}"
echo "$(printf '%5d s' $(($(date +%s) - started)))  in all"
rm -rf "$work"
[ "$tests" = 0 ] && [ "$failed" = 0 ]
