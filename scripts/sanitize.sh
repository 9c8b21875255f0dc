#!/usr/bin/env bash
# Runs compute-sanitizer's four tools over the lesson and the exercise.
# Usage: scripts/sanitize.sh [path/to/cg-lesson]   (default: target/release/cg-lesson)
# Prints each run's summary line; exits non-zero if any tool reports an error
# or the program fails. API errors are not reported: the lesson makes one on
# purpose (the cooperative launch one block too large), and the program itself
# checks every other call and exits non-zero on any it did not expect.
set -u
HOST=${1:-target/release/cg-lesson}
status=0
for tool in memcheck racecheck synccheck initcheck; do
  for args in "--n 611 --runs 1 --warmups 0" "--runs 1 --warmups 0" "exercise"; do
    log=$(compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 99 "$HOST" $args 2>&1)
    rc=$?
    summary=$(printf '%s\n' "$log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
    echo "$tool  cg-lesson $args  ->  ${summary:-no summary}  (exit $rc)"
    if [ "$rc" -ne 0 ]; then
      status=1
      printf '%s\n' "$log" | grep -vE "^(  |\s*$)" | head -20
    fi
  done
done
exit $status
