#!/usr/bin/env python3
"""One line per grades JSON (`grader ... --json J`): its score, how many of
its structure checks pass, how many timed checks it has, and every check
that neither passed nor was left out as not graded here. For the GPU
scripts' summaries (gpu-48-steady.sh, gpu-49-counters.sh).

    scripts/grades-summary.py J.json ...
"""
import json
import sys
from pathlib import Path


def line(path):
    r = json.load(open(path))
    tests = [t for e in r["exercises"] for p in e["parts"] for t in p["tests"]]
    structure = [t for t in tests if t["kind"] == "structure"]
    passing = sum(t["status"] == "pass" for t in structure)
    timed = sum(t["kind"] == "performance" for t in tests)
    bad = [t["name"] for t in tests if t["status"] not in ("pass", "not_graded_here")]
    return (f'{Path(path).stem:14} score {r["score"]:.2f}/{r["max_score"]:.2f}; structure {passing}/{len(structure)} '
            f'pass; timed checks {timed}; not passing: {bad}')


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(line(p))
