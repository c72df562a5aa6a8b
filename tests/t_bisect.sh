#!/bin/bash
# Headless bisect on the fixture trees (tests/fixtures/bisect/<scenario>,
# tests/fixtures/demo): `bisect --auto --format json` must give the keys
# expected.json states (written by the torch generator), with exit 1 when
# something is bad and 0 when not. Then: sessions (create, resume), --run
# (dumps produced one layer at a time; 125 skips; other codes abort),
# predicates, and the usage errors.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to compare JSON"

# compare KEYS of expected.json ($1) with the JSON output ($2)
check_json() {
	"$PY" - "$1" "$2" <<'EOF'
import json, sys
exp = json.load(open(sys.argv[1]))
got = json.load(open(sys.argv[2]))
bad = []
for k in ("kind", "first_bad_layer", "first_bad_stage", "first_bad_substage",
          "bad_ranks", "crossing_layer", "input_ids_mismatch"):
    if got.get(k, "<missing>") != exp[k]:
        bad.append("%s: got %r, want %r" % (k, got.get(k, "<missing>"), exp[k]))
steps = got.get("steps")
if not isinstance(steps, list) or not steps:
    bad.append("no steps")
else:
    for s in steps:
        if set(s) != {"layer", "verdict", "by", "cos", "rel"} or s["by"] != "auto" \
           or s["verdict"] not in ("good", "bad", "skip"):
            bad.append("bad step %r" % s)
    # the probe numbers agree with torch's (float64) where both have them
    probe = {p["layer"]: p for p in exp.get("probe", [])}
    for s in steps:
        p = probe.get(s["layer"])
        if p and s["cos"] is not None and abs(s["cos"] - p["cos"]) > 1e-9 * max(1, abs(p["cos"])):
            bad.append("L%s cos %r, torch says %r" % (s["layer"], s["cos"], p["cos"]))
    # at most 1 + ceil(log2(layers + 1)) probes that measured something (a
    # layer never dumped is a skip step, free, and says the result is open)
    n = len(exp.get("probe", [])) or exp["layers"]
    probes = [s for s in steps if s["cos"] is not None]
    if len(probes) > 1 + (n + 1).bit_length():
        bad.append("%d probes for %d layers" % (len(probes), n))
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF
}

scen=0
for d in "$DB_FIXTURES"/bisect/* "$DB_FIXTURES"/demo; do
	[ -f "$d/expected.json" ] || continue
	name=$(basename "$d")
	scen=$((scen + 1))
	out="$DB_TMP/$name.json"
	"$DB_BIN" bisect "$d/ref" "$d/target" --auto --format json >"$out" 2>"$DB_TMP/$name.err"
	rc=$?
	kind=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["kind"])' "$d/expected.json")
	want=1
	[ "$kind" = none ] && want=0
	[ $rc -eq $want ] || fail "$name: exit $rc, want $want ($(cat "$DB_TMP/$name.err"))"
	check_json "$d/expected.json" "$out" || fail "$name: JSON differs from expected.json"
done
[ $scen -ge 7 ] || fail "only $scen scenarios found"

B=$DB_FIXTURES/bisect
# text output names the layer, the sub-stage and the rank
txt=$("$DB_BIN" bisect "$B/signflip_tp2/ref" "$B/signflip_tp2/target" --auto)
[ $? -eq 1 ] || fail "signflip text: exit status"
echo "$txt" | grep -q '^first bad layer L11: hidden_out' || fail "signflip text: $txt"
echo "$txt" | grep -q '^  substage: attn.o_proj$' || fail "signflip text: no substage"
echo "$txt" | grep -q '^  bad ranks: 0 ' || fail "signflip text: no bad ranks"
echo "$txt" | grep -q '^  > attn.o_proj ' || fail "signflip text: walk does not mark the culprit"
txt=$("$DB_BIN" bisect "$B/drift/ref" "$B/drift/target" --auto)
echo "$txt" | grep -q '^accumulated drift: no single layer stands out; hidden_out leaves the ok band at L4$' \
	|| fail "drift text: $txt"
txt=$("$DB_BIN" bisect "$B/input_ids/ref" "$B/input_ids/target" --auto)
echo "$txt" | grep -q '^input ids differ (embed.input_ids)' || fail "input_ids text: $txt"

# predicates: drift is fine when drift is allowed; a custom threshold
"$DB_BIN" bisect "$B/drift/ref" "$B/drift/target" --auto --band drift --format json >"$DB_TMP/p1.json"
[ $? -eq 0 ] || fail "--band drift on drift: want exit 0"
grep -q '"kind": "none"' "$DB_TMP/p1.json" || fail "--band drift: $(head -c 200 "$DB_TMP/p1.json")"
"$DB_BIN" bisect "$B/drift/ref" "$B/drift/target" --auto --rel 0.02 --format json >"$DB_TMP/p2.json"
grep -q '"crossing_layer": 5' "$DB_TMP/p2.json" || fail "--rel 0.02: crossing should be L5: $(head -c 300 "$DB_TMP/p2.json")"
"$DB_BIN" bisect "$B/drift/ref" "$B/drift/target" --auto --band drift --cos 0.9 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--band with --cos must be a usage error"

# usage errors
"$DB_BIN" bisect "$B/allgood/ref" "$B/allgood/target" </dev/null >/dev/null 2>"$DB_TMP/e1"
[ $? -eq 2 ] || fail "no --auto in a non-tty: want exit 2"
grep -q -- '--auto' "$DB_TMP/e1" || fail "no --auto: message should say --auto: $(cat "$DB_TMP/e1")"
"$DB_BIN" bisect "$B/allgood/ref" "$B/allgood/target" --auto --stage nosuch >/dev/null 2>"$DB_TMP/e2"
[ $? -eq 2 ] || fail "--stage nosuch: want exit 2"
grep -q "probe stage 'nosuch' is not dumped" "$DB_TMP/e2" || fail "--stage nosuch: $(cat "$DB_TMP/e2")"
"$DB_BIN" bisect "$B/allgood/ref" --auto --format yaml >/dev/null 2>&1
[ $? -eq 2 ] || fail "--format yaml: want exit 2"
"$DB_BIN" bisect /nonexistent/ref /nonexistent/tgt --auto >/dev/null 2>&1
[ $? -eq 2 ] || fail "missing trees: want exit 2"

# sessions: created with every step, resumed without redoing the steps
S=$DB_TMP/sess/s.yaml
mkdir -p "$DB_TMP/sess"
"$DB_BIN" bisect "$B/layerclass/ref" "$B/layerclass/target" --auto --session "$S" --format json >"$DB_TMP/s1.json"
[ $? -eq 1 ] || fail "session run: exit status"
[ -f "$S" ] || fail "session file not written"
grep -q '^dumpbisect_session: 2' "$S" || fail "session file: no version line"
n1=$(grep -c '{layer: ' "$S")
[ "$n1" -ge 3 ] || fail "session holds $n1 steps"
"$DB_BIN" bisect --auto --session "$S" --format json >"$DB_TMP/s2.json"
[ $? -eq 1 ] || fail "resume: exit status"
n2=$(grep -c '{layer: ' "$S")
[ "$n1" -eq "$n2" ] || fail "resume redid steps: $n1 then $n2"
cmp -s <(grep -v '"steps"' "$DB_TMP/s1.json" | head -1) <(grep -v '"steps"' "$DB_TMP/s2.json" | head -1) \
	|| fail "resumed result differs"
check_json "$B/layerclass/expected.json" "$DB_TMP/s2.json" || fail "resumed result"
printf 'dumpbisect_session: 1\nsteps: [\n' >"$DB_TMP/sess/bad.yaml"
"$DB_BIN" bisect --auto --session "$DB_TMP/sess/bad.yaml" >/dev/null 2>"$DB_TMP/e3"
[ $? -eq 2 ] || fail "corrupt session: want exit 2"
grep -q "bad.yaml:3:1: " "$DB_TMP/e3" || fail "corrupt session: $(cat "$DB_TMP/e3")"
[ "$(cat "$DB_TMP/sess/bad.yaml")" = "$(printf 'dumpbisect_session: 1\nsteps: [')" ] \
	|| fail "corrupt session was rewritten"

# --run: the target dumps layers 8..15 only when asked
R=$DB_TMP/run
mkdir -p "$R/stash"
cp -r "$B/signflip_tp2/ref" "$B/signflip_tp2/target" "$R/"
D=$(echo "$R"/target/sglang_dump_*)
for l in 8 9 10 11 12 13 14 15; do mv "$D"/*layer_id=$l.pt "$R/stash/"; done
"$DB_BIN" bisect "$R/ref" "$R/target" --auto --layers 16 --format json \
	--run "echo \$DUMPBISECT_LAYER {layer} >>'$R/log'; cp '$R'/stash/*layer_id={layer}.pt '$D/'" >"$R/out.json"
[ $? -eq 1 ] || fail "--run: exit status"
check_json "$B/signflip_tp2/expected.json" "$R/out.json" || fail "--run result"
[ "$(cat "$R/log" 2>/dev/null | tr '\n' ' ')" = "11 11 9 9 10 10 " ] || fail "--run asked for: $(cat "$R/log" 2>/dev/null)"
# 125 = skip: layer 11 cannot be built, so the first bad is 11 or 12
rm -f "$D"/*layer_id=1[0-5].pt "$D"/*layer_id=[89].pt
"$DB_BIN" bisect "$R/ref" "$R/target" --auto --layers 16 --format json \
	--run "[ {layer} = 11 ] && exit 125; cp '$R'/stash/*layer_id={layer}.pt '$D/'" >"$R/out2.json"
[ $? -eq 1 ] || fail "--run 125: exit status"
grep -q '"kind": "inconclusive"' "$R/out2.json" || fail "--run 125: $(head -c 300 "$R/out2.json")"
grep -q '{"layer": 11, "verdict": "skip"' "$R/out2.json" || fail "--run 125: no skip step for L11"
# ... said as a deliberate skip, never as a layer not dumped
rm -f "$D"/*layer_id=1[0-5].pt "$D"/*layer_id=[89].pt
"$DB_BIN" bisect "$R/ref" "$R/target" --auto --layers 16 \
	--run "[ {layer} = 11 ] && exit 125; cp '$R'/stash/*layer_id={layer}.pt '$D/'" >"$R/out3" 2>"$R/err3"
grep -q "L11 skipped: --run exited 125 (a deliberate skip)" "$R/err3" || fail "--run 125 stderr: $(cat "$R/err3")"
grep -q "not dumped" "$R/out3" "$R/err3" && fail "--run 125 called not dumped: $(cat "$R/out3" "$R/err3")"
grep -q "^inconclusive: one of L11..L12 (L11 skipped)" "$R/out3" || fail "--run 125 result: $(head -1 "$R/out3")"
# accumulated drift: the state line agrees with the analysis (no "first bad layer")
"$DB_BIN" bisect "$B/drift/ref" "$B/drift/target" --auto >"$R/out5" 2>/dev/null
grep -q "^state: drift: no single layer stands out; the band is crossed at L4$" "$R/out5" ||
	fail "drift state: $(tail -1 "$R/out5")"
# a --session that does not exist, no trees: the session is what is missing
"$DB_BIN" bisect --auto --session "$DB_TMP/nosuch.session" >/dev/null 2>"$R/err4"
[ $? -eq 2 ] || fail "missing session: want exit 2"
grep -q "nosuch.session: no such session file" "$R/err4" || fail "missing session: $(cat "$R/err4")"
grep -q "REF is missing" "$R/err4" && fail "missing session blamed REF"
# other codes abort with a message
rm -f "$D"/*layer_id=1[0-5].pt "$D"/*layer_id=[89].pt
"$DB_BIN" bisect "$R/ref" "$R/target" --auto --layers 16 --run "exit 3" >/dev/null 2>"$R/err"
[ $? -eq 2 ] || fail "--run exit 3: want exit 2"
grep -q "exited with status 3; aborting" "$R/err" || fail "--run exit 3: $(cat "$R/err")"
# without --run, layers not dumped are skipped and named with a hint
"$DB_BIN" bisect "$R/ref" "$R/target" --auto --layers 16 >/dev/null 2>"$R/err2"
grep -q "L11 is not dumped on both sides (skipped)" "$R/err2" || fail "missing layer hint: $(cat "$R/err2")"

echo "$scen scenarios"
finish t_bisect
