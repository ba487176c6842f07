#!/usr/bin/env python3
"""The GPU's counters beside the simulator's, per structure check: a Markdown
table from a grades JSON (`grader all ... --json J` with counters read), as in
docs/grading-accuracy.md. Each figure is per warp request, the GPU's first;
where a check measures several shapes, the range over them.

    scripts/counters-table.py J.json
"""
import json
import sys


def per(a, b):
    return a / b if b else None


def span(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    lo, hi = min(values), max(values)
    return f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}–{hi:.2f}"


def both(gpu, sim):
    g, s = span(gpu), span(sim)
    return "–" if g is None and s is None else f"{g or '–'} / {s or '–'}"


def rows(report):
    for e in report["exercises"]:
        for p in e["parts"]:
            for t in p["tests"]:
                if t["kind"] != "structure":
                    continue
                measured = [m for m in t.get("measured") or [] if m.get("gpu")]
                part, _, check = t["name"].partition("::structure::")
                if not measured:
                    yield f"| `{part} {check}` | – | 0 | – | – | – | {t['status']} (no counters: {t.get('verdict') or t['status']}) |"
                    continue
                kernels = sorted({m["kernel"] for m in measured})
                ld = both([per(m["gpu"]["global_load_sectors"], m["gpu"]["global_load_requests"]) for m in measured],
                          [per(m["global_load_sectors"], m["global_load_requests"]) for m in measured])
                st = both([per(m["gpu"]["global_store_sectors"], m["gpu"]["global_store_requests"]) for m in measured],
                          [per(m["global_store_sectors"], m["global_store_requests"]) for m in measured])
                sh = both([per(m["gpu"]["shared_load_wavefronts"] + m["gpu"]["shared_store_wavefronts"],
                               m["gpu"]["shared_load_requests"] + m["gpu"]["shared_store_requests"]) for m in measured],
                          [per(m["shared_wavefronts"], m["shared_requests"]) for m in measured])
                names = ", ".join(f"`{k}`" for k in kernels)
                yield f"| `{part} {check}` | {names} | {len(measured)} | {ld} | {st} | {sh} | {t['status']} |"


def main():
    report = json.load(open(sys.argv[1]))
    print("| check | kernel | measurements | load sectors / request, GPU / sim | store sectors / request, GPU / sim "
          "| shared passes / request, GPU / sim | status |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows(report):
        print(r)


if __name__ == "__main__":
    main()
