#!/bin/bash
# Reopening a tree (issue 12): the workbench opens an unchanged tree from
# the last open's snapshots (directory stamps only, no listing) and checks
# every file behind the first frame. Each screen is taken once the program
# is idle (the check done) and must equal a fresh scan's (no cache):
#   1. unchanged: served from the snapshots, nothing to say;
#   2. a file rewritten in place (same name, size and mtime; only inode
#      ctime tell) is caught by the check: rescanned, the new numbers shown;
#   3. a removed and an added file behind a directory mtime put back (touch
#      -r) are caught by the check too; without the mtime put back the
#      stamps differ and the open lists the tree.
. "$DB_SRC/tests/tui/lib.sh"

W=$T/w
mkdir -p "$W"
cp -r "$DB_FIXTURES/demo/ref" "$DB_FIXTURES/demo/target" "$W/"
TD=$(echo "$W"/target/sglang_dump_*)
RD=$(echo "$W"/ref/sglang_dump_*)
bad=forward_pass_id=0___rank=1___name=attn_out___dump_index=107___layer_id=7.pt
gone=forward_pass_id=0___rank=0___name=hidden_out___dump_index=169___layer_id=11.pt

# open NAME [cache dir]: the workbench on $W (its own HOME cache unless a
# fresh one is given), the idle screen in $T/NAME.screen, timings in
# $T/NAME.timing
open_w() {
	local name=$1 env="DUMPBISECT_TIMING=$T/$1.timing"
	[ $# -gt 1 ] && env="$env XDG_CACHE_HOME=$2"
	rm -f "$T/$name.timing"
	DB_FIXTURES=$W TUI_ENV=$env tui_run 160 40 ref target <<EOF
:save-display $T/$name.screen
EOF
}
# fresh NAME: a scan without any cache, for comparison
fresh() { rm -rf "$T/fresh"; open_w "$1" "$T/fresh"; }
from() { grep -qx "open_from $2" "$T/$1.timing"; }
# the screen without its bottom line (the message) equals a fresh scan's
same_as() { cmp -s <(sed '$d' "$T/$1.screen") <(sed '$d' "$T/$2.screen"); }
keep_dir_mtime() { touch -r "$1" "$T/dirstamp"; }
put_dir_mtime() { touch -r "$T/dirstamp" "$1"; }

open_w first
check "a first open lists the tree" from first listing

# 1. unchanged
open_w again
fresh again_fresh
check "an unchanged tree reopens from its snapshots" from again snapshots
check "the check ran behind the first frame" grep -q '^verify_ms ' "$T/again.timing"
check "the fresh scan lists" from again_fresh listing
check "the reopen equals a fresh scan" cmp -s "$T/again.screen" "$T/again_fresh.screen"
check "the reopen equals the first open" cmp -s "$T/again.screen" "$T/first.screen"
check "nothing changed, nothing said" bash -c "! grep -q 'changed' '$T/again.screen'"

# 2. rewritten in place: the ref's bytes (same size) into the target file,
# its mtime and its directory's put back
keep_dir_mtime "$TD"
touch -r "$TD/$bad" "$T/filestamp"
cat "$RD/$bad" >"$TD/$bad"
touch -r "$T/filestamp" "$TD/$bad"
put_dir_mtime "$TD"
open_w rewritten
fresh rewritten_fresh
check "a rewrite in place keeps the stamps: from snapshots" from rewritten snapshots
check "the check found the rewrite" grep -q 'files changed since the last open: rescanned' \
	"$T/rewritten.screen"
check "the new numbers are shown (as a fresh scan)" same_as rewritten rewritten_fresh
check "the numbers changed" bash -c "! cmp -s '$T/rewritten.screen' '$T/again.screen'"

# 3a. a file removed, the directory's mtime put back
keep_dir_mtime "$TD"
mv "$TD/$gone" "$T/"
put_dir_mtime "$TD"
open_w removed
fresh removed_fresh
check "a removal behind the old mtime: from snapshots" from removed snapshots
check "the check found the removal" grep -q 'files changed since the last open: rescanned' \
	"$T/removed.screen"
check "the removal is shown (as a fresh scan)" same_as removed removed_fresh
check "the numbers changed" bash -c "! cmp -s '$T/removed.screen' '$T/rewritten.screen'"

# 3b. the file added back, the directory's mtime put back
keep_dir_mtime "$TD"
mv "$T/$gone" "$TD/"
put_dir_mtime "$TD"
open_w added
fresh added_fresh
check "an addition behind the old mtime: from snapshots" from added snapshots
check "the check found the addition" grep -q 'files changed since the last open: rescanned' \
	"$T/added.screen"
check "the addition is shown (as a fresh scan)" same_as added added_fresh
check "back to the rewritten tree's numbers" same_as added rewritten

# 3c. removed again, the directory's mtime left as it is: the stamps
# differ and the open lists the tree before the first frame
mv "$TD/$gone" "$T/"
open_w removed2
check "a new directory mtime: the open lists" from removed2 listing
check "the listing shows the removal" same_as removed2 removed_fresh
finish
