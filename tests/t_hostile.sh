#!/usr/bin/env bash
# Hostile files: pickles that would run code if loaded with pickle/torch.load
# (tests/fixtures/hostile/gen.py; their payloads create $marker or delete
# $victim) and opcode-level attacks (tests/fixtures/bad). Each is refused by
# `dumpbisect ls FILE` with exit 2 and a message naming module.name (or the
# opcode); afterwards the marker does not exist and the victim is intact.
# Then special files in a tree (FIFO without a writer, symlink loops, a link
# to /dev/zero) are skipped with a note, never opened blocking: `ls` and
# `compare` finish (bounded by timeout) and the good files are still read.
set -euo pipefail
: "${DB_BIN:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
rm -rf "$DB_TMP"
mkdir -p "$DB_TMP"
H=$DB_FIXTURES/hostile
B=$DB_FIXTURES/bad
marker=/tmp/dumpbisect_hostile_ran       # fixed in gen.py's payloads
victim=/tmp/dumpbisect_hostile_victim
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

rm -f "$marker"
mkdir -p "$victim"
touch "$victim/keep"

# file | extended regex the message must match
cases=(
	"$H/os_system.pt|posix\.system"
	"$H/legacy_os_system.pt|posix\.system"
	"$H/nested_deep.pt|posix\.system"
	"$H/builtins_eval.pt|builtins\.eval"
	"$H/builtins_exec.pt|builtins\.exec"
	# protocol 2 writes subprocess as py2's "commands"; Python 3 maps it back
	"$H/subprocess_call.pt|(subprocess|commands)\.call"
	"$H/subprocess_popen.pt|(subprocess|commands)\.Popen"
	"$H/subprocess_run_p4.pt|subprocess\.run"
	"$H/importlib.pt|importlib\.import_module"
	"$H/shutil_rmtree.pt|shutil\.rmtree"
	"$H/newobj_class.pt|__main__\.Payload"
	"$H/object_system.npy|'\|O'"
	"$H/bomb_1g.npz|inflate cap exceeded"
	"$B/inst.pt|INST"
	"$B/obj.pt|OBJ"
	"$B/ext1.pt|EXT1"
	"$B/newobj_ordereddict.pt|NEWOBJ"
	"$B/module_linear.pt|torch\.nn\.modules\.linear\.Linear"
	"$B/torchscript.pt|constants\.pkl"
	"$B/stack_global_memo.pt|os\.system"
	"$B/legacy_module_persid.pt|torch\.nn\.modules\.linear\.Linear"
)
n=0
for c in "${cases[@]}"; do
	f=${c%%|*}
	re=${c#*|}
	name=$(basename "$f")
	[ -f "$f" ] || { fail "$f missing"; continue; }
	set +e
	timeout 20 "$DB_BIN" ls "$f" >"$DB_TMP/out" 2>"$DB_TMP/err"
	rc=$?
	set -e
	msg=$(cat "$DB_TMP/out" "$DB_TMP/err")
	[ $rc -eq 2 ] || fail "$name: exit $rc, want 2: $msg"
	grep -Eq "$re" <<<"$msg" || fail "$name: message lacks /$re/: $msg"
	grep -q "$name" <<<"$msg" || fail "$name: message does not name the file: $msg"
	grep -q "byte " <<<"$msg" || fail "$name: message has no byte offset: $msg"
	n=$((n + 1))
done
[ ! -e "$marker" ] || fail "a payload ran: $marker exists"
[ -f "$victim/keep" ] || fail "a payload ran: $victim was removed"

# The same files inside a tree: refused one by one, the good file still read.
mkdir -p "$DB_TMP/tree"
cp "$H"/*.pt "$DB_TMP/tree/"
rm "$DB_TMP/tree/expand_huge.pt"       # not a payload: a size cap (test_caps.c)
cp "$DB_FIXTURES/pt/f32.pt" "$DB_TMP/tree/good.pt"
set +e
timeout 20 "$DB_BIN" ls "$DB_TMP/tree" >"$DB_TMP/out" 2>&1
rc=$?
set -e
[ $rc -ne 124 ] || fail "ls of the hostile tree hung"
nh=$(ls "$H"/*.pt | grep -vc expand_huge)
grep -Eq "\($nh refused\)" "$DB_TMP/out" || fail "ls of the hostile tree: want $nh refused: $(cat "$DB_TMP/out")"
grep -q "tree/good.pt:" "$DB_TMP/out" && fail "ls of the hostile tree: good.pt has an error: $(cat "$DB_TMP/out")"
[ ! -e "$marker" ] || fail "a payload ran in the tree: $marker exists"

# Special files: two trees holding one good file each plus a FIFO with no
# writer, a symlink loop, a link to the tree itself and a link to /dev/zero
# named like a dump. None may be opened (a FIFO open would block forever,
# /dev/zero never ends).
for side in ref target; do
	d=$DB_TMP/special/$side
	mkdir -p "$d"
	cp "$DB_FIXTURES/pt/f32.pt" "$d/x.pt"
	mkfifo "$d/pipe.pt"
	ln -s loop_b "$d/loop_a.pt"
	ln -s loop_a.pt "$d/loop_b"
	ln -s . "$d/self"
	ln -s /dev/zero "$d/zero.pt"
done
set +e
timeout 20 "$DB_BIN" ls "$DB_TMP/special/ref" >"$DB_TMP/out" 2>&1
rc=$?
set -e
[ $rc -ne 124 ] || fail "ls hung on a tree with a FIFO"
[ $rc -eq 0 ] || fail "ls of the special tree: exit $rc: $(cat "$DB_TMP/out")"
for want in "pipe.pt: FIFO" "loop_a.pt: symlink loop" "zero.pt: character device" "self: symlink loop"; do
	grep -q "$want" "$DB_TMP/out" || fail "ls: no skip note '$want': $(cat "$DB_TMP/out")"
done
grep -q "1 parsed" "$DB_TMP/out" || fail "ls: x.pt not parsed: $(cat "$DB_TMP/out")"
set +e
timeout 20 "$DB_BIN" compare --no-cache "$DB_TMP/special/ref" "$DB_TMP/special/target" >"$DB_TMP/out" 2>&1
rc=$?
set -e
[ $rc -ne 124 ] || fail "compare hung on trees with FIFOs"
[ $rc -eq 0 ] || fail "compare of the special trees: exit $rc: $(cat "$DB_TMP/out")"
# A FIFO or device named directly on the command line is refused, not read.
for f in "$DB_TMP/special/ref/pipe.pt" /dev/zero; do
	set +e
	timeout 20 "$DB_BIN" ls "$f" >"$DB_TMP/out" 2>&1
	rc=$?
	set -e
	[ $rc -eq 2 ] || fail "ls $f: exit $rc, want 2: $(cat "$DB_TMP/out")"
done

# $victim stays: another run of this test (another build dir) may be using it
if [ $fails -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "ok: $n hostile files refused, nothing ran; special files skipped"
