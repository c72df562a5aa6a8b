#!/bin/bash
# Issue 34 in the workbench (scripted keys) on realdump/steps_hook_tp2
# (decode_pos at L2 from decode step 3 = pass 3, cases_steps.tsv):
# 1. a finished bisect survives browsing: found on pass 3 headless, then
#    :pass 0 and b begins pass 0's, :pass 3 and b resumes the found one, and
#    the export (from pass 0) centres on it and lists both
# 2. a mark is on its pass: drawn on pass 3, not on pass 0; report.md's
#    marks table has its phase and pass
# 3. notes live beside the session: a session-less workbench's note written
#    from folder a is listed and exported from folder b; --notes DIR wins
# 4. + and - are logged "user", also when they agree with the data
# 5. :export with another session's report/ in the folder goes to its own
# 6. no "first diverging" on a tree where nothing diverges; a cut header
#    keeps what tells it (miles: "L1 self…core_attention", not "se…ion")
# 7. dumpbisect bisect --no-session opens the workbench keeping nothing
. "$DB_SRC/tests/tui/lib.sh"
R=realdump/steps_hook_tp2
W=$T/w
mkdir -p "$W"
S=$W/s.session
(cd "$DB_FIXTURES" && "$DB_BIN" bisect $R/ref $R/target --auto --session "$S" >/dev/null 2>&1) || true
check "headless: found on pass 3" grep -qx 'pass: "3"' "$S"

tui_run 100 30 --session "$S" <<EOF
:goto L2 self_attn.rotary_emb.0
:mark confirmed rotary at decode step 3
:save-display $T/mark3.screen
:pass 0
:goto L2 self_attn.rotary_emb.0
:save-display $T/mark0.screen
b
:save-display $T/b0.screen
+
:save-display $T/plus.screen
q
:pass 3
b
:save-display $T/b3.screen
q
:pass 0
:export
:save-display $T/export.screen
q
EOF
check "1: b on pass 0 begins its own, keeps pass 3's" grep_screen b0 \
	'^new bisect on pass 0; the one on pass 3 is kept \(b on pass 3 resumes it\)$'
check "1: b on pass 3 resumes the found bisect" grep_screen b3 \
	'^back to the bisect on pass 3 \(4 steps\); the one on pass 0 is kept$'
check "1: found L2 again" grep_screen b3 '^\[found\] first bad layer: L2$'
check "2: the mark is drawn on pass 3" grep_screen mark3 '^.L2 .*◆'
check "2: not on pass 0 (nor in its legend)" bash -c "! grep -q '◆' '$T/mark0.screen'"
check "4: + agreeing with auto is the user's" grep_screen plus '^  1  final  good  user '
check "4: logged so" grep -q '{layer: final, verdict: good, by: user, auto: good' "$S"
MD=$W/report/report.md
check "1: export from pass 0 names the found L2" grep -q '^first bad layer L2' "$MD"
check "1: both bisects, pass 3's first" python3 - "$MD" <<'PY'
import sys
log = open(sys.argv[1]).read().split("## Bisect log", 1)[1].split("## Marks", 1)[0]
assert 0 <= log.find("### pass 3") < log.find("### pass 0"), log
assert "| 1 | final | good | user |" in log, log
PY
check "2: the marks table carries the pass" grep -qx \
	'| - | 3 | L2 | `self_attn.rotary_emb.0` | all | confirmed | rotary at decode step 3 |' "$MD"
check "2: metrics.json too" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["marks"][0]
assert (m["phase"], m["pass"], m["layer"], m["stage"], m["rank"]) == ("", "3", 2, "self_attn.rotary_emb.0", "all"), m' \
	"$W/report/metrics.json"

# 5. another session beside it: :export goes to report-other/
O=$W/other.session
cp "$MD" "$T/s_report.md"
(cd "$DB_FIXTURES" && "$DB_BIN" bisect $R/ref $R/target --auto --session "$O" --pass 1 >/dev/null 2>&1) || true
tui_run 100 30 --session "$O" <<EOF
:export
:save-display $T/export_other.screen
EOF
check "5: the other session's export says where it went and why" grep_screen export_other \
	"^report/ is s\.session's: exported to .*/w/report-other$"
check "5: report/ is still s's" cmp -s "$MD" "$T/s_report.md"
check "5: report-other/ is other's" grep -qx -- "- session: \`$O\`" "$W/report-other/report.md"

# 3. session-less: a note written from folder a is found from folder b
mkdir -p "$T/a" "$T/b"
run_in() {
	local dir=$1
	shift
	cat >"$T/script"
	(cd "$dir" && env -i PATH=/usr/bin:/bin HOME="$T/home" TZ=UTC TERM=xterm-256color \
		LANG=C.UTF-8 LINES=30 COLUMNS=100 XDG_STATE_HOME="$T/state" \
		DUMPBISECT_SCRIPT="$T/script" DUMPBISECT_WATCHDOG=30 "$DB_BIN" "$@") \
		>"$T/stdout" 2>"$T/stderr" ||
		{ echo "FAIL: workbench in $dir" >&2; cat "$T/stderr" >&2; FAILS=$((FAILS + 1)); }
}
run_in "$T/a" "$DB_FIXTURES/$R/ref" "$DB_FIXTURES/$R/target" <<EOF
:note first look from a
:save-display $T/note_a.screen
q
EOF
check "3: no notes/ in the folder the workbench ran in" test ! -e "$T/a/notes"
check "3: the note is beside the session" test -n "$(find "$T/state" -path '*/notes/01_first_look_from_a.md')"
run_in "$T/b" "$DB_FIXTURES/$R/ref" "$DB_FIXTURES/$R/target" <<EOF
:view notes
:save-display $T/notes_b.screen
q
:export
q
EOF
check "3: from b, the notes view lists it" grep_screen notes_b '01.*first look from a'
check "3: from b, the export lists it" grep -q '^- \[01_first_look_from_a\.md\](.*) — first look from a$' \
	"$T/b/report/report.md"
run_in "$T/b" --notes "$T/mine" "$DB_FIXTURES/$R/ref" "$DB_FIXTURES/$R/target" <<EOF
:note given dir
q
EOF
check "3: --notes DIR wins" test -f "$T/mine/01_given_dir.md"

# 6. nothing diverges: no "first diverging"; miles' cut headline
tui_run 120 30 --no-session realdump/null_steps_v2/ref realdump/null_steps_v2/target <<EOF
:save-display $T/null.screen
EOF
check "6: a tree with no divergence: no 'first diverging'" bash -c \
	"grep -q '^phase -  pass \[0\] 1/4' '$T/null.screen' && ! grep -q 'first diverging' '$T/null.screen'"
tui_run 120 30 --no-session realdump/steps_hook_tp2/ref realdump/steps_hook_tp2/target <<EOF
:save-display $T/steps.screen
EOF
check "6: the diverging pass keeps its label" grep_screen steps 'pass \[3\] 4/4 .*first diverging'
tui_run 120 30 --no-session realdump/miles_tp2/ref realdump/miles_tp2/target <<EOF
:phase fwd_only
:save-display $T/miles.screen
EOF
check "6: the headline's cut stage tells it (self…core_attention)" grep_screen miles \
	'first: L1 self…core_att'
check "6: no two headers read the same" python3 - "$T/miles.screen" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
cols = next(l for l in lines if l.startswith("cos "))[17:].replace("▸", "").split()
assert len(cols) == len(set(cols)) and len(cols) >= 6, cols
PY

# Megatron's names at several widths, each phase: no cut header reads as
# another shown beside it
for ph in fwd_only fwd_bwd inference; do
	for cols in 64 90 140; do
		tui_run "$cols" 30 --no-session realdump/miles_tp2/ref realdump/miles_tp2/target <<EOF
:phase $ph
:save-display $T/m_${ph}_$cols.screen
EOF
		check "6: miles $ph at $cols columns: headers apart" python3 - "$T/m_${ph}_$cols.screen" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
cols = next(l for l in lines if l.startswith("cos "))[17:].replace("▸", "").replace("◂", "").split()
cut = [c.split("…") for c in cols if "…" in c]
full = [c for c in cols if "…" not in c]
assert len(cols) == len(set(cols)), cols
for h, t in cut:
    assert not [f for f in full if f.startswith(h) and f.endswith(t) and len(f) >= len(h) + len(t)], (h, t, cols)
PY
	done
done

# 7. bisect --no-session: the workbench with nothing kept
mkdir -p "$T/ns"
TUI_ENV="XDG_STATE_HOME=$T/ns" tui_run 100 30 bisect --no-session $R/ref $R/target <<EOF
:mark lost on purpose
q
:save-display $T/ns.screen
q
EOF
check "7: bisect --no-session: q warns the work ends" grep_screen ns \
	'^the bisect and marks end here \(no session\): q again quits'
check "7: nothing written" test -z "$(find "$T/ns" -type f)"
finish
