#!/usr/bin/env bash
# Issue 26 item 9 through the binary: YAML that would expand or nest
# without bound is refused in milliseconds, under CPU and memory limits:
# a profile aliasing one 100 KB scalar 100,000 times (before: 9.8 GB and
# 20 s), one nesting 300k flow levels and one 400k "- " levels; a session
# whose notes alias one 100 KB name 100,000 times (before: out of memory
# at 8 GB) and one nesting 300k levels (before: over a minute). Each error
# names the file, line and column.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
fresh_tmp
need_python "to write the YAML files"
"$PY" - "$DB_TMP" <<'PY'
import sys
d = sys.argv[1]
big = "A" * 100000
open(d + "/alias.yaml", "w").write("name: x\npath: a\ndescription: &a " + big +
                                   "\nstage_order: [" + ", ".join(["*a"] * 100000) + "]\n")
open(d + "/flow.yaml", "w").write("name: x\npath: a\nprobe: " + "[" * 300000 + "]" * 300000 + "\n")
open(d + "/block.yaml", "w").write("name: x\npath: a\nprobe:\n" + "- " * 400000 + "x\n")
head = ("dumpbisect_session: 1\nref: \"%s/r\"\ntarget: \"%s/t\"\npredicate: \"band:ok\"\n"
        "good: -1\ncreated: 1\nupdated: 1\nsteps: []\nmarks: []\nlayers: []\n" % (d, d))
open(d + "/notes.yaml", "w").write(head + "notes: [&n " + "N" * 100000 + ", " +
                                   ", ".join(["*n"] * 100000) + "]\n")
open(d + "/deep.yaml", "w").write(head + "notes: []\nview: " + "[" * 300000 + "]" * 300000 + "\n")
PY
mkdir -p "$DB_TMP/r" "$DB_TMP/t"
cp "$DB_FIXTURES/pt/f32.pt" "$DB_TMP/r/a.pt"
cp "$DB_FIXTURES/pt/f32.pt" "$DB_TMP/t/a.pt"

run() { # run WANT_REGEX CMD...: exit 2 within the limits, stderr matching
	local want=$1
	shift
	(ulimit -t 10; vlimit 2000000; "$@") >"$DB_TMP/out" 2>"$DB_TMP/err"
	local rc=$?
	[ $rc -eq 2 ] || fail "$*: exit $rc, want 2 (137/152: a limit hit): $(head -c 300 "$DB_TMP/err")"
	grep -Eq -- "$want" "$DB_TMP/err" || fail "$*: stderr lacks /$want/: $(head -c 300 "$DB_TMP/err")"
}
run 'alias\.yaml:4:[0-9]+: aliases expand this document past' "$DB_BIN" ls --profile "$DB_TMP/alias.yaml" "$DB_TMP/r"
run 'flow\.yaml:3:[0-9]+: nested deeper than 128 levels' "$DB_BIN" ls --profile "$DB_TMP/flow.yaml" "$DB_TMP/r"
run 'block\.yaml:4:[0-9]+: nested deeper than 128 levels' "$DB_BIN" ls --profile "$DB_TMP/block.yaml" "$DB_TMP/r"
run 'notes\.yaml:11:[0-9]+: aliases expand this document past' "$DB_BIN" replay "$DB_TMP/notes.yaml"
run 'deep\.yaml:12:[0-9]+: nested deeper than 128 levels' "$DB_BIN" replay "$DB_TMP/deep.yaml"
finish t_yaml_bombs
