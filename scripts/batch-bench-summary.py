#!/usr/bin/env python3
"""The summary of scripts/gpu-batch-bench.sh:

    scripts/batch-bench-summary.py WORK STUDENTS ISOLATE_STUDENTS

WORK is the bench's work folder (results/ with each step's .time and .txt,
and one batch output folder per run). Prints throughput per run, where the
time went (batch.json), the fast-vs-isolate comparison, the hostile corpus
line and `grader all --reference` cold and warm.
"""
import json
import pathlib
import re
import sys


def took(res, name):
    try:
        secs, status = (res / f"{name}.time").read_text().split()
        return float(secs), int(status)
    except (OSError, ValueError):
        return float("nan"), -1


def breakdown(out):
    try:
        return json.loads((out / "batch.json").read_text()).get("time") or {}
    except (OSError, ValueError):
        return {}


def finished(res, name):
    """Submissions the run said were done ("[k/n] name: ..." lines): a run
    stopped by its limit has fewer than the class."""
    text = (res / f"{name}.txt").read_text(errors="replace") if (res / f"{name}.txt").exists() else ""
    return len(re.findall(r"^\[\d+/\d+\] ", text, re.M))


def batch_line(work, res, name, students):
    secs, status = took(res, name)
    out = work / name
    done = finished(res, name)
    rate = done / secs * 60 if secs == secs and secs > 0 else float("nan")
    print(f"{name}: {done} of {students} submissions in {secs:.1f} s = {rate:.1f} per minute (exit {status})")
    t = breakdown(out)
    if not t:
        return
    keys = ["wall_s", "compile_ahead_s", "compile_s", "cpu_reference_s", "gpu_correctness_s", "gpu_timing_s",
            "sanitizer_s", "process_overhead_s", "lock_wait_s", "stuck_kernels_s"]
    print("  time (s, summed over workers): " + ", ".join(f"{k[:-2]} {t.get(k, 0):.1f}" for k in keys))
    print(f"  idle GPU {t.get('idle_gpu_s')}; parts in workers {t.get('parts_in_workers')}, regraded alone "
          f"{t.get('parts_regraded_alone')}, workers started {t.get('workers_started')}")
    drift = t.get("drift") or []
    if drift:
        worst = max(drift, key=lambda d: abs(d["change"]))
        print(f"  yardstick re-timings: {len(drift)}, largest drift {worst['change'] * 100:+.1f}% ({worst['yardstick']})")


def main():
    work = pathlib.Path(sys.argv[1])
    students, iso_students = int(sys.argv[2]), int(sys.argv[3])
    res = work / "results"
    for run in sorted(p.stem for p in res.glob("fast-*.time")):
        batch_line(work, res, run, students)
    if (res / "isolate.time").exists():
        batch_line(work, res, "isolate", iso_students)
        lines = (res / "compare.txt").read_text().splitlines()
        keep = [l for l in lines if "tests compared" in l or l.startswith(("RESULT", "DIFF", "PERF", "compare exit"))]
        print("gradebook, first students, fast vs --isolate:\n  " + "\n  ".join(keep[-8:]))
    h = res / "hostile.txt"
    if h.exists():
        lines = [l for l in h.read_text().splitlines() if l.strip()]
        print("hostile corpus: " + (lines[-1] if lines else "no output") + f" ({took(res, 'hostile')[0]:.0f} s)")
    scores = []
    for run in ["cold", "warm1", "warm2"]:
        if not (res / f"all-{run}.time").exists():
            continue
        secs, _ = took(res, f"all-{run}")
        try:
            j = json.loads((res / f"all-{run}.json").read_text())
            score = f"{j['score']:.2f}/{j['max_score']:.2f}"
            scores.append(j["score"])
        except (OSError, ValueError, KeyError):
            score = "no JSON"
        print(f"grader all --reference {run}: {secs:.2f} s, score {score}")
    if scores:
        print("  same score every run: " + str(len(set(scores)) == 1))
        try:
            j = json.loads((res / "all-warm2.json").read_text())
            tests = sorted(((t["duration_ms"], t["name"]) for e in j["exercises"] for p in e["parts"]
                            for t in p["tests"]), reverse=True)
            print("  slowest checks (warm): " + ", ".join(f"{n} {ms:.0f} ms" for ms, n in tests[:8]))
            print(f"  all checks together: {sum(ms for ms, _ in tests) / 1e3:.2f} s")
        except (OSError, ValueError, KeyError) as e:
            print(f"  no per-check times: {e}")


if __name__ == "__main__":
    main()
