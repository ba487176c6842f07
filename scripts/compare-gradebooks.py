#!/usr/bin/env python3
"""Compares two `grader batch` outputs test by test (issue 11):

    scripts/compare-gradebooks.py FAST_OUT ISOLATE_OUT

Every student of ISOLATE_OUT's gradebook must be in FAST_OUT's with the same
status, and every test the same status, verdict and score, except performance
tests, whose ratios (`perf.value`) may differ by up to 3% (timing noise: the
two batches time kernels at different moments). Only ratios that count are
held to that: a part's performance counts only once all its correctness tests
pass, and the ratio of a stub that does nothing in microseconds is noise (those
are listed apart). A performance test whose verdict flips is listed with both
ratios and its threshold. Exit 0 when the two agree, 1 otherwise.

A FAST_OUT without a gradebook (a batch stopped by a time limit) is compared
part by part: the students of ISOLATE_OUT whose every part FAST_OUT graded.
"""
import json
import pathlib
import sys

TOLERANCE = 0.03


def load(out, rel):
    return json.loads((pathlib.Path(out) / rel).read_text())


def tests(student):
    return {t["name"]: t for e in student["grades"]["exercises"] for p in e["parts"] for t in p["tests"]}


def part_tests(out, key):
    """The tests of every part result of one student (a batch's results/ folder)."""
    found = {}
    for f in sorted((pathlib.Path(out) / "results" / key).glob("*.json")):
        if not f.name.endswith(".child.json"):
            report = json.loads(f.read_text())
            found.update({t["name"]: t for e in report["exercises"] for p in e["parts"] for t in p["tests"]})
    return found


def part_of(name):
    return "::".join(name.split("::")[:2])


def correct_parts(found):
    """The parts (`ex01::shared`) whose every correctness test passed."""
    failed = {part_of(n) for n, t in found.items() if t["kind"] == "correctness" and t["status"] != "pass"}
    return {part_of(n) for n in found} - failed


def main():
    fast_out, iso_out = sys.argv[1], sys.argv[2]
    iso_book = load(iso_out, "gradebook.json")
    whole = (pathlib.Path(fast_out) / "gradebook.json").exists()
    fast_rows = {r["key"]: r for r in load(fast_out, "gradebook.json")["students"]} if whole else {}
    problems, perf_flips, ratios, uncounted, compared = [], [], [], [], 0
    students = 0
    for row in iso_book["students"]:
        key = row["key"]
        b = tests(load(iso_out, row["report"]))
        if whole:
            if key not in fast_rows:
                problems.append(f"{key}: not in the fast gradebook")
                continue
            if fast_rows[key]["status"] != row["status"]:
                problems.append(f"{key}: status {fast_rows[key]['status']} (fast) vs {row['status']} (isolate)")
            a = tests(load(fast_out, fast_rows[key]["report"]))
        else:
            a = part_tests(fast_out, key)
            if set(a) != set(b):
                print(f"skipped {key}: the stopped fast batch did not grade all of it")
                continue
        students += 1
        counted = correct_parts(a) & correct_parts(b)
        for name in sorted(set(a) | set(b)):
            compared += 1
            ta, tb = a.get(name), b.get(name)
            if ta is None or tb is None:
                problems.append(f"{key} {name}: only in one of them")
                continue
            perf = ta["kind"] == "performance"
            pa, pb = ta.get("perf"), tb.get("perf")
            if perf and pa and pb:
                change = pa["value"] / pb["value"] - 1
                if part_of(name) not in counted:
                    uncounted.append(abs(change))
                    continue
                ratios.append((abs(change), key, name, pa["value"], pb["value"]))
                if ta["status"] != tb["status"]:
                    perf_flips.append(f"{key} {name}: {ta['status']} at {pa['value']:.3f} (fast) vs "
                                      f"{tb['status']} at {pb['value']:.3f} (isolate), threshold {pa['threshold']}")
                continue
            same = (ta["status"], ta.get("verdict"), round(ta["score"], 6)) == \
                   (tb["status"], tb.get("verdict"), round(tb["score"], 6))
            if not same:
                problems.append(f"{key} {name}: {ta['status']}/{ta.get('verdict')}/{ta['score']:.2f} (fast) vs "
                                f"{tb['status']}/{tb.get('verdict')}/{tb['score']:.2f} (isolate)")
    for p in problems:
        print("DIFFERENT", p)
    for p in perf_flips:
        print("PERF FLIP", p)
    ratios.sort(reverse=True)
    over = [r for r in ratios if r[0] > TOLERANCE]
    for change, key, name, va, vb in ratios[:5]:
        print(f"perf ratio {key} {name}: {va:.3f} (fast) vs {vb:.3f} (isolate) = {change * 100:.1f}%")
    worst = ratios[0][0] * 100 if ratios else 0.0
    ok = not problems and not perf_flips and not over
    print(f"{students} students, {compared} tests compared: {len(problems)} differences, "
          f"{len(perf_flips)} perf verdict flips, {len(over)} of {len(ratios)} perf ratios that count beyond 3% "
          f"(largest {worst:.1f}%)")
    if uncounted:
        print(f"  not held to 3%: {len(uncounted)} ratios of parts that fail correctness (largest "
              f"{max(uncounted) * 100:.1f}%; their performance scores nothing)")
    print("RESULT: " + ("same gradebook" if ok else "DIFFERENT"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
