#!/usr/bin/env bash
# Whole-tree compare speed (issues 5 and 12): builds a large bf16 dump tree
# per side (SGLang dumper v1 file names, one torch.save'd tensor per file),
# then in ONE run prints, in each of three page-cache states (fresh-written,
# read-filled, cold; see section 2):
#   - `cat` of all files to /dev/null (the floor: the bytes themselves),
#   - `dumpbisect compare REF TARGET --format json --no-cache` once per read
#     path (DUMPBISECT_READ=auto, the default, pread and mmap),
# each with wall time, CPU, peak RSS, minor/major page faults, the load
# average when it started and the ratio to `cat` in the same state; then, on
# a hot cache, the metrics-cache reopen, the metrics engine alone
# (tests/bench/metrics_throughput.c, compiled here against libdbcore.a) and
# the torch approach (torch.load + float64 metrics in Python, as SGLang's
# comparator and ATOM's compare do) when torch is installed.
# No timed assertions: this reports, it does not judge. Needs /usr/bin/time
# (GNU time: apt-get install time).
#
# Environment (defaults in brackets):
#   BENCH_LAYERS [32]  BENCH_STAGES [4]  BENCH_ROWS [2048]  BENCH_COLS [4096]
#       default = 128 pairs of [2048 x 4096] bf16 = 4 GiB per run (2 sides);
#       BENCH_LAYERS=16 = 2 GiB
#   BENCH_DIR    [mktemp -d]   where the tree is written (deleted afterwards)
#   BENCH_KEEP   [0]           1 = keep the tree (and reuse it next run)
#   BENCH_STATES [fresh read cold]  read and cold drop the page cache: root
#                              only, and it affects the whole machine
#   BENCH_PATHS  [auto pread mmap]  read paths to time (DUMPBISECT_READ values)
#   BENCH_REPS   [2]           best of this many runs, each from a fresh state
#   BENCH_TORCH  [auto]        0 = skip the torch.load measurement
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

# ---- 2. timings in three page-cache states -----------------------------------
# fresh: the files were just written (rewritten with one 64 MiB dd write
#        each before every run): their page cache sits in large folios, as
#        after torch.save (the same ~2,400 faults for 2 GiB when mapped).
# read:  drop caches, then `cat` every file once: the page cache holds the
#        files in readahead-sized folios, as after the dumps came off disk.
# cold:  drop caches: nothing cached, every byte comes from the disk.
# In each state `cat` of all files and `dumpbisect compare` (once per read
# path in BENCH_PATHS) each start from the same state. read and cold need
# root (/proc/sys/vm/drop_caches; it affects the whole machine).
now() { date +%s.%N; }
ratio() { # a / b to 2 decimals, "-" when b is 0 or missing
	if [[ -n "$2" ]] && (( $(echo "$2 > 0" | bc -l) )); then printf '%.2f' "$(echo "$1 / $2" | bc -l)"; else printf -- '-'; fi
}
files=("$dir"/ref/*.pt "$dir"/target/*.pt)
gb=$(echo "$total_bytes / 1000000000" | bc -l)
paths=${BENCH_PATHS:-auto pread mmap}
reps=${BENCH_REPS:-2}
states=${BENCH_STATES:-fresh read cold}
can_drop=0
[[ -w /proc/sys/vm/drop_caches ]] && can_drop=1

prep() { # STATE
	case $1 in
	fresh)
		local f
		# one big write per file, as torch.save writes a storage (cp
		# would copy in small pieces: small folios, like the read state)
		for f in "${files[@]}"; do dd if="$f" of="$f.tmp" bs=64M status=none && mv "$f.tmp" "$f"; done
		sync;;
	read) sync; echo 1 > /proc/sys/vm/drop_caches; cat "${files[@]}" > /dev/null;;
	cold) sync; echo 1 > /proc/sys/vm/drop_caches;;
	hot) cat "${files[@]}" > /dev/null;;
	esac
}

# measure OUTPREFIX command...: wall (s), CPU (user+sys s), peak RSS (KiB),
# minor and major page faults, into ${OUTPREFIX}_{t,cpu,rss,minflt,majflt};
# exit 1 of compare ("something diverges") is expected.
measure() {
	local pfx=$1 tf rc=0
	shift
	tf=$(mktemp)
	local t0; t0=$(now)
	/usr/bin/time -f '%e %M %U %S %R %F' -o "$tf" "$@" > /dev/null 2> "$tf.err" || rc=$?
	local t; t=$(echo "$(now) - $t0" | bc -l)
	local e m u s mi ma
	read -r e m u s mi ma < <(tail -n 1 "$tf") || true
	rm -f "$tf"
	if [[ $rc -gt 1 ]]; then
		echo "  ($* failed with exit $rc: $(head -c 300 "$tf.err"))"
		rm -f "$tf.err"
		return 1
	fi
	rm -f "$tf.err"
	printf -v "${pfx}_t" '%s' "$t"
	printf -v "${pfx}_cpu" '%s' "$(echo "$u + $s" | bc -l)"
	printf -v "${pfx}_rss" '%s' "$m"
	printf -v "${pfx}_minflt" '%s' "$mi"
	printf -v "${pfx}_majflt" '%s' "$ma"
}

printf '\n%-7s %-26s %8s %7s %7s %10s %8s %6s %6s %5s\n' \
	"state" "what" "seconds" "GB/s" "CPU s" "peak RSS" "minflt" "majflt" "x cat" "load"
row() { # state what t cpu rss minflt majflt t_cat load
	local rss="-"
	[[ -n "$5" && "$5" != 0 ]] && rss=$(printf '%.1f MiB' "$(echo "$5 / 1024" | bc -l)")
	printf '%-7s %-26s %8.3f %7.2f %7.2f %10s %8s %6s %6s %5s\n' "$1" "$2" "$3" \
		"$(echo "$gb / $3" | bc -l)" "$4" "$rss" "$6" "$7" "$(ratio "$3" "$8")" "$9"
}
load1() { cut -d' ' -f1 /proc/loadavg; }

have_db=0
if [[ -x "$db_bin" ]] && "$db_bin" compare --help > /dev/null 2>&1; then have_db=1; else
	echo "  (dumpbisect compare not available at $db_bin: skipped)"; fi
summary=()
for st in $states; do
	if [[ "$st" != fresh && "$st" != hot && "$can_drop" != 1 ]]; then
		echo "  ($st: needs write access to /proc/sys/vm/drop_caches (root): skipped)"
		continue
	fi
	# best of $reps for each, every run from a freshly prepared state
	best_cat="" best_cat_cpu="" best_cat_min="" best_cat_maj="" best_cat_load=""
	for ((r = 0; r < reps; r++)); do
		prep "$st"
		l=$(load1)
		if measure m cat "${files[@]}" &&
		   { [[ -z "$best_cat" ]] || (( $(echo "$m_t < $best_cat" | bc -l) )); }; then
			best_cat=$m_t best_cat_cpu=$m_cpu best_cat_min=$m_minflt best_cat_maj=$m_majflt best_cat_load=$l
		fi
	done
	[[ -z "$best_cat" ]] && continue
	row "$st" "cat" "$best_cat" "$best_cat_cpu" "" "$best_cat_min" "$best_cat_maj" "$best_cat" "$best_cat_load"
	[[ "$have_db" == 1 ]] || continue
	for p in $paths; do
		bt="" bcpu="" brss="" bmin="" bmaj="" bl=""
		for ((r = 0; r < reps; r++)); do
			prep "$st"
			l=$(load1)
			if measure m env DUMPBISECT_READ="$p" "$db_bin" compare "$dir/ref" "$dir/target" \
				--format json --no-cache &&
			   { [[ -z "$bt" ]] || (( $(echo "$m_t < $bt" | bc -l) )); }; then
				bt=$m_t bcpu=$m_cpu brss=$m_rss bmin=$m_minflt bmaj=$m_majflt bl=$l
			fi
		done
		[[ -z "$bt" ]] && continue
		row "$st" "compare ($p)" "$bt" "$bcpu" "$brss" "$bmin" "$bmaj" "$best_cat" "$bl"
		summary+=("$(printf '%-6s compare (%s) / cat = %sx wall, %sx CPU, peak RSS %.1f MiB, %s minor faults' \
			"$st" "$p" "$(ratio "$bt" "$best_cat")" "$(ratio "$bcpu" "$best_cat_cpu")" \
			"$(echo "$brss / 1024" | bc -l)" "$bmin")")
	done
done

# reopen: the second run of a computed tree is served from the metrics cache
t_reopen=""
if [[ "$have_db" == 1 ]]; then
	prep hot
	XDG_CACHE_HOME="$dir/cache" "$db_bin" compare "$dir/ref" "$dir/target" --format json > /dev/null || true
	if measure m env XDG_CACHE_HOME="$dir/cache" "$db_bin" compare "$dir/ref" "$dir/target" --format json; then
		t_reopen=$m_t
		row hot "reopen (metrics cache)" "$m_t" "$m_cpu" "$m_rss" "$m_minflt" "$m_majflt" "" "$(load1)"
	fi
fi

lib="$build/libdbcore.a"
t_eng=""
if [[ -f "$lib" ]]; then
	drv="$dir/metrics_throughput"
	"$cc" -std=c11 -O2 -D_DEFAULT_SOURCE -I"$repo/include" "$here/metrics_throughput.c" "$lib" \
		-lm -lpthread -o "$drv"
	prep hot
	if measure m "$drv" -j "$(nproc)" -l "$dir/pairs.list"; then
		t_eng=$m_t
		row hot "engine alone ($(nproc) thr, mmap)" "$m_t" "$m_cpu" "$m_rss" "$m_minflt" "$m_majflt" "" "$(load1)"
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
	prep hot
	if measure m "$PYTHON" -c "$torch_py" "$dir"; then
		t_torch=$m_t
		row hot "torch.load + f64 metrics" "$m_t" "$m_cpu" "$m_rss" "$m_minflt" "$m_majflt" "" "$(load1)"
	fi
else
	echo "  (torch not installed or BENCH_TORCH=0: torch approach skipped)"
fi


echo
for s in "${summary[@]}"; do echo "$s"; done
if [[ -n "$t_reopen" ]]; then
	printf 'reopen from the metrics cache: %.3f s\n' "$t_reopen"
fi
