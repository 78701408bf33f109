#!/usr/bin/env bash
# Shows that two builds of smith-calibrate write the same bytes: runs
# `replay --json` and `replay --trace` with each binary over every session
# directory under the given roots and compares the outputs byte for byte.
#
#   scripts/same-output.sh OLD_BINARY NEW_BINARY DIR...
#   scripts/same-output.sh /tmp/before target/release/smith-calibrate datasets/sessions /tmp/imported
#
# Prints each differing session and a count; exits 1 if any differed.
set -u
old=$1 new=$2
shift 2
same=0 differ=0
for root in "$@"; do
    for dir in "$root"/*/; do
        [ -f "$dir/transcript.jsonl" ] || continue
        for mode in --json --trace; do
            if cmp -s <("$old" replay "$dir" "$mode" 2>&1) <("$new" replay "$dir" "$mode" 2>&1); then
                same=$((same + 1))
            else
                differ=$((differ + 1))
                echo "differs: $dir $mode"
            fi
        done
    done
done
echo "$same outputs identical, $differ differ"
[ "$differ" -eq 0 ]
