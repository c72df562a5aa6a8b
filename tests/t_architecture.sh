#!/bin/bash
# The rooms of the code hold (tests/tools/layers.py on this build's
# objects): no circle of files calling each other, no call from a lower
# folder into a higher one, no source file over 700 lines, no folder over
# 25 source files, no curses under src/ or include/. The binary's
# directory is the build directory.
set -u
: "${DB_BIN:?}" "${DB_SRC:?}"
PY=$(command -v python3) || { echo "FAIL: python3 is needed for tests/tools/layers.py" >&2; exit 1; }
BUILD=$(dirname "$DB_BIN")
if ! out=$("$PY" "$DB_SRC/tests/tools/layers.py" "$BUILD" 2>&1); then
	printf '%s\n' "$out" >&2
	echo "FAIL: the rooms of the code (above: tests/tools/layers.py $BUILD)" >&2
	exit 1
fi
printf '%s\n' "$out"
echo ok
