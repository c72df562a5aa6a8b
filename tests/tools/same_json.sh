#!/usr/bin/env bash
# Proves a change is behaviour-neutral: builds BASE (a git revision) and the
# work tree, takes json_snapshot.sh of both and diffs them.  Used for the pure
# moves (the src/ folders); exits 1 on any difference.
#   tests/tools/same_json.sh [BASE]      (default BASE: HEAD)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
base=${1:-HEAD}
tmp=${SAME_JSON_TMP:-$(mktemp -d)}
git -C "$root" worktree add -f --detach "$tmp/base" "$base" >/dev/null
trap 'git -C "$root" worktree remove --force "$tmp/base"' EXIT
for w in base head; do
	src=$root; [ $w = base ] && src=$tmp/base
	cmake -S "$src" -B "$tmp/build-$w" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$tmp/build-$w" -j"$(nproc)" --target dumpbisect >/dev/null
done
# Both snapshots read the work tree's fixtures, so only the code differs.
bash "$root/tests/tools/json_snapshot.sh" "$tmp/build-base/dumpbisect" "$tmp/base-out"
bash "$root/tests/tools/json_snapshot.sh" "$tmp/build-head/dumpbisect" "$tmp/head-out"
if diff -r "$tmp/base-out" "$tmp/head-out" >"$tmp/diff"; then
	echo "same_json: identical ($(ls "$tmp/head-out" | wc -l) files, base $base)"
else
	echo "same_json: DIFFERENT from $base (see $tmp/diff):"; head -40 "$tmp/diff"; exit 1
fi
