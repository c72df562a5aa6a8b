#!/usr/bin/env python3
"""Checks of tests/t_realdump.sh (stdlib only): the answers dumpbisect gave on the
real-upstream trees (tests/fixtures/realdump) against the ground truth of cases.tsv.

  realdump_check.py FIXDIR OUTDIR [XFAIL_FILE]

OUTDIR/<case>.{compare.json,compare.txt,compare.rc,bisect.json,bisect.rc,bisect.err}
are what t_realdump.sh ran.  Prints one line per case (PASS / FAIL / XFAIL / XPASS per
check), then the failing details; exit 1 when a check fails that is not listed in
XFAIL_FILE (lines `case:check`, # comments), 0 otherwise (XPASS is reported, not fatal).
"""
import json
import os
import re
import sys

CHECKS = ["compare.exit", "compare.layer", "compare.stage", "compare.artefact",
          "compare.phase", "bisect.exit", "bisect.kind", "bisect.layer", "bisect.stage",
          "bisect.ranks", "order"]
# first divergence: [L<layer> ]<stage> rank <r>[ pass <p>][ phase <ph>]: ...
# (a pair compared merged across ranks says "(merged ranks)" for the rank;
# one whose cell diverges on every rank "every rank (of N)")
# ("first divergence beyond drift:" names the bug when drift comes first)
HEADLINE = re.compile(r"^first divergence(?: beyond drift)?: (?:L(\d+) )?(\S+) (?:rank (\S+)|\(merged ranks\)|every rank \(of \d+\))"
                      r"(?: pass (\S+))?(?: phase (\S+))?:")


def read_tsv(path):
    rows, head = [], None
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        if head is None:
            head = f
            continue
        rows.append(dict(zip(head, f)))
    return rows


def read_orders(path):
    orders = {}
    for line in open(path):
        if line.startswith("#") or ":" not in line:
            continue
        name, mods = line.split(":", 1)
        orders[name.strip()] = mods.split()
    return orders


def module_of(stage):
    """The module path of a stage name (see orders.txt), or None for grads."""
    s = stage
    if s.startswith("grad__"):
        return None
    if s.startswith("non_intrusive__"):
        s = s[len("non_intrusive__"):]
    s = re.sub(r"^(module\.)*(model\.)?(decoder\.)?", "", s)
    m = re.match(r"^layers\.\d+(\.(.*))?$", s)
    if m:
        s = m.group(2) or ""
    s = re.sub(r"\.(output|inputs)(\.\w+)?$", "", s)
    s = re.sub(r"\.\d+$", "", s)
    if s in ("", "output"):
        return "<layer>"
    return s


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f), None
    except Exception as e:  # noqa: BLE001  (absent or not JSON: the check says why)
        return None, "%s: %s" % (os.path.basename(path), e)


def read(path, default=""):
    try:
        return open(path).read()
    except OSError:
        return default


def check_case(c, out, orders):
    """{check: (ok, detail)}; a check that does not apply is absent."""
    name = c["case"]
    res = {}
    crc = read(os.path.join(out, name + ".compare.rc")).strip()
    brc = read(os.path.join(out, name + ".bisect.rc")).strip()
    cj, cerr = load_json(os.path.join(out, name + ".compare.json"))
    bj, berr = load_json(os.path.join(out, name + ".bisect.json"))
    if bj is None and brc != "1":
        berr = "no JSON (exit %s: %s)" % (brc, read(os.path.join(out, name + ".bisect.err")).strip()[:160])
    txt = read(os.path.join(out, name + ".compare.txt"))
    stage_re = re.compile(c["stage"])
    layer = int(c["layer"])
    phase_re = None if c["phase"] == "-" else re.compile(c["phase"])

    res["compare.exit"] = (crc == "1", "exit %s, want 1" % crc)
    # the headline of the text output
    head = None
    for line in txt.splitlines():
        m = HEADLINE.match(line)
        if m:
            head = m
    last = txt.strip().splitlines()[-1] if txt.strip() else "<no output>"
    if head is None:
        for k in ("compare.layer", "compare.stage"):
            res[k] = (False, "no `first divergence:` line (last line: %s)" % last[:160])
    else:
        hl = head.group(1)
        res["compare.layer"] = (hl is not None and int(hl) == int(c["headline"]),
                                "headline %s, want L%s (%s)" % ("L" + hl if hl else "without a layer",
                                                              c["headline"], head.group(0)))
        res["compare.stage"] = (bool(stage_re.search(head.group(2))),
                                "headline stage %r, want /%s/" % (head.group(2), c["stage"]))
    # the headline pair is no pairing artefact
    ranks = set()
    if cj is None:
        res["compare.artefact"] = (False, cerr)
    else:
        pairs = cj.get("pairs", [])
        ranks = {p.get("rank") for p in pairs if isinstance(p.get("rank"), int)}
        i = cj.get("first_divergence")
        fb = cj.get("first_beyond_drift")
        if isinstance(fb, int) and isinstance(i, int) and 0 <= i < len(pairs) \
                and pairs[i].get("severity") == "drift":
            i = fb      # the headline names this one too (see HEADLINE)
        if not isinstance(i, int) or not 0 <= i < len(pairs):
            res["compare.artefact"] = (False, "first_divergence %r" % (i,))
        else:
            p = pairs[i]
            res["compare.artefact"] = (p.get("status") not in ("ref_only", "target_only"),
                                       "headline pair %s %s is %s" % (p.get("stage"), p.get("rank"), p.get("status")))
    if phase_re is not None:
        got = None
        if cj is not None:
            got = cj.get("first_divergent_phase")
            pairs = cj.get("pairs", [])
            i, fb = cj.get("first_divergence"), cj.get("first_beyond_drift")
            if isinstance(fb, int) and isinstance(i, int) and 0 <= i < len(pairs) \
                    and pairs[i].get("severity") == "drift":
                got = pairs[fb].get("phase")
        if not got and head is not None:
            got = head.group(5)
        res["compare.phase"] = (bool(got) and bool(phase_re.search(got)),
                                "phase %r, want /%s/" % (got, c["phase"]))

    # bisect --auto --format json
    res["bisect.exit"] = (brc == "1", "exit %s, want 1 (%s)" % (brc, read(os.path.join(out, name + ".bisect.err")).strip()[:200]))
    if bj is None:
        for k in ("bisect.kind", "bisect.layer", "bisect.stage", "bisect.ranks", "bisect.pass"):
            res[k] = (False, berr)
    else:
        kind = bj.get("kind")
        res["bisect.kind"] = (kind not in (None, "none", "inconclusive", "drift", "input_ids"),
                              "kind %r" % (kind,))
        res["bisect.layer"] = (bj.get("first_bad_layer") == layer,
                               "first_bad_layer %r, want %d" % (bj.get("first_bad_layer"), layer))
        st = bj.get("first_bad_substage") or bj.get("first_bad_stage")
        res["bisect.stage"] = (isinstance(st, str) and bool(stage_re.search(st)),
                               "stage %r / substage %r, want /%s/" % (
                                   bj.get("first_bad_stage"), bj.get("first_bad_substage"), c["stage"]))
        br = bj.get("bad_ranks")
        br = sorted(br) if isinstance(br, list) else br
        allb = bj.get("all_ranks_bad", "<absent>")
        if c["ranks"] == "all":
            # bisect lists bad ranks only when some, not all, are bad; all_ranks_bad
            # (when the output has it) says so explicitly
            want = sorted(ranks) if ranks else [0]
            if bj.get("ranks_separable") is False:
                # the culprit is compared merged only (another layout on the
                # other side): no rank can be named, and the output says so
                ok = br == [] and allb is False
            elif allb == "<absent>":
                ok = br == []
            else:
                ok = allb is True and br in ([], want)
        else:
            want = sorted(int(x) for x in c["ranks"].split(","))
            ok = br == want and allb in (want == sorted(ranks), "<absent>")
        res["bisect.ranks"] = (ok, "bad_ranks %r all_ranks_bad %r, want %r (%s)" % (
            br, allb, want, c["ranks"]))
        # the pass: the case's own (a decode-step bug acts from step S on),
        # else the first pass holding the bug's layer in the phase bisected
        # (the bug acts in every forward from the prefill on)
        want_pass = c.get("pass", "-")
        if want_pass in ("-", "") and cj is not None:
            ps = [p.get("pass") for p in cj.get("pairs", [])
                  if p.get("layer") == layer and p.get("pass") is not None
                  and p.get("phase") == bj.get("phase")]
            want_pass = min(ps, key=lambda v: (0, v, "") if isinstance(v, int) else (1, 0, str(v))) \
                if ps else None
        elif want_pass not in ("-", ""):
            want_pass = int(want_pass) if want_pass.isdigit() else want_pass
        res["bisect.pass"] = ("pass" in bj and bj.get("pass") == want_pass,
                              "pass %r, want %r" % (bj.get("pass", "<absent>"), want_pass))
        if phase_re is not None:
            for k in ("first_bad_phase", "phase"):
                if k in bj:
                    res["bisect.phase"] = (bool(bj[k]) and bool(phase_re.search(str(bj[k]))),
                                           "%s %r, want /%s/" % (k, bj[k], c["phase"]))

    # stage order within a layer, in the pairs' order (execution order)
    # compare names the pass too, where the case gives one (decode steps)
    # ("first diverging pass: N", printed when the tree has several passes)
    if c.get("pass", "-") not in ("-", ""):
        m = re.search(r"^first diverging pass: (\S+)", txt, re.M)
        res["compare.pass"] = (m is not None and m.group(1) == c["pass"],
                               "first diverging pass %r, want %s" % (m and m.group(1), c["pass"]))
    if c.get("order", "-") != "-":
        lists = [orders[o] for o in c["order"].split("+")]
        if cj is None:
            res["order"] = (False, cerr)
        else:
            groups = {}
            for p in cj.get("pairs", []):
                if p.get("layer") is None or p.get("rank") is None:
                    continue  # model-level pairs, and merged (rank null) pairs at the end
                mod = module_of(str(p.get("stage")))
                if mod is None:
                    continue
                key = (p.get("phase"), p.get("pass"), p.get("rank"), p.get("layer"))
                g = groups.setdefault(key, [])
                if not g or g[-1][0] != mod:
                    g.append((mod, p.get("stage")))
            bad = []
            checked = 0
            for key, g in groups.items():
                if str(key[0]).endswith(".grad"):
                    # gradients are written as backward runs, where a module's
                    # output grad and its last child's are one tensor: the
                    # dump order (dump_index) is the only truth there is
                    continue
                lst = max(lists, key=lambda L: sum(m in L for m, _ in g))
                pos = [(lst.index(m), s) for m, s in g if m in lst]
                checked += len(pos) > 1
                for (a, sa), (b, sb) in zip(pos, pos[1:]):
                    if b < a:
                        bad.append("phase %s pass %s rank %s L%s: %s before %s" % (key + (sa, sb)))
                        break
            if checked == 0:
                res["order"] = (False, "no layer with two known stages")
            else:
                res["order"] = (not bad, "%d of %d layer groups out of order, e.g. %s" % (
                    len(bad), checked, bad[0] if bad else ""))
    return res


def main():
    fix, out = sys.argv[1], sys.argv[2]
    xf = set()
    if len(sys.argv) > 3 and sys.argv[3] and os.path.exists(sys.argv[3]):
        for line in open(sys.argv[3]):
            line = line.split("#", 1)[0].strip()
            if line:
                xf.add(line)
    cases = read_tsv(os.path.join(fix, "cases.tsv"))
    # the decode-step cases (a bug from step S on), when the tree has them
    if os.path.exists(os.path.join(fix, "cases_steps.tsv")):
        cases += read_tsv(os.path.join(fix, "cases_steps.tsv"))
    orders = read_orders(os.path.join(fix, "orders.txt"))
    known = {c["case"] for c in cases}
    checks = CHECKS + ["bisect.phase", "bisect.pass", "compare.pass"]
    w = max(len(c["case"]) for c in cases)
    short = {"compare.exit": "c.exit", "compare.layer": "c.layer", "compare.stage": "c.stage",
             "compare.artefact": "c.artef", "compare.phase": "c.phase", "bisect.exit": "b.exit",
             "bisect.kind": "b.kind", "bisect.layer": "b.layer", "bisect.stage": "b.stage",
             "bisect.ranks": "b.ranks", "bisect.phase": "b.phase", "bisect.pass": "b.pass", "compare.pass": "c.pass", "order": "order"}
    print("%-*s  %s" % (w, "case", " ".join("%-7s" % short[k] for k in checks)))
    details, nfail, nxfail, nxpass, npass = [], 0, 0, 0, 0
    for c in cases:
        res = check_case(c, out, orders)
        cells = []
        for k in checks:
            if k not in res:
                cells.append("%-7s" % "-")
                continue
            ok, why = res[k]
            x = "%s:%s" % (c["case"], k) in xf
            if ok and not x:
                cell, npass = "PASS", npass + 1
            elif ok:
                cell, nxpass = "XPASS", nxpass + 1
                details.append("XPASS %s:%s (remove it from xfail.txt)" % (c["case"], k))
            elif x:
                cell, nxfail = "xfail", nxfail + 1
                details.append("xfail %s:%s: %s" % (c["case"], k, why))
            else:
                cell, nfail = "FAIL", nfail + 1
                details.append("FAIL  %s:%s: %s" % (c["case"], k, why))
            cells.append("%-7s" % cell)
        print("%-*s  %s" % (w, c["case"], " ".join(cells)))
    # (with DB_REALDUMP_CASES only some rows are here: no note then)
    stale = [] if os.environ.get("DB_REALDUMP_CASES") else \
        sorted(x for x in xf if x.split(":", 1)[0] not in known)
    for x in stale:
        details.append("note: xfail entry %s names no case" % x)
    print()
    for d in details:
        print(d)
    print("\n%d pass, %d FAIL, %d xfail, %d XPASS (%d cases)" % (npass, nfail, nxfail, nxpass, len(cases)))
    sys.exit(1 if nfail else 0)


if __name__ == "__main__":
    main()
