#!/usr/bin/env bash
# Shows that two builds of smith-calibrate write the same bytes, for a
# refactor that must not change behaviour. With each binary it runs, and
# compares byte for byte (cmp, never through a JSON parser):
#
#   - `replay --json` and `replay --trace` of every session under the roots,
#     also under two other policies (codex, context-editing);
#   - `transcript show` and `transcript show --at 3` of every session;
#   - per root: sweeps with several option sets (smith's grid, every policy,
#     two estimators, policy knobs and --cold-compact-at, a grid file), each
#     with its printed table, --json, every data file it writes (CSV,
#     Parquet, summary.json) and the report's index.html; `calibrate --json`;
#   - `--help` of every command and subcommand, the man pages, completions.
#
# summary.json and index.html hold the sweep's wall time; those lines are
# left out of the comparison and nothing else is.
#
#   scripts/same-output.sh OLD_BINARY NEW_BINARY DIR...
#   scripts/same-output.sh /tmp/before target/release/smith-calibrate datasets/sessions /tmp/imported
#
# Prints each differing output and a count; exits 1 if any differed.
set -u
old=$1 new=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
same=0 differ=0

# Runs the same arguments with both binaries, comparing stdout+stderr and
# the exit status. `@OUT@` in an argument becomes a directory of its own per
# binary, whose files are compared too.
check() {
    local label=$1
    shift
    local side bin
    for side in old new; do
        bin=${!side}
        rm -rf "$work/$side" && mkdir -p "$work/$side"
        local args=()
        for a in "$@"; do args+=("${a//@OUT@/$work/$side/out}"); done
        "$bin" "${args[@]}" >"$work/$side.stdout" 2>&1
        echo "exit $?" >>"$work/$side.stdout"
        # The outputs name their own directory; make the two sides alike.
        # Wall time and speed are the only figures allowed to differ.
        sed -i -e "s#$work/$side/out#OUT#g" \
            -e 's/ in [0-9.]*s ([0-9.]* MB\/s/ in Ts (S MB\/s/' "$work/$side.stdout"
    done
    compare "$label" "$work/old.stdout" "$work/new.stdout"
    if [ -d "$work/old/out" ] || [ -d "$work/new/out" ]; then
        local f
        for f in $( (cd "$work/old/out" 2>/dev/null && find . -type f; cd "$work/new/out" 2>/dev/null && find . -type f) | sort -u); do
            local a="$work/old/out/$f" b="$work/new/out/$f"
            case "$f" in
            *summary.json | *index.html | *.journal*)
                for x in "$a" "$b"; do
                    [ -f "$x" ] && sed -i -e '/elapsed/d' -e '/"threads"/d' -e "s#$work/\(old\|new\)/out#OUT#g" "$x"
                done
                ;;
            esac
            compare "$label: $f" "$a" "$b"
        done
    fi
}

compare() {
    if cmp -s "$2" "$3"; then
        same=$((same + 1))
    else
        differ=$((differ + 1))
        echo "differs: $1"
    fi
}

for root in "$@"; do
    for dir in "$root"/*/; do
        [ -f "$dir/transcript.jsonl" ] || continue
        for mode in --json --trace; do
            check "replay $dir $mode" replay "$dir" "$mode"
        done
        check "replay $dir --policy codex --json" replay "$dir" --policy codex --json
        check "replay $dir --policy context-editing --trace" replay "$dir" --policy context-editing --trace
        check "transcript show $dir" transcript show "$dir"
        check "transcript show $dir --at 3" transcript show "$dir" --at 3
    done
    check "sweep $root" sweep "$root" -j 2 --out @OUT@
    check "sweep $root grid+report" sweep "$root" -j 2 --compact-at 0.7,0.8,0.9 --compact-to 0.4..0.6:0.1 --report @OUT@
    check "sweep $root every policy --json" sweep "$root" -j 2 --policy smith,masking,claude-code,codex,opencode,context-editing --json --out @OUT@
    check "sweep $root estimators" sweep "$root" -j 2 --estimator bytes4,cl100k --compact-at 0.7,0.8 --out @OUT@
    check "sweep $root policy knobs" sweep "$root" -j 2 --policy smith,masking,codex --mask-window 5,10 \
        --codex-cap-bytes 4096,10240 --cold-compact-at 0,0.55 --max-tokens 100000,200000 --out @OUT@
    printf 'compact-at = [0.75, "0.85..0.95:0.05"]\nwindow = 2\nratio = 1.2\n' >"$work/grid.toml"
    check "sweep $root --grid" sweep "$root" -j 2 --grid "$work/grid.toml" --rank-by price_total --top 3
    check "sweep $root bad grid" sweep "$root" --compact-at 0.9..0.7:0.1
    check "calibrate $root --json" calibrate "$root" --json
done

# The names in a help's command list: lines with exactly two spaces, then a
# name (wrapped descriptions are indented further).
subcommands() { "$old" "$@" --help | sed -n '/^Commands:/,/^$/p' | grep -oE '^  [a-z][a-z0-9-]*' | grep -v ' help$'; }
commands=$(subcommands)
check "--help" --help
for c in $commands; do
    check "$c --help" "$c" --help
    for s in $(subcommands "$c"); do
        check "$c $s --help" "$c" "$s" --help
    done
done
check "man pages" man --out @OUT@
check "completions bash" completions bash

echo "$same outputs identical, $differ differ"
[ "$differ" -eq 0 ]
