#!/usr/bin/env python3
"""One runner for the graded corpora (grader/tests/hostile, grader/tests/variants)
on a GPU: prepare a corpus for `grader batch`, compare the batch's verdicts with
its expected.json, and tabulate the timed checks' figures.

    corpus.py groups CORPUS                 the exercise sets to batch separately, one a line
    corpus.py prepare CORPUS CLASS_DIR      one folder per exercise set, one submission per case
    corpus.py case CORPUS CASE DIR          one case's own files into DIR (its kernels whole,
                                            edits applied, pointed files copied)
    corpus.py kernel FILE                   a case file as a submission gets it: FILE, or the
                                            kernel FILE.diff makes (kit::case_file)
    corpus.py check CORPUS GRADES_DIR [--backend gpu|sim|none]
                                            GRADES_DIR/<set>/ holds each set's batch output;
                                            prints every part's verdict, exits 1 on a mismatch
    corpus.py table CORPUS SIM_LOG RUN...
                                            a markdown table of expected against got per
                                            case: `sim` from the output of the corpus's cargo
                                            test (--nocapture), `gpu` from the runs, one per seed
                                            (a run's folder, or the check.txt `check` wrote for it)
    corpus.py perf CORPUS RUN_DIR...        every timed check's figures from the runs (one
                                            RUN_DIR per seed, each as `check` reads it), as a
                                            table per family and RUN_DIR/../perf.json

CORPUS is a folder name under grader/tests (`hostile`, `variants`) or a path.
The rules are those of grader/tests/corpus/mod.rs, which checks `none` and `sim`
without a GPU: a part's verdict is that of its first failing test, or `pass`; a
part whose expected verdict `needs` unmerged work is reported as pending, not
as a mismatch.
"""

import json
import re
import shutil
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
# No message in a result may be longer (compile logs and printf are capped upstream).
MAX_MESSAGE_BYTES = 64 * 1024
# `grader batch` keeps 256 KiB of each of a child's stdout and stderr.
MAX_LOG_BYTES = 2 * 256 * 1024 + 4096
# What a leaked /etc/passwd, grader source or key would show.
LEAK_MARKERS = ["root:x:0", "fn real_main", "PRIVATE KEY"]
HUGE_SOURCE_BYTES = 10 * 1024 * 1024


def corpus_dir(name: str) -> Path:
    path = Path(name)
    return path if path.is_dir() else HERE.parent / name


def load_table(corpus: Path):
    return json.loads((corpus / "expected.json").read_text())


def exercises_of(case):
    return sorted({key.split("/")[0] for key in case["parts"]})


def group_of(case) -> str:
    """Cases are batched by the exercises they touch: grading only those keeps a
    batch of one-exercise cases from grading all eight exercises per case."""
    return ",".join(exercises_of(case))


def generate_huge_source(case_dir: Path):
    """A 10 MB pi_global.cu: the reference kernel after 10 MB of comment lines."""
    kernels = case_dir / "exercises/ex01-pi/kernels"
    kernels.mkdir(parents=True, exist_ok=True)
    line = "// " + "padding " * 12 + "\n"
    kernel = (REPO / "reference/ex01-pi/kernels/pi_global.cu").read_text()
    with open(kernels / "pi_global.cu", "w") as f:
        f.write(line * (HUGE_SOURCE_BYTES // len(line) + 1))
        f.write(kernel)


def fill_from_reference(case_dir: Path, case):
    """A case keeps only its varied files; every other kernel file of its
    exercises comes from reference/ (mod.rs does the same)."""
    for exercise in exercises_of(case):
        (folder,) = (REPO / "reference").glob(f"{exercise}-*")
        for source in (folder / "kernels").glob("*.cu"):
            target = case_dir / "exercises" / folder.name / "kernels" / source.name
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, target)


def groups(corpus: Path):
    for g in sorted({group_of(c) for c in load_table(corpus)["cases"].values()}):
        print(g)


def pointed_files(case):
    """Path below exercises/ -> the file, for a case that points at kernels kept
    elsewhere (grader::calibrate::families::pointed_files is the same rule): a
    kernel kept as an edit (FILE.cu.diff) where FILE.cu is not there."""
    files = {rel: REPO / "reference" / "slow" / source for rel, source in case.get("slow_files", {}).items()}
    files.update({rel: REPO / source for rel, source in case.get("files", {}).items()})
    return {rel: f if f.exists() else Path(str(f) + EDIT_SUFFIX) for rel, f in files.items()}


#: A case's kernel kept as an edit of another: FILE.cu.diff (scripts/case-as-edit.py).
EDIT_SUFFIX = ".diff"
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def apply_edit(root: Path, diff: str) -> str:
    """The kernel a case's unified diff makes of the file its `---` line names
    (from the repository's root). Strict: every hunk applies where it says, or
    this fails naming it (kit::case_file applies the same diffs in Rust)."""
    lines = diff.splitlines(True)
    if len(lines) < 3 or not lines[0].startswith("--- ") or not lines[1].startswith("+++ "):
        raise ValueError("an edit begins with `--- BASE` and `+++ CASE` lines")
    base_name = lines[0][4:].strip()
    base = (root / base_name).read_text().splitlines(True)
    out, at, i = [], 0, 2
    while i < len(lines):
        m = HUNK.match(lines[i])
        if not m:
            raise ValueError(f"line {i + 1}: a hunk header (@@ -a,b +c,d @@) expected")
        start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
        out += base[at:start]
        at, i = start, i + 1
        while i < len(lines) and not lines[i].startswith("@@"):
            tag, text = lines[i][:1], lines[i][1:]
            if tag in " -":
                if at >= len(base) or base[at] != text:
                    raise ValueError(f"{base_name} line {at + 1} is not what the edit's line {i + 1} expects")
                at += 1
            if tag in " +":
                out.append(text)
            if tag not in " +-":
                raise ValueError(f"line {i + 1}: {lines[i]!r} is not a context, removed or added line")
            i += 1
    return "".join(out + base[at:])


def write_edits(root: Path, folder: Path):
    """Every FILE.cu.diff under `folder` becomes FILE.cu."""
    for edit in sorted(folder.rglob("*.cu" + EDIT_SUFFIX)):
        Path(str(edit)[: -len(EDIT_SUFFIX)]).write_text(apply_edit(root, edit.read_text()))
        edit.unlink()


def write_case(corpus: Path, name: str, case, target: Path):
    """A case's own files into `target` (mod.rs's materialize does the same):
    the case's folder (its kernels, each whole or as an edit of another, or
    only a course's cuda-lab.toml), then the kernels it points at: `slow_files`
    below reference/slow/, `files` below the repository's root."""
    if case.get("generated"):
        generate_huge_source(target)
        return
    if (corpus / name).is_dir():
        shutil.copytree(corpus / name, target)
        write_edits(REPO, target)
    for rel, source in pointed_files(case).items():
        (target / "exercises" / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / "exercises" / rel).write_text(kernel_text(source))


def kernel_text(path: Path) -> str:
    """A case file as the submission gets it: itself, or the kernel its edit makes."""
    text = path.read_text()
    return apply_edit(REPO, text) if str(path).endswith(EDIT_SUFFIX) else text


def prepare(corpus: Path, class_dir: Path):
    if class_dir.exists():
        sys.exit(f"{class_dir} exists: prepare into a new folder")
    cases = load_table(corpus)["cases"]
    for name, case in cases.items():
        target = class_dir / group_of(case) / name
        write_case(corpus, name, case, target)
        fill_from_reference(target, case)
    print(f"{len(cases)} submissions in {class_dir}")


def part_verdict(part):
    failed = [t for t in part["tests"] if t["status"] == "fail"]
    return (failed[0]["verdict"], failed[0]["name"], failed[0].get("message") or "") if failed else ("pass", "", "")


def part_reports(grades: Path, case: str):
    """The student's merged grades, or, when the batch never got to merging
    them, the one-part results its children wrote as they finished."""
    merged = grades / "submissions" / f"{case}.json"
    if merged.is_file():
        return [json.loads(merged.read_text())["grades"]]
    return [json.loads(f.read_text()) for f in sorted((grades / "results" / case).glob("*-*.json"))
            if not f.name.endswith(".child.json")]


def graded_parts(grades: Path, name: str, case):
    reports = part_reports(grades / group_of(case), name)
    return reports, {f"{e['id']}/{p['name']}": p for r in reports for e in r["exercises"] for p in e["parts"]}


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def judge(want, backend, verdict, test_name, message, part, zero_on_fail):
    """What is wrong with one part's result (empty: as expected)."""
    why = []
    if verdict != want[backend]:
        why.append(f"verdict `{verdict}`, expected `{want[backend]}`")
    elif verdict != "pass" and want.get("check") and want["check"] not in test_name:
        why.append(f"first failing test `{test_name}`, expected one named like `{want['check']}`")
    if verdict != "pass":
        why += [f"message lacks {s!r}" for s in want.get("says", []) if s not in message]
    if backend == "gpu" and not why:
        # A passing part has every point; a failing one loses some (all of them
        # where the corpus says failing parts score 0), or exactly `gpu_score`.
        full = part["max_score"]
        if "gpu_score" in want or want["gpu"] == "pass" or zero_on_fail:
            score = want.get("gpu_score", full if want["gpu"] == "pass" else 0.0)
            if abs(part["score"] - score) > 1e-6:
                why.append(f"score {part['score']}, expected {score}")
        elif part["score"] >= full - 1e-6:
            why.append(f"score {part['score']}: full marks for a failing part")
    return why


# Verdicts only a timing gives: where this GPU's calibration does not grade a
# part's timed check by the clock (its stand-in does), the trick games nothing.
TIMING_VERDICTS = {"wrong-when-timed", "replays-results", "too-slow"}


def not_timed_here(part):
    return any("::perf::" in t["name"] and (t.get("graded_by") == "stand-in" or t["status"] == "not_graded_here")
               for t in part["tests"])


def check(corpus: Path, grades: Path, backend: str):
    problems, pending, stale, untimed = [], [], [], []
    table = load_table(corpus)
    zero_on_fail = table.get("failing_parts_score_zero", False)
    for name, case in table["cases"].items():
        parts = {k: v for k, v in case["parts"].items() if v.get(backend) is not None}
        if not parts:
            continue
        reports, got = graded_parts(grades, name, case)
        if not reports:
            problems.append(f"{name}: no result in {grades}")
            continue
        for key, want in parts.items():
            part = got.get(key)
            if part is None:
                problems.append(f"{name} {key}: not graded")
                continue
            verdict, test_name, message = part_verdict(part)
            if backend == "gpu" and want["gpu"] in TIMING_VERDICTS and verdict == "pass" and not_timed_here(part):
                untimed.append(f"{name} {key}: expected `{want['gpu']}`; this GPU's calibration does not time the check")
                print(f"NT   {name:<40} {key:<18} {verdict:<20} (not graded by the clock on this GPU)")
                continue
            why = judge(want, backend, verdict, test_name, message, part, zero_on_fail)
            needs = (want.get("needs") or {}).get(backend)
            if why and needs:
                mark = "PEND"
                pending += [f"{name} {key}: {w} (needs {needs})" for w in why]
            elif why:
                mark = "BAD "
                problems += [f"{name} {key}: {w}" for w in why]
            else:
                mark = "ok  "
                if needs:
                    stale.append(f"{name} {key}: expected `{want[backend]}` and got it; remove `needs: {needs}`")
            print(f"{mark} {name:<40} {key:<18} {verdict:<20} {part['score']:>5.2f}/{part['max_score']:<5.2f} "
                  f"{test_name}")
            if why and message:
                print(f"      {message.splitlines()[0][:200]}")
        longest = max((len(s.encode()) for s in strings(reports)), default=0)
        if longest > MAX_MESSAGE_BYTES:
            problems.append(f"{name}: a string of {longest} bytes in its result")
    for f in grades.rglob("*"):
        if not f.is_file() or f.suffix not in (".json", ".log", ".csv"):
            continue
        if f.suffix == ".log" and f.stat().st_size > MAX_LOG_BYTES:
            problems.append(f"{f}: {f.stat().st_size} bytes of log")
        text = f.read_text(errors="replace")
        problems += [f"{f}: contains {m!r}" for m in LEAK_MARKERS if m in text]
    print()
    for u in untimed:
        print(f"NOT TIMED HERE {u}")
    for p in pending:
        print(f"PENDING {p}")
    for s in stale:
        print(f"MET {s}")
    for p in problems:
        print(f"MISMATCH {p}")
    print(f"{len(problems)} mismatch(es), {len(pending)} pending, {len(untimed)} not timed here" if problems
          else f"every verdict as expected ({len(pending)} pending on unmerged work, {len(untimed)} not timed here)")
    return 1 if problems else 0


def perf_rows(corpus: Path, run: Path):
    """(family, source, role, value, threshold, student_ms, baseline_ms) for every timed
    test in one run; `source` is the case, or `reference` for the parts a case left alone."""
    for name, case in load_table(corpus)["cases"].items():
        reports, got = graded_parts(run, name, case)
        for key, part in got.items():
            own = key in case["parts"]
            for test in part["tests"]:
                figures = test.get("perf")
                if not figures:
                    continue
                check_name = test["name"].split(f"{part['name']}::", 1)[-1]
                family = f"{key}/{check_name}"
                if own:
                    if family not in case.get("calibrates", []):
                        role = "other"
                    else:
                        role = case["role"]
                    source = name
                else:
                    role, source = "correct", "reference"
                yield family, source, role, figures


def perf(corpus: Path, runs):
    table = {}
    for run in runs:
        for family, source, role, fig in perf_rows(corpus, run):
            entry = table.setdefault(family, {}).setdefault(source, {"role": role, "values": []})
            entry["values"].append(fig["value"])
            entry["threshold"] = fig["threshold"]
            entry.setdefault("student_ms", []).append(fig.get("student"))
            entry.setdefault("baseline_ms", []).append(fig.get("baseline"))
    out = {}
    for family in sorted(table):
        rows = table[family]
        print(f"\n## {family}")
        print("| source | role | runs | min | median | max | threshold |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for source, e in sorted(rows.items(), key=lambda kv: (kv[1]["role"], -min(kv[1]["values"]))):
            vals = e["values"]
            print(f"| {source} | {e['role']} | {len(vals)} | {min(vals):.3f} | {statistics.median(vals):.3f} "
                  f"| {max(vals):.3f} | {e['threshold']} |")
        correct = [min(e["values"]) for e in rows.values() if e["role"] == "correct"]
        # `technique` variants do without the technique and are caught by a
        # structure check; only `slow` ones (the technique spelled, not done) bound the threshold.
        slow = [max(e["values"]) for e in rows.values() if e["role"] == "slow"]
        summary = {"slowest_correct": min(correct) if correct else None,
                   "fastest_slow": max(slow) if slow else None, "sources": rows}
        if correct and slow:
            summary["gap"] = min(correct) / max(slow) - 1 if max(slow) > 0 else None
            print(f"slowest correct {min(correct):.3f}, fastest slow {max(slow):.3f}, "
                  f"gap {summary['gap'] * 100:.1f} %" if summary["gap"] is not None else "")
        out[family] = summary
    target = Path(runs[0]).parent / "perf.json"
    try:
        target.write_text(json.dumps(out, indent=1))
        print(f"\nwritten to {target}")
    except OSError as e:
        print(f"\n(perf.json not written: {e})")
    return 0


def sim_verdicts(log: Path):
    """`case/part` -> verdict, from the lines mod.rs prints (`ok|BAD|PEND case part verdict test`)."""
    got = {}
    for line in log.read_text(errors="replace").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[0] in ("ok", "BAD", "PEND"):
            got[f"{fields[1]}/{fields[2]}"] = fields[3]
    return got


def table(corpus: Path, sim_log: Path, runs):
    sim = sim_verdicts(sim_log)
    cases = load_table(corpus)["cases"]
    print("| case | part | expected (sim / GPU) | sim | GPU, seeds " + ", ".join(r.name.split("-")[-1] for r in runs)
          + " | agree | waits for |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    totals = {"sim": 0, "gpu": 0, "agree": 0, "parts": 0}
    for name, case in cases.items():
        for key, want in case["parts"].items():
            got_sim = sim.get(f"{name}/{key}", "–")
            got_gpu = []
            for run in runs:
                if run.is_file():
                    # A run's check.txt (what `check` printed) stands for the run.
                    got_gpu.append(sim_verdicts(run).get(f"{name}/{key}", "–"))
                    continue
                _, parts = graded_parts(run, name, case)
                got_gpu.append(part_verdict(parts[key])[0] if key in parts else "–")
            gpu_cell = got_gpu[0] if len(set(got_gpu)) == 1 else " / ".join(got_gpu)
            ran = any(g != "–" for g in got_gpu)
            ok_sim = got_sim == want["sim"]
            ok_gpu = all(g == want["gpu"] for g in got_gpu) or not ran
            agree = len(set(got_gpu + [got_sim])) == 1
            totals["parts"] += 1
            totals["sim"] += ok_sim
            totals["gpu_parts"] = totals.get("gpu_parts", 0) + ran
            totals["gpu"] += ok_gpu and ran
            totals["agree"] += agree
            expected = want["sim"] if want["sim"] == want["gpu"] else f"{want['sim']} / {want['gpu']}"
            mark = lambda ok, text: text if ok else f"**{text}**"
            needs = ", ".join(f"{b}: {n}" for b, n in (want.get("needs") or {}).items())
            print(f"| `{name}` | {key} | {expected} | {mark(ok_sim, got_sim)} "
                  f"| {mark(ok_gpu, gpu_cell) if ran else 'not run'} "
                  f"| {('yes' if agree else 'no') if ran else '–'} | {needs} |")
    n = totals["parts"]
    print(f"\n{n} parts: the simulator gives {totals['sim']} of the expected verdicts; the GPU ran "
          f"{totals.get('gpu_parts', 0)} and gives {totals['gpu']} of them on every seed; the two agree on "
          f"{totals['agree']}. Bold: not the expected verdict.")
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "groups":
        return groups(corpus_dir(argv[1]))
    if len(argv) >= 3 and argv[0] == "prepare":
        return prepare(corpus_dir(argv[1]), Path(argv[2]))
    if len(argv) >= 4 and argv[0] == "case":
        corpus = corpus_dir(argv[1])
        return write_case(corpus, argv[2], load_table(corpus)["cases"][argv[2]], Path(argv[3]))
    if len(argv) >= 2 and argv[0] == "kernel":
        path = Path(argv[1])
        return sys.stdout.write(kernel_text(path if path.exists() else Path(argv[1] + EDIT_SUFFIX))) and None
    if len(argv) >= 3 and argv[0] == "check":
        backend = argv[argv.index("--backend") + 1] if "--backend" in argv else "gpu"
        return check(corpus_dir(argv[1]), Path(argv[2]), backend)
    if len(argv) >= 4 and argv[0] == "table":
        return table(corpus_dir(argv[1]), Path(argv[2]), [Path(a) for a in argv[3:]])
    if len(argv) >= 3 and argv[0] == "perf":
        return perf(corpus_dir(argv[1]), [Path(a) for a in argv[2:]])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
