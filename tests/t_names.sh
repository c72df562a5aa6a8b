#!/usr/bin/env bash
# Hostile names (tests/fixtures/names/gen.py, and file names with control
# bytes made here): no output of ls, compare, schema, bisect, export or an
# error message carries a raw control byte, DEL, C1 or bidi control or
# invalid UTF-8 (db_esc: shown as \x1b, \xff, \u202e); report.md holds the
# names in code spans, never raw HTML; metrics.csv quotes (RFC 4180) and
# puts ' before a cell starting with = + - @.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
need_python "to check the bytes of the outputs"
fresh_tmp
N=$DB_FIXTURES/names

# safe FILE DESC: FILE is valid UTF-8 and holds no C0 control but \n, no
# DEL, no C1 control, no bidi control and no line/paragraph separator.
safe() {
	local why
	why=$("$PY" - "$1" <<'PY'
import re, sys
b = open(sys.argv[1], "rb").read()
try:
    b.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit("invalid UTF-8 at byte %d: %r" % (e.start, b[max(0, e.start - 30):e.start + 4]))
m = re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]", b)
if m:
    sys.exit("raw %r at byte %d: %r" % (m.group(), m.start(), b[max(0, m.start() - 30):m.start() + 4]))
PY
) || fail "$2: $why"
}

# run DESC CMD...: stdout and stderr of CMD to $DB_TMP/o and $DB_TMP/e,
# both checked with safe.
run() {
	local desc=$1
	shift
	timeout 60 "$@" >"$DB_TMP/o" 2>"$DB_TMP/e"
	rc=$?
	safe "$DB_TMP/o" "$desc (stdout)"
	safe "$DB_TMP/e" "$desc (stderr)"
}
grepo() { grep -qF -- "$1" "$DB_TMP/o" || fail "$2: no '$1' in: $(head -c 600 "$DB_TMP/o")"; }
grepe() { grep -qF -- "$1" "$DB_TMP/e" || fail "$2: no '$1' in: $(head -c 600 "$DB_TMP/e")"; }

# ---- ls of each file, text and JSON
for f in "$N"/ref/* "$N"/target/*; do
	run "ls $f" "$DB_BIN" ls "$f"
	run "ls --format json $f" "$DB_BIN" ls --format json "$f"
	"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$DB_TMP/o" ||
		fail "ls --format json $f: not JSON"
done
run "ls st" "$DB_BIN" ls "$N/ref/names.safetensors"
grepo 'layers.0.<script>alert(1)</script>\x1b[31m ' "ls shows ESC as \\x1b"
grepo 'layers.1.\x1b]0;PWNED\x07 ' "ls shows the OSC title sequence escaped"
grepo 'layers.1.c0\x01\x02\x08\x09\x0a\x0d\x7fdel' "ls shows C0 and DEL escaped"
grepo 'layers.1.longAAAA' "ls shows the long name"
run "ls pt" "$DB_BIN" ls "$N/ref/names.pt"
grepo 'layers.3.abc\u202egpj.exe' "ls shows U+202E escaped"
grepo 'layers.0.\u2066iso\u2069 \u2067rtl\u2068' "ls shows U+2066..U+2069 escaped"
grepo 'layers.2.c1\u0085\u009b2J' "ls shows C1 controls escaped"
grepo 'layers.3.bad\xed\xb3\xbf\xed\xb3\xbeutf8' "ls shows invalid UTF-8 escaped"
run "ls pt json" "$DB_BIN" ls --format json "$N/ref/names.pt"
grepo '"layers.3.abc\u202egpj.exe"' "JSON escapes U+202E as \\u202e"
grepo '"layers.3.bad\\xed\\xb3\\xbf' "JSON writes invalid UTF-8 as the text \\xNN"

# ---- refused files: messages quote the name escaped
run "ls bad utf8" "$DB_BIN" ls "$N/bad/badutf8.safetensors"
[ "$rc" = 2 ] || fail "ls badutf8: exit $rc, want 2"
grepe 'invalid UTF-8' "badutf8 refused"
run "ls bad npz" "$DB_BIN" ls "$N/bad/ctrl.npz"
[ "$rc" = 2 ] || fail "ls ctrl.npz: exit $rc, want 2"
grepe 'control byte 0x1b' "ctrl.npz refused"

# ---- a tree
run "ls tree" "$DB_BIN" ls "$N/ref"
grepo '\x1b]0;PWNED\x07' "ls tree lists the stage escaped"
run "ls tree json" "$DB_BIN" ls --format json "$N/ref"

# ---- compare, schema: every format
run "compare" "$DB_BIN" compare "$N/ref" "$N/target"
[ "$rc" = 1 ] || fail "compare: exit $rc, want 1"
grepo 'first divergence: L0 <script>alert(1)</script>\x1b[31m: shape_mismatch' "compare names the divergence escaped"
grepo '\x1b[2J\x1b[1A\x1b[2Kok' "compare shows the cursor-moving name escaped"
run "compare json" "$DB_BIN" compare --format json "$N/ref" "$N/target"
"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$DB_TMP/o" || fail "compare json: not JSON"
run "compare csv" "$DB_BIN" compare --format csv "$N/ref" "$N/target"
cp "$DB_TMP/o" "$DB_TMP/compare.csv"
run "schema" "$DB_BIN" schema "$N/ref" "$N/target"
grepo 'ref_only     L1 \x1b]0;PWNED\x07' "schema names the missing tensor escaped"
grepo 'shape        L0 <script>alert(1)</script>\x1b[31m' "schema names the shape change escaped"
run "schema json" "$DB_BIN" schema --format json "$N/ref" "$N/target"

# ---- bisect (text), with a session for export
S=$DB_TMP/s/session.yaml
mkdir -p "$DB_TMP/s"
run "bisect" "$DB_BIN" bisect "$N/ref" "$N/target" --auto --session "$S"
grepo 'L2' "bisect finds layer 2"
grepo '    c1\u0085\u009b2J ' "bisect's intra-layer walk names the sub-stage escaped"

# ---- export: report.md (code spans, no raw HTML), metrics.csv
run "export" "$DB_BIN" export "$S" --out "$DB_TMP/r"
for f in report.md metrics.csv metrics.json heatmap.svg; do
	safe "$DB_TMP/r/$f" "export $f"
done
grep -qF 'bad\xed\xb3\xbf' "$DB_TMP/r/heatmap.svg" || fail "heatmap.svg: invalid UTF-8 not shown as \\xNN"
md=$DB_TMP/r/report.md
grep -qF '<script>' <(sed 's/`[^`]*`//g' "$md") && fail "report.md: <script> outside a code span"
grep -qF '`<script>alert(1)</script>\x1b[31m`' "$md" || fail "report.md: the divergent name is not a code span: $(grep -A3 '^## Divergence' "$md")"
grep -qF '| `c1\u0085\u009b2J` |' "$md" || fail "report.md: the walk's sub-stage is not a code span"
grep -qF '| `tick`s``and\|pipe` |' "$md" || grep -qF '```tick`s``and\|pipe```' "$md" ||
	fail "report.md: a name with backticks and a pipe is not one code span: $(grep -F 'tick' "$md")"
"$PY" - "$DB_TMP/r/metrics.csv" "$DB_TMP/compare.csv" <<'PY' || fail "metrics.csv"
import csv, sys
for path in sys.argv[1:]:
    rows = list(csv.reader(open(path, newline="", encoding="utf-8")))
    head, body = rows[0], rows[1:]
    assert all(len(r) == len(head) for r in body), "ragged rows in %s" % path
    texts = ("phase", "pass", "stage", "ref_name", "target_name", "error")
    cells = [r[head.index(c)] for r in body for c in texts if c in head]
    bad = [c for c in cells if c[:1] in ("=", "+", "-", "@")]
    assert not bad, "%s: formula cells %r" % (path, bad)
    want = "'=HYPERLINK(\"http://evil.example/\",\"click\")"
    assert want in cells, "%s: no %s in %r" % (path, want, cells)
    assert "'@SUM(A1)" in cells and "'-2+3" in cells, path
    raw = open(path, encoding="utf-8").read()
    assert '"\'=HYPERLINK(""http://evil.example/"",""click"")"' in raw, "%s: not RFC 4180" % path
PY

# ---- file names with control bytes, bidi, invalid UTF-8, a long one
H=$DB_TMP/h
mkdir -p "$H/a" "$H/b"
nm1=$'layers.0.\e]0;PWNED\a\e[31m.safetensors'
nm2=$'layers.1.abc\xe2\x80\xaegpj\xff\x9b.safetensors'
nm4=$'layers.3.abc\xe2\x80\xaegpj\xff\x9b\e[1A.npy'
nm3="layers.2.$(printf 'L%.0s' $(seq 200)).safetensors"
for d in a b; do
	for n in "$nm1" "$nm2" "$nm3"; do
		cp "$N/$([ $d = a ] && echo ref || echo target)/names.safetensors" "$H/$d/$n"
	done
done
for d in a b; do
	cp "$DB_FIXTURES/np/be_f4.npy" "$H/$d/$nm4"
done
printf 'not a dump' >"$H/b/"$'layers.3.\e[2Jcorrupt\x7f.safetensors'
run "ls hostile file" "$DB_BIN" ls "$H/a/$nm1"
grepo 'layers.0.\x1b]0;PWNED\x07\x1b[31m.safetensors (safetensors' "ls names the file escaped"
run "ls hostile corrupt file" "$DB_BIN" ls "$H/b/"$'layers.3.\e[2Jcorrupt\x7f.safetensors'
grepe 'layers.3.\x1b[2Jcorrupt\x7f.safetensors: ' "the error names the file escaped"
run "ls missing hostile file" "$DB_BIN" ls "$H/"$'\e]0;gone\a\xff'
[ "$rc" = 2 ] || fail "ls missing file: exit $rc, want 2"
grepe '\x1b]0;gone\x07\xff' "a missing file's name escaped"
run "ls hostile tree" "$DB_BIN" ls "$H/b"
run "compare hostile trees" "$DB_BIN" compare "$H/a" "$H/b"
grepo 'abc\u202egpj\xff\x9b\x1b[1A ' "compare shows the stage from a bidi, invalid, ESC file name escaped"
grepo 'corrupt\x7f' "compare shows the corrupt file's error escaped"
run "schema hostile trees" "$DB_BIN" schema "$H/a" "$H/b"
run "bisect hostile trees" "$DB_BIN" bisect "$H/a" "$H/b" --auto
run "unknown command" "$DB_BIN" $'\e]0;x\a'
[ "$rc" = 2 ] || fail "unknown command: exit $rc, want 2"
grepe '\x1b]0;x\x07' "the unknown command is named escaped"

if [ "$fails" -ne 0 ]; then
	echo "t_names: $fails failures"
	exit 1
fi
echo ok
