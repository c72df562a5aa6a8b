#!/usr/bin/env bash
# Whole-tree compare speed (issue 5): builds a large bf16 dump tree per side
# (SGLang dumper v1 file names, one torch.save'd tensor per file), then in
# ONE run prints, on a hot page cache:
#   - `cat` of all files to /dev/null (the floor: the bytes themselves),
#   - `dumpbisect compare REF TARGET --format json` wall time and peak RSS,
#   - the metrics engine alone (tests/bench/metrics_throughput.c, compiled
#     here against libdbcore.a) over the same tensor payloads,
#   - the torch approach (torch.load + float64 metrics in Python, as SGLang's
#     comparator and ATOM's compare do), when torch is installed,
# with ratios. No timed assertions: this reports, it does not judge.
#
# Environment (defaults in brackets):
#   BENCH_LAYERS [32]  BENCH_STAGES [4]  BENCH_ROWS [2048]  BENCH_COLS [4096]
#       default = 128 pairs of [2048 x 4096] bf16 = 4 GiB per run (2 sides)
#   BENCH_DIR    [mktemp -d]   where the tree is written (deleted afterwards)
#   BENCH_KEEP   [0]           1 = keep the tree (and reuse it next run)
#   BENCH_TORCH  [auto]        0 = skip the torch.load measurement
#   BENCH_COLD   [0]           1 = also time cat and compare on a cold page
#                              cache (drops it: root only, affects the machine)
#   BENCH_BUILD  [<repo>/build] build dir holding libdbcore.a and dumpbisect
#   DB_BIN       [$BENCH_BUILD/dumpbisect]
#   PYTHON       [/usr/bin/python3 if it has torch, else python3]
#   CC           [cc]
#   BENCH_WRITER [auto]        zip = use the built-in writer even with torch
# Quick run: BENCH_LAYERS=2 BENCH_ROWS=256 bash tests/bench/bench_compare.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
layers=${BENCH_LAYERS:-32}
stages=${BENCH_STAGES:-4}
rows=${BENCH_ROWS:-2048}
cols=${BENCH_COLS:-4096}
build=${BENCH_BUILD:-$repo/build}
db_bin=${DB_BIN:-$build/dumpbisect}
cc=${CC:-cc}
keep=${BENCH_KEEP:-0}

if [[ -z "${PYTHON:-}" ]]; then
	PYTHON=python3
	if /usr/bin/python3 -c 'import torch' 2>/dev/null; then PYTHON=/usr/bin/python3; fi
fi
have_torch=0
if "$PYTHON" -c 'import torch' 2>/dev/null; then have_torch=1; fi
[[ "${BENCH_TORCH:-auto}" == 0 ]] && run_torch=0 || run_torch=$have_torch

if [[ -n "${BENCH_DIR:-}" ]]; then
	dir=$BENCH_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d "${TMPDIR:-/tmp}/dumpbisect-bench.XXXXXX")
fi
cleanup() { [[ "$keep" == 1 ]] || rm -rf "$dir"; }
trap cleanup EXIT

total_bytes=$((layers * stages * rows * cols * 2 * 2))
printf 'bench_compare: %d layers x %d stages of [%d x %d] bfloat16 per side = %.2f GiB in %s\n' \
	"$layers" "$stages" "$rows" "$cols" "$(echo "$total_bytes / 1073741824" | bc -l)" "$dir"
printf 'machine: %s, %s cores, %s; load %s\n' "$(uname -m)" "$(nproc)" \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 1. the tree -------------------------------------------------------------
# With torch: torch.save. Without: a minimal writer of the same zip layout
# (archive/data.pkl with _rebuild_tensor_v2 + a BFloat16Storage persistent
# id, archive/data/0 aligned to 64 bytes, archive/version), values from
# numpy when present, else from os.urandom squeezed into a finite range.
gen_py=$(cat <<'PY'
import os, sys, struct, zipfile
out, layers, stages, rows, cols, use_torch = sys.argv[1], *map(int, sys.argv[2:7])
names = ["input_layernorm", "self_attn", "post_attention_layernorm", "mlp"]
names += ["stage%d" % i for i in range(len(names), stages)]

def fname(stage, idx, layer):
    return ("forward_pass_id=0___rank=0___name=%s___dump_index=%d___layer_id=%d.pt"
            % (stage, idx, layer))

def pickle_bytes(key, shape):
    # protocol 2 pickle of _rebuild_tensor_v2(pers(storage), 0, shape, stride, False, OrderedDict())
    def unicode(s):
        b = s.encode(); return b"X" + struct.pack("<I", len(b)) + b
    def tup(items):
        return b"(" + b"".join(items) + b"t"
    def i(v):
        return b"J" + struct.pack("<i", v)
    stride = []
    acc = 1
    for d in reversed(shape):
        stride.insert(0, acc); acc *= d
    numel = acc
    p = b"\x80\x02"
    p += b"ctorch._utils\n_rebuild_tensor_v2\n"
    p += b"("  # args mark
    p += tup([unicode("storage"), b"ctorch\nBFloat16Storage\n", unicode(key), unicode("cpu"), i(numel)])
    p += b"Q"  # BINPERSID
    p += i(0) + tup([i(d) for d in shape]) + tup([i(s) for s in stride]) + b"\x89"
    p += b"ccollections\nOrderedDict\n)R"
    p += b"tR."
    return p

def write_pt(path, raw, shape):
    stem = os.path.basename(path)[:-3]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr(stem + "/data.pkl", pickle_bytes("0", shape))
        info = zipfile.ZipInfo(stem + "/data/0")
        # pad the local header's extra field so the payload starts 64-aligned
        hdr = z.fp.tell() + 30 + len(info.filename.encode())
        pad = (-(hdr + 4)) % 64
        info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad
        z.writestr(info, raw)
        z.writestr(stem + "/version", b"3\n")

if use_torch:
    import torch
    g = torch.Generator().manual_seed(0)
    base = torch.randn(rows, cols, generator=g)
    noise = torch.randn(rows, cols, generator=g)
else:
    try:
        import numpy as np
        rng = np.random.default_rng(0)
        base = rng.standard_normal((rows, cols), dtype=np.float32)
        noise = rng.standard_normal((rows, cols), dtype=np.float32)
    except ImportError:
        np = None
        squeeze = bytes((b & 0x87) | 0x38 for b in range(256))   # finite bf16 codes
        base = os.urandom(rows * cols * 2).translate(squeeze)

def bf16_bytes(a):  # numpy float32 -> raw bf16 (truncation is fine here)
    return (a.view(np.uint32) >> 16).astype("<u2").tobytes()

for side in ("ref", "target"):
    os.makedirs(os.path.join(out, side), exist_ok=True)
idx = 0
for layer in range(layers):
    for s in range(stages):
        scale = 1.0 + 0.01 * layer + 0.1 * s
        eps = 1e-3 * (1 + layer)          # error grows with depth, like real drift
        rp = os.path.join(out, "ref", fname(names[s], idx, layer))
        tp = os.path.join(out, "target", fname(names[s], idx, layer))
        if use_torch:
            torch.save((base * scale).bfloat16(), rp)
            torch.save((base * scale + noise * eps).bfloat16(), tp)
        elif np is not None:
            write_pt(rp, bf16_bytes((base * scale).astype(np.float32)), (rows, cols))
            write_pt(tp, bf16_bytes((base * scale + noise * eps).astype(np.float32)), (rows, cols))
        else:
            write_pt(rp, base, (rows, cols))
            t = bytearray(base)
            t[idx % 2::97] = bytes(b ^ 1 for b in t[idx % 2::97])  # flip low bits here and there
            write_pt(tp, bytes(t), (rows, cols))
        idx += 1
PY
)
nfiles=$((layers * stages))
if [[ "$keep" == 1 && -d "$dir/ref" && $(ls "$dir/ref" | wc -l) -eq $nfiles ]]; then
	echo "reusing the tree in $dir"
else
	rm -rf "$dir/ref" "$dir/target"
	t0=$(date +%s.%N)
	use_torch=$have_torch
	[[ "${BENCH_WRITER:-auto}" == zip ]] && use_torch=0
	"$PYTHON" -c "$gen_py" "$dir" "$layers" "$stages" "$rows" "$cols" "$use_torch"
	printf 'generated %d files per side with %s in %.1f s\n' "$nfiles" \
		"$([[ $use_torch == 1 ]] && echo torch.save || echo the built-in zip writer)" \
		"$(echo "$(date +%s.%N) - $t0" | bc -l)"
fi

# payload offset of each tensor inside its zip, for the engine-only driver
list_py=$(cat <<'PY'
import os, struct, sys, zipfile
d = sys.argv[1]
def payload(path):
    with zipfile.ZipFile(path) as z:
        info = next(i for i in z.infolist() if i.filename.endswith("/data/0"))
    with open(path, "rb") as f:
        f.seek(info.header_offset)
        h = f.read(30)
        n, e = struct.unpack("<HH", h[26:30])
        return info.header_offset + 30 + n + e, info.file_size
for name in sorted(os.listdir(os.path.join(d, "ref"))):
    r, t = os.path.join(d, "ref", name), os.path.join(d, "target", name)
    (ro, rs), (to, ts) = payload(r), payload(t)
    assert rs == ts
    print(r, ro, t, to, rs // 2)
PY
)
"$PYTHON" -c "$list_py" "$dir" > "$dir/pairs.list"

# ---- 2. timings (hot cache) ------------------------------------------------
now() { date +%s.%N; }
ratio() { # a / b to 2 decimals, "-" when b is 0 (too short to measure)
	if (( $(echo "$2 > 0" | bc -l) )); then printf '%.2f' "$(echo "$1 / $2" | bc -l)"; else printf -- '-'; fi
}
elapsed() { echo "$(now) - $1" | bc -l; }
files=("$dir"/ref/*.pt "$dir"/target/*.pt)
cat "${files[@]}" > /dev/null    # warm-up: fill the page cache
cat "${files[@]}" > /dev/null
gb=$(echo "$total_bytes / 1000000000" | bc -l)
# Wall time is what users wait for; CPU seconds (user + sys) are shown too
# because on a shared machine other jobs stretch wall times.
printf '\n%-34s %9s %9s %9s %11s %8s\n' "what" "seconds" "GB/s" "CPU s" "peak RSS" "x cat"
row() { # name seconds rss_kib cpu_seconds
	local rss="-"
	[[ -n "${3:-}" ]] && rss=$(printf '%.1f MiB' "$(echo "$3 / 1024" | bc -l)")
	printf '%-34s %9.3f %9.2f %9.2f %11s %8.2f\n' "$1" "$2" "$(echo "$gb / $2" | bc -l)" \
		"${4:-0}" "$rss" "$(echo "$2 / $t_cat" | bc -l)"
}

# timed NAME OUTVAR_SECONDS OUTVAR_RSS OUTVAR_CPU command...: peak RSS, CPU
timed() {
	local tf; tf=$(mktemp)
	local rc=0
	/usr/bin/time -f '%e %M %U %S' -o "$tf" "${@:5}" > /dev/null 2> "$tf.err" || rc=$?
	# time writes "Command exited with non-zero status N" first on exit != 0
	local e m u s
	read -r e m u s < <(tail -n 1 "$tf") || true
	printf -v "$2" '%s' "$e"
	printf -v "$3" '%s' "$m"
	printf -v "$4" '%s' "$(echo "$u + $s" | bc -l)"
	rm -f "$tf"
	if [[ $rc -gt 1 ]]; then
		echo "  ($1 failed with exit $rc: $(head -c 300 "$tf.err"))"
		rm -f "$tf.err"
		return 1
	fi
	rm -f "$tf.err"
}

t_cat=""
for _ in 1 2; do    # best of two
	t0=$(now)
	timed cat s_c rss_c cpu_c cat "${files[@]}"
	t=$(elapsed "$t0")
	if [[ -z "$t_cat" ]] || (( $(echo "$t < $t_cat" | bc -l) )); then t_cat=$t cpu_cat=$cpu_c; fi
done
row "cat (hot cache)" "$t_cat" "" "$cpu_cat"

t_cmp=""
t_reopen=""
if [[ -x "$db_bin" ]] && "$db_bin" compare --help > /dev/null 2>&1; then
	# exit 1 = "something diverges", expected here; 2 = error. Best of two,
	# metrics cache off: every pair is computed from the bytes.
	for _ in 1 2; do
		t0=$(now)
		if timed compare s_c rss_c cpu_c "$db_bin" compare "$dir/ref" "$dir/target" --format json --no-cache; then
			t=$(elapsed "$t0")
			if [[ -z "$t_cmp" ]] || (( $(echo "$t < $t_cmp" | bc -l) )); then
				t_cmp=$t rss_cmp=$rss_c cpu_cmp=$cpu_c
			fi
		fi
	done
	[[ -n "$t_cmp" ]] && row "dumpbisect compare --format json" "$t_cmp" "$rss_cmp" "$cpu_cmp"
	# reopen: the second run of a computed tree is served from the metrics
	# cache (a private cache dir, filled by the first run)
	XDG_CACHE_HOME="$dir/cache" "$db_bin" compare "$dir/ref" "$dir/target" --format json > /dev/null || true
	t0=$(now)
	if timed reopen s_r rss_reopen cpu_reopen env XDG_CACHE_HOME="$dir/cache" "$db_bin" compare "$dir/ref" "$dir/target" --format json; then
		t_reopen=$(elapsed "$t0")
		row "  reopen (metrics cache warm)" "$t_reopen" "$rss_reopen" "$cpu_reopen"
	fi
else
	echo "  (dumpbisect compare not available at $db_bin: skipped)"
fi

lib="$build/libdbcore.a"
t_eng=""
if [[ -f "$lib" ]]; then
	drv="$dir/metrics_throughput"
	"$cc" -std=c11 -O2 -D_DEFAULT_SOURCE -I"$repo/include" "$here/metrics_throughput.c" "$lib" \
		-lm -lpthread -o "$drv"
	t0=$(now)
	if timed engine s_eng rss_eng cpu_eng "$drv" -j "$(nproc)" -l "$dir/pairs.list"; then
		t_eng=$(elapsed "$t0")
		row "metrics engine alone ($(nproc) thr)" "$t_eng" "$rss_eng" "$cpu_eng"
	fi
else
	echo "  (no $lib: build first; engine-only timing skipped)"
fi

t_torch=""
if [[ "$run_torch" == 1 ]]; then
	torch_py=$(cat <<'PY'
import os, sys, torch
d = sys.argv[1]
out = []
for name in sorted(os.listdir(os.path.join(d, "ref"))):
    x = torch.load(os.path.join(d, "ref", name)).double()
    y = torch.load(os.path.join(d, "target", name)).double()
    diff = y - x
    out.append(((x * y).sum() / (x.norm() * y.norm())).item())          # cos
    out.append((diff.abs().max() / x.abs().max().clamp_min(1e-12)).item())  # rel
    out.append((diff.norm() / x.norm()).item())                          # rel_l2
    out.append((1 - 2 * (x * y).sum() / (x * x + y * y).sum()).item())  # rel_diff
    out.append(diff.abs().max().item()); out.append(diff.abs().mean().item())
print(len(out))
PY
)
	t0=$(now)
	if timed torch s_t rss_torch cpu_torch "$PYTHON" -c "$torch_py" "$dir"; then
		t_torch=$(elapsed "$t0")
		row "torch.load + float64 metrics" "$t_torch" "$rss_torch" "$cpu_torch"
	fi
else
	echo "  (torch not installed or BENCH_TORCH=0: torch approach skipped)"
fi

# ---- 3. cold page cache (BENCH_COLD=1, needs root: drop_caches) ------------
t_cat_cold="" t_cmp_cold="" t_cat_pairs=""
if [[ "${BENCH_COLD:-0}" == 1 ]]; then
	if [[ -w /proc/sys/vm/drop_caches ]]; then
		drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
		drop
		t0=$(now)
		timed cat-cold s_cc rss_cc cpu_cat_cold cat "${files[@]}" && t_cat_cold=$(elapsed "$t0")
		[[ -n "$t_cat_cold" ]] && row "cat (cold cache)" "$t_cat_cold" "" "$cpu_cat_cold"
		# the order a comparison needs: ref_i then target_i, pair by pair
		paired=()
		for f in "$dir"/ref/*.pt; do paired+=("$f" "$dir/target/$(basename "$f")"); done
		drop
		t0=$(now)
		timed cat-pairs s_cp rss_cp cpu_cat_pairs cat "${paired[@]}" && t_cat_pairs=$(elapsed "$t0")
		[[ -n "${t_cat_pairs:-}" ]] && row "cat, pair order (cold cache)" "$t_cat_pairs" "" "$cpu_cat_pairs"
		if [[ -n "$t_cmp" ]]; then
			drop
			t0=$(now)
			if timed compare-cold s_mc rss_cmp_cold cpu_cmp_cold "$db_bin" compare "$dir/ref" "$dir/target" --format json --no-cache; then
				t_cmp_cold=$(elapsed "$t0")
				row "dumpbisect compare (cold cache)" "$t_cmp_cold" "$rss_cmp_cold" "$cpu_cmp_cold"
			fi
		fi
	else
		echo "  (BENCH_COLD=1 needs write access to /proc/sys/vm/drop_caches: cold run skipped)"
	fi
fi

echo
if [[ -n "$t_cmp" ]]; then
	printf 'compare / cat = %sx wall, %sx CPU' "$(ratio "$t_cmp" "$t_cat")" "$(ratio "$cpu_cmp" "$cpu_cat")"
	[[ -n "$t_torch" ]] && printf ';  torch / compare = %sx' "$(ratio "$t_torch" "$t_cmp")"
	echo
fi
if [[ -n "$t_cmp_cold" && -n "$t_cat_cold" ]]; then
	printf 'cold: compare / cat = %sx wall (disk: %s GB/s by cat, %s GB/s by compare)' \
		"$(ratio "$t_cmp_cold" "$t_cat_cold")" "$(printf '%.2f' "$(echo "$gb / $t_cat_cold" | bc -l)")" \
		"$(printf '%.2f' "$(echo "$gb / $t_cmp_cold" | bc -l)")"
	[[ -n "$t_cat_pairs" ]] && printf '; compare / cat in pair order = %sx' "$(ratio "$t_cmp_cold" "$t_cat_pairs")"
	echo
fi
if [[ -n "$t_reopen" && -n "$t_cmp" ]]; then
	printf 'reopen from the metrics cache: %.3f s (%sx faster than computing)\n' "$t_reopen" \
		"$(ratio "$t_cmp" "$t_reopen")"
fi
if [[ -n "$t_eng" ]]; then
	printf 'engine / cat = %sx wall, %sx CPU' "$(ratio "$t_eng" "$t_cat")" "$(ratio "$cpu_eng" "$cpu_cat")"
	[[ -n "$t_torch" ]] && printf ';  torch / engine = %sx' "$(ratio "$t_torch" "$t_eng")"
	echo
fi
