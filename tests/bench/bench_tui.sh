#!/bin/bash
# TUI benchmark (not a test): first frame on a tree of hard links (SGLang v1
# names) and keypress -> redraw latency at 200x60, from the binary's own
# timings (DUMPBISECT_TIMING), plus peak RSS (/usr/bin/time).
# Goals (issues 3, 5, 12): 10k files: first frame < 150 ms cold, < 50 ms
# reopen; 100k files: < 1 s cold, < 150 ms reopen, peak RSS < 256 MiB;
# key -> redraw < 10 ms p95. Run 1 starts with no caches (cold: every
# file parsed, every pair computed); runs 2 and 3 reopen the same tree (warm).
#   usage: [BENCH_TUI_SIZE=1k|10k|100k] tests/bench/bench_tui.sh [path/to/dumpbisect] [work dir]
# BENCH_TUI_SIZE picks the tree (default 10k):
#   1k    1 rank  x  25 layers x 20 stages x ref/target =   1,000 files
#   10k   1 rank  x 128 layers x 40 stages x ref/target =  10,240 files
#   100k 64 ranks x  61 layers x 13 stages x ref/target = 101,504 files
#         (a DeepSeek-V3-class run, issue 12)
#   1m   the 100k tree x 8 passes (forward_pass_id=0..7) = 812,032 files
#         (issue 24; kept in /tmp/bench-1m, made once under the lock
#         /tmp/bench-1m.lock, shared with bench_compare's users)
# BENCH_RANKS, BENCH_LAYERS, BENCH_STAGES override the preset's numbers.
# BENCH_BAD=N makes N files of each side unreadable (a torch file cut
# after 100 bytes: the reader refuses it), spread evenly; the tree gets a
# name of its own (issue 24: such a tree opens, counts and lists them).
# BENCH_TUI_DROP=1 (root) also drops the kernel's caches (page, dentry,
# inode: echo 3) before run 1, a first-ever open after a reboot; run 2
# then reopens with the directories cached by run 1 only.
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(realpath "${1:-$SRC/build/dumpbisect}")   # the runs cd elsewhere
SIZE=${BENCH_TUI_SIZE:-10k}
case $SIZE in
1k) RANKS=1 LAYERS=25 STAGES=20 ;;
10k) RANKS=1 LAYERS=128 STAGES=40 ;;
100k) RANKS=64 LAYERS=61 STAGES=13 ;;
1m) RANKS=64 LAYERS=61 STAGES=13 PASSES=8 ;;
*) echo "BENCH_TUI_SIZE: 1k, 10k, 100k or 1m" >&2; exit 2 ;;
esac
PASSES=${BENCH_PASSES:-${PASSES:-1}}
RANKS=${BENCH_RANKS:-$RANKS} LAYERS=${BENCH_LAYERS:-$LAYERS} STAGES=${BENCH_STAGES:-$STAGES}
BAD=${BENCH_BAD:-0}
if [ "$SIZE" = 1m ] && [ -z "${2:-}" ] && [ "$BAD" = 0 ]; then
	W=/tmp/bench-1m
	# one maker at a time; the other waits for its .done
	until [ -f "$W/.done" ] || mkdir /tmp/bench-1m.lock 2>/dev/null; do
		echo "waiting for another maker of $W" >&2; sleep 10
	done
else
	W=${2:-${TMPDIR:-/tmp}/dumpbisect-bench-tui-${RANKS}x${LAYERS}x${STAGES}$([ "$PASSES" = 1 ] || echo "x$PASSES")$([ "$BAD" = 0 ] || echo "-bad$BAD")}
fi

# The tree: every file a hard link to one small real torch file from the
# demo dumps (ref and target sides differ), named as SGLang's dumper does.
demo_ref=$(ls "$SRC"/tests/fixtures/demo/ref/*/forward_pass_id=0___rank=0___name=hidden_in___dump_index=*___layer_id=0.pt)
demo_tgt=$(ls "$SRC"/tests/fixtures/demo/target/*/forward_pass_id=0___rank=0___name=hidden_in___dump_index=*___layer_id=0.pt)
if [ ! -f "$W/.done" ]; then
	rm -rf "$W"
	mkdir -p "$W/ref/sglang_dump_1.0" "$W/target/sglang_dump_2.0"
	# one process makes all the links (a fork per link takes minutes at 100k)
	perl -e '
		my ($w, $ranks, $layers, $stages, $passes, $bad, $sref, $stgt) = @ARGV;
		my $per_side = $ranks * $passes * $layers * $stages;
		my $every = $bad ? int($per_side / $bad) : 0;
		for my $side ("ref", "target") {
			my $orig = $side eq "ref" ? $sref : $stgt;
			my ($src, $nlinks, $copies) = ($orig, 50000, 0);   # copies only: others link to the fixture too
			my $nth = 0;
			open(my $fh, "<", $orig) or die "$orig: $!\n";
			binmode $fh;
			read($fh, my $head, 100);
			close $fh;
			my $d = "$w/$side/" . ($side eq "ref" ? "sglang_dump_1.0" : "sglang_dump_2.0");
			for my $r (0 .. $ranks - 1) {
				my $i = 0;
				for my $p (0 .. $passes - 1) {
					for my $l (0 .. $layers - 1) {
						for my $s (0 .. $stages - 1) {
							my $n = sprintf("forward_pass_id=%d___rank=%d___name=stage%02d___dump_index=%d___layer_id=%d.pt",
							                $p, $r, $s, $i, $l);
							if ($every && $nth++ % $every == 0) {
								open(my $o, ">", "$d/$n") or die "$d/$n: $!\n";
								binmode $o;
								print $o $head;
								close $o;
								$i++;
								next;
							}
							if (++$nlinks > 50000) {
								# ext4 allows 65,000 links to one inode
								$src = "$w/.src-$side-" . $copies++ . ".pt";
								system("cp", $orig, $src) == 0 or die "cp $src\n";
								$nlinks = 1;
							}
							link($src, "$d/$n") or die "link $d/$n: $!\n";
							$i++;
						}
					}
				}
			}
		}' "$W" "$RANKS" "$LAYERS" "$STAGES" "$PASSES" "$BAD" "$demo_ref" "$demo_tgt"
	touch "$W/.done"
fi
[ "$W" != /tmp/bench-1m ] || rmdir /tmp/bench-1m.lock 2>/dev/null || true
nfiles=$(find "$W/ref" "$W/target" -name '*.pt' | wc -l)

# Keys: moves, pages, metric and transpose toggles, view round trips.
{
	for ((k = 0; k < 40; k++)); do echo '<Down>'; done
	for ((k = 0; k < 30; k++)); do echo '<Right>'; done
	for ((k = 0; k < 10; k++)); do echo '<PgDown>'; echo '<PgUp>'; done
	for ((k = 0; k < 10; k++)); do echo 'c'; echo 't'; done
	for ((k = 0; k < 10; k++)); do echo 'G'; echo 'g'; echo '<End>'; echo '<Home>'; done
	for ((k = 0; k < 5; k++)); do echo '<Enter>'; echo 'q'; echo 'L'; echo 'q'; done
	# the rank selector (each step rebuilds the grid for one rank) and the
	# ranks view of a cell: the 64-rank tree must stay usable (issue 12)
	for ((k = 0; k < 10; k++)); do echo 'r'; done
	for ((k = 0; k < 10; k++)); do echo 'R'; done
	for ((k = 0; k < 5; k++)); do echo 'a'; echo 'q'; done
} >"$W/keys"

run() {
	rm -f "$W/timing"
	(cd "$W" && env -i PATH=/usr/bin:/bin HOME="$W" TERM=xterm-256color LANG=C.UTF-8 \
		LINES=60 COLUMNS=200 DUMPBISECT_SCRIPT="$W/keys" DUMPBISECT_WATCHDOG=120 \
		DUMPBISECT_TIMING="$W/timing" /usr/bin/time -f '%U %S %M' -o "$W/cpu" "$BIN" ref target)
}
rm -rf "$W/.cache"      # run 1 is cold: no entry, index or metrics cache

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
echo "tree: $nfiles files, $RANKS ranks x $LAYERS layers x $STAGES stages x $PASSES passes x ref/target; screen 200x60"
for pass in 1 2 3; do
	[ "$pass" = 1 ] || echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ "$pass" = 1 ] && [ "${BENCH_TUI_DROP:-0}" = 1 ]; then
		sync
		echo 3 >/proc/sys/vm/drop_caches && echo "run 1: kernel caches dropped (echo 3)"
	fi
	run
	get() { awk -v k="$1" '$1 == k { print $2 }' "$W/timing"; }
	awk '$1 == "key" { print $3 }' "$W/timing" | sort -n >"$W/keys_ms"
	awk '$1 == "key" { print $4 }' "$W/timing" | sort -n >"$W/keys_cpu"
	n=$(wc -l <"$W/keys_ms")
	pct() { sed -n "$(( (n * $2 + 99) / 100 ))p" "$1"; }
	read -r cu cs rss_kb <"$W/cpu" || true
	printf 'run %d (%s): open %s ms, first frame %s ms, all metrics %s ms; process CPU %s s user + %s s sys (all keys included); peak RSS %.1f MiB (%.2f KiB/file)\n' \
		"$pass" "$([ "$pass" = 1 ] && echo cold || echo warm)" "$(get open_ms)" \
		"$(get first_frame_ms)" "$(get scan_done_ms)" "$cu" "$cs" \
		"$(echo "$rss_kb" | awk '{ print $1 / 1024 }')" "$(echo "$rss_kb $nfiles" | awk '{ print $1 / $2 }')"
	printf '       %d keys -> redraw: wall p50 %s ms, p95 %s ms, max %s ms; CPU p50 %s ms, p95 %s ms, max %s ms\n' \
		"$n" "$(pct "$W/keys_ms" 50)" "$(pct "$W/keys_ms" 95)" "$(tail -1 "$W/keys_ms")" \
		"$(pct "$W/keys_cpu" 50)" "$(pct "$W/keys_cpu" 95)" "$(tail -1 "$W/keys_cpu")"
	echo "       slowest keys (wall ms): $(awk '$1 == "key" { print $3, $2 }' "$W/timing" | sort -rn | head -4 | awk '{ printf "%s %s; ", $2, $1 }')"
	awk '$1 == "key" && ($2 == "r" || $2 == "R" || $2 == "a") { print $3 }' "$W/timing" | sort -n >"$W/keys_rank"
	awk '$1 == "key" && ($2 == "r" || $2 == "R" || $2 == "a") { print $4 }' "$W/timing" | sort -n >"$W/keys_rank_cpu"
	n=$(wc -l <"$W/keys_rank")
	[ "$n" -gt 0 ] && printf '       of which %d rank keys (r, R, a): wall p50 %s ms, p95 %s ms, max %s ms; CPU p95 %s ms, max %s ms\n' \
		"$n" "$(pct "$W/keys_rank" 50)" "$(pct "$W/keys_rank" 95)" "$(tail -1 "$W/keys_rank")" \
		"$(pct "$W/keys_rank_cpu" 95)" "$(tail -1 "$W/keys_rank_cpu")"
	# the tenth R: back to all ranks (issue 24: 13-16 ms before rkey24)
	awk '$1 == "key" && $2 == "R" && ++n == 10 { printf "       the tenth R (back to all ranks): wall %s ms, CPU %s ms\n", $3, $4 }' "$W/timing"
done
