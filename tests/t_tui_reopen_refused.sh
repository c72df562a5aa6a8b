#!/bin/bash
# A tree with a file the reader refuses keeps its snapshot (issue 24): the
# refused file's error is stored with the index, so a reopen comes from the
# snapshots and reads only that file again (DUMPBISECT_TIMING's
# files_opened), and still shows the error as a fresh scan does. When the
# file reads again, the reopen scans and the error is gone.
. "$DB_SRC/tests/tui/lib.sh"

W=$T/w
mkdir -p "$W"
cp -r "$DB_FIXTURES/demo/ref" "$DB_FIXTURES/demo/target" "$W/"
TD=$(echo "$W"/target/sglang_dump_*)
bad=forward_pass_id=0___rank=1___name=attn_out___dump_index=107___layer_id=7.pt
cp "$TD/$bad" "$T/good.pt"
head -c 100 "$T/good.pt" >"$TD/$bad"    # a torch file cut short
nfiles=$(find "$W/ref" "$W/target" -name '*.pt' | wc -l)

open_w() {  # NAME [cache dir]: as t_tui_reopen.sh
	local name=$1 env="DUMPBISECT_TIMING=$T/$1.timing"
	[ $# -gt 1 ] && env="$env XDG_CACHE_HOME=$2"
	rm -f "$T/$name.timing"
	DB_FIXTURES=$W TUI_ENV=$env tui_run 160 40 ref target <<EOS
:save-display $T/$name.screen
EOS
}
from() { grep -qx "open_from $2" "$T/$1.timing"; }
same_as_fresh() { cmp -s <(sed '$d' "$T/$1.screen") <(sed '$d' "$T/$2.screen"); }
opened() { awk '$1 == "files_opened" { print $2 }' "$T/$1.timing"; }

open_w first
check "a first open lists the tree" from first listing
check "the first open reads every file ($(opened first) of $nfiles)" \
	test "$(opened first)" -ge "$nfiles"
check "the refused file shows as an error" grep -q '‽' "$T/first.screen"

open_w again
rm -rf "$T/fresh"; open_w again_fresh "$T/fresh"
check "a tree with a refused file reopens from its snapshots" from again snapshots
check "the reopen reads the refused file only ($(opened again))" test "$(opened again)" = 1
check "the reopen equals a fresh scan" cmp -s "$T/again.screen" "$T/again_fresh.screen"
check "the reopen equals the first open" cmp -s "$T/again.screen" "$T/first.screen"
check "the listing of errors (ls) still names it" bash -c \
	"cd '$W' && HOME='$T/home' '$DB_BIN' ls target | grep -q '$bad'"

# the file reads again, its size, mtime and directory mtime put back: the
# stored error no longer holds, so the open scans (not the stale error)
touch -r "$TD" "$T/dirstamp"
touch -r "$TD/$bad" "$T/filestamp"
cp "$T/good.pt" "$TD/$bad.new" && mv "$TD/$bad.new" "$TD/$bad"
touch -r "$T/filestamp" "$TD/$bad"
touch -r "$T/dirstamp" "$TD"
open_w healed
rm -rf "$T/fresh"; open_w healed_fresh "$T/fresh"
check "a refused file that reads now: the error is gone" same_as_fresh healed healed_fresh
finish
