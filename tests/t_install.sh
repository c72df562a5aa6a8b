#!/bin/bash
# `cmake --install` of the build that made $DB_BIN, into a scratch prefix:
# the binary, both man pages, every built-in profile and both completion
# files land where man, bash-completion and zsh look, and they work from
# there (the binary away from the source tree, the pages render, the
# installed bash completion names the profiles).
set -u
: "${DB_BIN:?}" "${DB_SRC:?}" "${DB_FIXTURES:?}" "${DB_TMP:?}"
rm -rf "$DB_TMP"
mkdir -p "$DB_TMP"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

BUILD=$(dirname "$DB_BIN")
P=$DB_TMP/prefix
[ -f "$BUILD/cmake_install.cmake" ] || { echo "FAIL: $BUILD is not a CMake build dir" >&2; exit 1; }
if ! cmake --install "$BUILD" --prefix "$P" >"$DB_TMP/install.log" 2>&1; then
	cat "$DB_TMP/install.log" >&2
	echo "FAIL: cmake --install failed" >&2
	exit 1
fi

# where things must land (GNUInstallDirs defaults under the prefix)
[ -x "$P/bin/dumpbisect" ] || fail "no executable bin/dumpbisect"
for f in share/man/man1/dumpbisect.1 share/man/man5/dumpbisect-profile.5 \
	share/bash-completion/completions/dumpbisect share/zsh/site-functions/_dumpbisect; do
	[ -s "$P/$f" ] || fail "$f not installed"
done
cmp -s "$DB_SRC/completion/dumpbisect.bash" "$P/share/bash-completion/completions/dumpbisect" ||
	fail "the installed bash completion is not completion/dumpbisect.bash"
cmp -s "$DB_SRC/completion/_dumpbisect" "$P/share/zsh/site-functions/_dumpbisect" ||
	fail "the installed zsh completion is not completion/_dumpbisect"
n=0
for y in "$DB_SRC"/profiles/*.yaml; do
	n=$((n + 1))
	cmp -s "$y" "$P/share/dumpbisect/profiles/${y##*/}" ||
		fail "profile ${y##*/} not installed (or differs)"
done
[ "$n" -ge 6 ] || fail "only $n profiles in the source tree"
[ "$(ls "$P/share/dumpbisect/profiles" | wc -l)" = "$n" ] ||
	fail "share/dumpbisect/profiles holds other files: $(ls "$P/share/dumpbisect/profiles")"
# nothing stray at the old place
[ ! -e "$P/share/dumpbisect/completion" ] || fail "completion also installed to share/dumpbisect/completion"

# The installed binary works away from the source tree (profiles embedded).
(cd "$DB_TMP" && env -i PATH=/usr/bin:/bin HOME="$DB_TMP" "$P/bin/dumpbisect" --version) \
	>"$DB_TMP/version" 2>&1 || fail "installed --version exited $?"
grep -qE '^dumpbisect [0-9]+\.[0-9]+' "$DB_TMP/version" || fail "version: $(cat "$DB_TMP/version")"
(cd "$DB_TMP" && env -i PATH=/usr/bin:/bin HOME="$DB_TMP" "$P/bin/dumpbisect" ls \
	"$DB_FIXTURES/demo/ref") >"$DB_TMP/ls" 2>&1 || fail "installed ls exited $?: $(head -3 "$DB_TMP/ls")"
grep -q '^profile sglang-v1 ' "$DB_TMP/ls" || fail "installed ls did not pick sglang-v1"

# The installed pages render without warnings, found by man through the prefix.
for pg in man1/dumpbisect.1 man5/dumpbisect-profile.5; do
	w=$(LC_ALL=C.UTF-8 groff -man -ww -Tutf8 "$P/share/man/$pg" 2>&1 >/dev/null)
	[ -z "$w" ] || fail "groff on installed $pg: $w"
done
if command -v man >/dev/null; then
	MANPATH=$P/share/man MANWIDTH=80 LC_ALL=C.UTF-8 man dumpbisect-profile 2>/dev/null |
		grep -q 'DUMPBISECT-PROFILE(5)' || fail "man does not find dumpbisect-profile(5) under the prefix"
fi

# The installed bash completion, driven as bash would, lists the profiles.
got=$(env -i PATH="$P/bin:/usr/bin:/bin" HOME="$DB_TMP" bash --norc --noprofile -c '
	. "$1"
	COMP_WORDS=(dumpbisect compare --profile sglang)
	COMP_CWORD=3
	_dumpbisect
	printf "%s\n" "${COMPREPLY[@]}"' _ "$P/share/bash-completion/completions/dumpbisect" | sort | tr '\n' ' ')
[ "$got" = "sglang-hook sglang-v1 sglang-v2 " ] || fail "installed completion gave '$got'"

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo ok
