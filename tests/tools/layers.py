#!/usr/bin/env python3
"""Holds the code to the rooms of ARCHITECTURE.md, from a build's objects.

    python3 tests/tools/layers.py BUILD_DIR

Reads every object file of the core (src/<folder>/*.o) and the workbench
(ui/*.o) with `nm`, ties each undefined symbol to the file that defines it,
and fails (exit 1) on:
  - a circle: files that call each other in a loop;
  - a call up: a folder calling into a folder above it in ORDER;
  - a source file over 700 lines, a folder over 25 source files;
  - curses included under src/ or include/.
Calls are what the linker sees (functions and globals); type-only uses of a
header are not calls and are not counted.
"""
import collections, glob, os, re, subprocess, sys

# Lowest first; the same order as ARCHITECTURE.md.
ORDER = ['src/util', 'src/read', 'src/layout', 'src/pair', 'src/measure', 'src/compare',
         'src/grid', 'src/bisect', 'src/session', 'src/report', 'src/cmd',
         'ui/base', 'ui/views', 'ui']
MAX_LINES, MAX_FILES = 700, 25

def objects(build):
    objs = glob.glob(os.path.join(build, 'CMakeFiles/dbcore.dir/src/*/*.o'))
    objs += glob.glob(os.path.join(build, 'CMakeFiles/dumpbisect.dir/ui/*.o'))
    objs += glob.glob(os.path.join(build, 'CMakeFiles/dumpbisect.dir/ui/*/*.o'))
    return objs

def graph(build, root):
    defs, uses = {}, collections.defaultdict(set)
    for o in objects(build):
        rel = o.split('.dir/', 1)[1][:-2]          # src/read/zip.c
        if not os.path.exists(os.path.join(root, rel)):
            continue                               # a stale object of a moved file
        for line in subprocess.run(['nm', o], capture_output=True, text=True).stdout.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBRVWG':
                defs[p[2]] = rel
            elif len(p) == 2 and p[0] == 'U':
                uses[rel].add(p[1])
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    for f, us in uses.items():
        for s in us:
            if s in defs and defs[s] != f:
                edges[f][defs[s]].add(s)
    return edges

def circles(edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    nodes = set(edges) | {b for a in edges for b in edges[a]}
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out

def main():
    build = sys.argv[1] if len(sys.argv) > 1 else 'build'
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not objects(build):
        print('layers: no object files under %s (build first)' % build); return 2
    edges, bad = graph(build, root), []
    for comp in circles(edges):
        bad.append('circle: ' + ' '.join(comp))
        for a in comp:
            for b in comp:
                if b in edges[a]:
                    bad.append('    %s -> %s: %s' % (a, b, ' '.join(sorted(edges[a][b]))))
    folder = lambda f: os.path.dirname(f)
    for a in sorted(edges):
        for b in sorted(edges[a]):
            fa, fb = folder(a), folder(b)
            if fa not in ORDER or fb not in ORDER:
                bad.append('not a room of ORDER: %s or %s' % (fa, fb)); continue
            if ORDER.index(fb) > ORDER.index(fa):
                bad.append('call up: %s -> %s: %s' % (a, b, ' '.join(sorted(edges[a][b]))))
    for d in sorted(glob.glob(os.path.join(root, 'src/*/'))) + sorted(glob.glob(os.path.join(root, 'ui/*/'))) + [os.path.join(root, 'ui/')]:
        rel = os.path.relpath(d, root)
        if rel not in ORDER:
            bad.append('folder %s is not in ORDER (tests/tools/layers.py, ARCHITECTURE.md)' % rel)
        cs = glob.glob(os.path.join(d, '*.c'))
        if len(cs) > MAX_FILES:
            bad.append('%s holds %d source files (> %d)' % (rel, len(cs), MAX_FILES))
        for f in cs + glob.glob(os.path.join(d, '*.h')):
            n = sum(1 for _ in open(f, encoding='utf-8', errors='replace'))
            if n > MAX_LINES:
                bad.append('%s: %d lines (> %d)' % (os.path.relpath(f, root), n, MAX_LINES))
    for f in glob.glob(os.path.join(root, 'src/*/*.[ch]')) + glob.glob(os.path.join(root, 'include/*.h')):
        if re.search(r'#\s*include\s*[<"](n?curses(w)?|ncursesw/curses)\.h', open(f, errors='replace').read()):
            bad.append('curses included in the core: ' + os.path.relpath(f, root))
    if bad:
        print('\n'.join(bad)); print('layers: %d problem(s)' % sum(not b.startswith('    ') for b in bad))
        return 1
    nf = len(set(edges) | {b for a in edges for b in edges[a]})
    print('layers: %d files, no circle, no call up, files <= %d lines' % (nf, MAX_LINES))
    return 0

if __name__ == '__main__':
    sys.exit(main())
