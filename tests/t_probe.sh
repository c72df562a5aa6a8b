#!/bin/bash
# The bisect probe is found, not assumed (issue 11): the output names it
# and says why; weights bisect on the first divergence; bad_ranks lists
# every bad rank; token ids that differ are their own status, first in
# compare's headline, in the bisect and on the heatmap.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
need_python "for the JSON checks"
B=$DB_FIXTURES/bisect

# json_get JSON EXPR: print the Python expression over the parsed JSON `j`.
json_get() { "$PY" -c 'import json,sys; j=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }

# The profile's first candidate is dumped in every layer: it is used.
expect 1 "signflip" "$DB_BIN" bisect "$B/signflip_tp2/ref" "$B/signflip_tp2/target" --auto --format json
[ "$(json_get "$out" 'j["probe"]["stage"], j["probe"]["how"]')" = "('hidden_out', 'profile')" ] ||
	fail "signflip: probe $(json_get "$out" 'j["probe"]')"
[ "$(json_get "$out" 'j["bad_ranks"], j["all_ranks_bad"]')" = "([0], False)" ] ||
	fail "signflip: one bad rank of two: $(json_get "$out" 'j["bad_ranks"], j["all_ranks_bad"]')"

# A single-rank bug: every rank is bad, and bad_ranks says so (not []).
# (layerclass: one rank, first bad L5; sparse is inconclusive, no culprit)
expect 1 "layerclass" "$DB_BIN" bisect "$B/layerclass/ref" "$B/layerclass/target" --auto --format json
[ "$(json_get "$out" 'j["bad_ranks"], j["all_ranks_bad"]')" = "([0], True)" ] ||
	fail "layerclass: $(json_get "$out" 'j["bad_ranks"], j["all_ranks_bad"]')"

# No candidate dumped: each layer's last stage, and the text says why.
P=$DB_TMP/nocand.yaml
sed -e 's/^name: .*/name: nocand/' -e 's/^probe: .*/probe: [no_such_stage]/' \
	"$DB_SRC/profiles/sglang-v1.yaml" >"$P"
expect 1 "no candidate" "$DB_BIN" bisect -p "$P" "$B/signflip_tp2/ref" "$B/signflip_tp2/target" --auto
has "$out" "probe:    each layer's last stage in execution order (no_such_stage: not dumped)" "no candidate"
has "$out" "first bad layer L11" "no candidate: still the right layer"
expect 1 "no candidate json" "$DB_BIN" bisect -p "$P" "$B/signflip_tp2/ref" "$B/signflip_tp2/target" --auto --format json
[ "$(json_get "$out" 'j["probe"]["how"], j["first_bad_layer"]')" = "('last-stage', 11)" ] ||
	fail "no candidate: $(json_get "$out" 'j["probe"], j["first_bad_layer"]')"

# --stage still overrides; a stage dumped nowhere is refused, naming it.
expect 1 "--stage" "$DB_BIN" bisect "$B/signflip_tp2/ref" "$B/signflip_tp2/target" --auto --stage hidden_in
has "$out" "probe:    hidden_in, as asked" "--stage"
expect 2 "--stage nosuch" "$DB_BIN" bisect "$B/signflip_tp2/ref" "$B/signflip_tp2/target" --auto --stage nosuch
has "$err" "probe stage 'nosuch' is not dumped for any layer" "--stage nosuch"

# Weights: the first diverging parameter, headless too (one scrambled shard at L2).
expect 1 "weights" "$DB_BIN" bisect "$L/atom_weights" --auto --format json
[ "$(json_get "$out" 'j["first_bad_layer"], j["probe"]["how"], j["probe"]["stage"]')" = \
  "(2, 'first-divergence', 'attn.wo')" ] ||
	fail "weights: $(json_get "$out" 'j["first_bad_layer"], j["probe"]')"

# A trainer's parameters (Miles' param__ files, the profile's weight_phases)
# are probed as weights, and nothing diverging there is said plainly.
U=$DB_FIXTURES/upstream/miles
expect 0 "weight phase" "$DB_BIN" bisect "$U/ref" "$U/target" --auto --phase fwd_bwd.param
has "$out" "no weight diverges in phase fwd_bwd.param (a phase of weights" "weight phase"
has "$out" "nothing bad" "weight phase"

# A module the target lacks at one layer only (a port that dropped it) is a
# finding at that layer: the real v2 tree with L5's pre_mlp_residual removed.
D=$DB_TMP/dropped
rm -rf "$D"; cp -r "$DB_FIXTURES/realdump/v2_tp1" "$D"
rm "$D"/target/*/*name=pre_mlp_residual___*layer_id=5___*
expect 1 "dropped module" "$DB_BIN" bisect "$D/ref" "$D/target" --auto
has "$out" "> pre_mlp_residual                 only in the reference (the other layers have it in both)" \
	"dropped module: the walk names it"
has "$out" "  stage:    pre_mlp_residual" "dropped module: the culprit"

# Token ids differ: its own status, before anything else.
expect 1 "input ids" "$DB_BIN" compare "$B/input_ids/ref" "$B/input_ids/target"
has "$out" "inputs differ: embed.input_ids rank 0 pass 0: 1 of 5 ids differ" "input ids headline"
has "$out" "; 1 inputs_differ" "input ids counted"
has "$out" "[inputs_differ]" "input ids: first divergence"
expect 1 "input ids json" "$DB_BIN" compare --format json "$B/input_ids/ref" "$B/input_ids/target"
grep -q '"stage": "embed.input_ids".*"severity": "inputs_differ"' <<<"$out" ||
	fail "input ids json: severity is not inputs_differ"
expect 1 "input ids bisect" "$DB_BIN" bisect "$B/input_ids/ref" "$B/input_ids/target" --auto
head -1 <<<"$out" | grep -q '^input ids differ (embed.input_ids)' || fail "input ids bisect: $(head -1 <<<"$out")"
finish t_probe
