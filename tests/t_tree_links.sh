#!/bin/bash
# Symlinks in a tree to directories outside it are not followed unless
# asked (issue 26 item 15): a link to / used to walk the whole disk (656k
# files, 13.6 s, 490 MB) and a link to another run's dumps flipped the
# detected profile. Now ls and compare list them as skipped, count them
# ("2 links to a directory outside the tree, not followed") and name them in
# the compare summary; --follow-links follows them; links that stay inside
# the tree (also through an absolute path, also when the root itself is a
# link) are followed as before. Every run is bounded (timeout 20), and the
# file counts show that nothing outside the tree was listed.
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
need_python "to read the JSON"
fresh_tmp
cd "$DB_TMP" || exit 1
L=$DB_FIXTURES/layouts
cp -r "$L/sglang_v2/ref" tree
cp -r "$L/sglang_v2/target" tree2
# another run's dumps beside it, more files than the tree: followed, they
# would win the profile detection
mkdir outside
for i in 1 2 3; do cp -r "$DB_FIXTURES/demo/ref" "outside/run$i"; done
ln -s "$DB_TMP/outside" tree/more
ln -s / tree/root
mkdir tree/sub
ln -s "$DB_TMP/tree/sub" tree/inside_abs     # inside, by an absolute path
ln -s ../tree/sub tree/inside_rel
ln -s tree treelink

n_tree=$(find tree -type f | wc -l)

expect 0 "ls of a tree with links out" timeout 20 "$DB_BIN" ls tree
has "$out" "profile sglang-v2" "the profile is the tree's own"
has "$out" "= $n_tree files; " "only the tree's files are seen"
has "$out" "(2 links to a directory outside the tree, not followed)" "ls counts the links out"
has "$out" "more: symlink to a directory outside the tree ($DB_TMP/outside); not followed" "ls lists the link to another run"
has "$out" "root: symlink to a directory outside the tree (/); not followed" "ls lists the link to /"
grep -q "inside_\(abs\|rel\): symlink to a directory outside" <<<"$out" &&
	fail "a link inside the tree is called outside: $out"
expect 0 "ls through a root that is a link" timeout 20 "$DB_BIN" ls treelink
has "$out" "(2 links to a directory outside the tree, not followed)" "a linked root"
grep -q "inside_abs: symlink to a directory outside" <<<"$out" &&
	fail "through a linked root, a link inside the tree is called outside"
expect 0 "ls json" timeout 20 "$DB_BIN" ls tree --format json
[ "$("$PY" -c 'import json,sys; print(json.load(sys.stdin)["links_not_followed"])' <<<"$out")" = 2 ] ||
	fail "ls json: links_not_followed is not 2"

expect 1 "compare with links out" timeout 20 "$DB_BIN" compare tree tree2
has "$out" "profile sglang-v2" "compare: the profile is the tree's own"
has "$out" "ref: 2 links to a directory outside the tree not followed (--follow-links follows): more -> $DB_TMP/outside, root -> /" "the compare summary names the links"
grep -q "^target: .*not followed" <<<"$out" && fail "compare: the target has no link out"

# asked to: followed (the link to / removed first, to stay bounded)
rm tree/root
expect 0 "ls --follow-links" timeout 20 "$DB_BIN" ls tree --follow-links
n_out=$(find outside -type f | wc -l)
has "$out" "= $((n_tree + n_out)) files; " "followed, the other run's files are listed"
grep -q "^profile sglang-v2 " <<<"$out" && fail "followed, the other run's files do not change the detection"
grep -q "not followed" <<<"$out" && fail "--follow-links: a link still not followed"
expect 0 "ls without, after --follow-links (no cached listing of the other mode)" timeout 20 "$DB_BIN" ls tree
has "$out" "profile sglang-v2" "not following again"
has "$out" "(1 link to a directory outside the tree, not followed)" "one link out left"
finish t_tree_links
