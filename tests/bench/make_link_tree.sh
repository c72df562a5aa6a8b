#!/bin/bash
# A tree of hard links to small real torch files from the demo dumps,
# named as SGLang's dumper v1 does:
#   DIR/ref/sglang_dump_1.0/forward_pass_id=P___rank=R___name=stageSS___dump_index=I___layer_id=L.pt
#   DIR/target/sglang_dump_2.0/... (the same names)
# PASSES x RANKS x LAYERS x STAGES files a side; dump_index counts per rank
# across passes, as the dumper's counter does. Layers below DIVERGE link
# to layer 0's hidden_in of rank 0 (ok, cos 1); layers from DIVERGE on to
# layer 8's hidden_in of rank 1, where the demo's target has the bug (cos
# 0.86, band bug): those pairs diverge and get root-cause hints, as in a
# real run past its first divergence. DIVERGE defaults to LAYERS (none).
# Made once under a lock (DIR.lock, a directory) and marked done with
# DIR/.done, so several benches (and helpers) share it. The same layout as
# bench_tui.sh's trees (its 1m preset, /tmp/bench-1m, has no diverging
# layer).
# BAD_REF and BAD_TGT (files) replace the diverging pair's two files (a
# target with NaN: a run whose NaN spreads from its origin).
#   usage: tests/bench/make_link_tree.sh DIR PASSES RANKS LAYERS STAGES [DIVERGE]
# Issue 24's trees: DIR 1 64 61 13 39 = 101,504 files, 18,304 pairs
# diverging (a second); DIR 8 64 61 13 39 = 812,032 files (a minute).
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
W=$1 PASSES=$2 RANKS=$3 LAYERS=$4 STAGES=$5 DIVERGE=${6:-$4}
[ -f "$W/.done" ] && exit 0
until mkdir "$W.lock" 2>/dev/null; do
	# another process makes it: wait for its mark (or its lock to go)
	[ -f "$W/.done" ] && exit 0
	sleep 1
done
trap 'rmdir "$W.lock"' EXIT
[ -f "$W/.done" ] && exit 0
demo() { ls "$SRC"/tests/fixtures/demo/$1/*/forward_pass_id=0___rank=$2___name=hidden_in___dump_index=*___layer_id=$3.pt; }
rm -rf "$W"
mkdir -p "$W/ref/sglang_dump_1.0" "$W/target/sglang_dump_2.0"
# one process makes all the links (a fork per link takes minutes at 100k)
perl -e '
	my ($w, $passes, $ranks, $layers, $stages, $diverge, @srcs) = @ARGV;
	my %orig = (ref => [$srcs[0], $srcs[2]], target => [$srcs[1], $srcs[3]]);
	for my $side ("ref", "target") {
		my $d = "$w/$side/" . ($side eq "ref" ? "sglang_dump_1.0" : "sglang_dump_2.0");
		# copies, never the fixtures themselves: a link count past the
		# 65,000 of ext4 would stop the next tree
		my @src;
		my @nlinks = (50000, 50000);
		my $copies = 0;
		for my $r (0 .. $ranks - 1) {
			my $i = 0;
			for my $p (0 .. $passes - 1) {
				for my $l (0 .. $layers - 1) {
					my $k = $l >= $diverge ? 1 : 0;
					for my $s (0 .. $stages - 1) {
						my $n = sprintf("forward_pass_id=%d___rank=%d___name=stage%02d___dump_index=%d___layer_id=%d.pt",
						                $p, $r, $s, $i, $l);
						if (++$nlinks[$k] > 50000) {
							# ext4 allows 65,000 links to one inode
							my $c = "$w/.src-$side-" . $copies++ . ".pt";
							system("cp", $orig{$side}[$k], $c) == 0 or die "cp $c\n";
							$src[$k] = $c;
							$nlinks[$k] = 1;
						}
						link($src[$k], "$d/$n") or die "link $d/$n: $!\n";
						$i++;
					}
				}
			}
		}
	}' "$W" "$PASSES" "$RANKS" "$LAYERS" "$STAGES" "$DIVERGE" \
	"$(demo ref 0 0)" "$(demo target 0 0)" "${BAD_REF:-$(demo ref 1 8)}" "${BAD_TGT:-$(demo target 1 8)}"
touch "$W/.done"
