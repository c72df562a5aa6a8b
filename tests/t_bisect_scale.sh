#!/bin/bash
# Replay and bisect stay linear in steps and layers (issue 26 item 10). The
# state machine kept each derived field by a pass over every layer and
# every step at each step (recompute), and a session's steps were checked
# against its layers pairwise: a session of 600k steps or 50k layers took
# over 60 s to replay, and so did `bisect --layers 100000` (its search walks
# ~100k undumped layers one skip at a time). Each run below is bounded by
# timeout, far below what the quadratic cost needs, and checked for its
# result: the demo's first bad layer is L7 whatever the candidates.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
need_python "to write the big sessions"
fresh_tmp
# steps, layers, bisect's --layers (a tenth under the sanitizer: common.sh)
S=100000 L=50000 B=100000
sanitized && S=10000 L=5000 B=10000
D=$DB_FIXTURES/demo
cd "$DB_TMP" || exit 1
expect 0 "start" "$DB_BIN" bisect start "$D/ref" "$D/target" --session base.yaml
"$PY" - "$S" "$L" <<'PY'
import re, sys
S, L = int(sys.argv[1]), int(sys.argv[2])
head = open('base.yaml').read().split('\nsteps:')[0]
tail = '\nmarks: []\nnotes: []\nview: {}\n'
step = "- {layer: %s, verdict: %s, by: user, auto: none, cos: .nan, rel: .nan, band: -, time: 0}"
# 100k steps: every layer skipped over and over, then final bad
steps = [step % (i % 12, "skip") for i in range(S)] + [step % ("final", "bad")]
open('steps.yaml', 'w').write(head + '\nsteps:\n' + '\n'.join(steps) + tail)
# 50k candidate layers (the demo dumps 12), final bad
layers = 'layers: [' + ', '.join(str(i) for i in range(L)) + ', final]'
open('layers.yaml', 'w').write(re.sub(r'layers: \[[^\]]*\]', layers, head) + '\nsteps:\n' +
                               step % ("final", "bad") + tail)
PY

expect 1 "replay of 100k steps" timeout 60 "$DB_BIN" replay steps.yaml
has "$out" "first bad layer: then none (only-skipped), now L7" "replay of 100k steps"
expect 0 "bisect log of 100k steps" timeout 60 "$DB_BIN" bisect log --session steps.yaml
[ "$(grep -c '^dumpbisect bisect skip ' <<<"$out")" = $S ] || fail "bisect log: not $S skips"
expect 1 "replay of 50k layers" timeout 30 "$DB_BIN" replay layers.yaml
has "$out" "now L7" "replay of 50k layers"
expect 0 "a verdict on 50k layers" timeout 30 "$DB_BIN" bisect good 3 --session layers.yaml
has "$out" "next: L$(( (L + 2) / 2 ))" "the search over 50k layers goes on from the midpoint"
expect 1 "bisect --auto --layers $B" timeout 60 "$DB_BIN" bisect "$D/ref" "$D/target" --auto --layers $B
has "$out" "first bad layer L7" "bisect --layers 100000"
expect 1 "bisect --auto --layers $B --session" timeout 60 \
	"$DB_BIN" bisect "$D/ref" "$D/target" --auto --layers $B --session auto.yaml
has "$out" "first bad layer L7" "bisect --layers 100000 --session"
expect 0 "the saved session replays to L7" timeout 60 "$DB_BIN" replay auto.yaml
has "$out" "first bad layer: then L7, now L7" "the saved --auto session"
# the workbench opens the 50k-layer session at once
printf 'b\n:save-display %s/wb.screen\nQ\n' "$DB_TMP" >keys
expect 0 "workbench on 50k layers" timeout 30 env DUMPBISECT_SCRIPT=keys DUMPBISECT_WATCHDOG=25 \
	TERM=xterm LINES=30 COLUMNS=100 "$DB_BIN" --session layers.yaml
grep -q "Layer bisect" wb.screen 2>/dev/null || fail "the workbench does not show the bisect"
finish t_bisect_scale
