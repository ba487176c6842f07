#!/usr/bin/env python3
"""The hostile corpus on a GPU: prepare it for `grader batch`, then compare the
batch's verdicts with expected.json (docs/hostile.md).

    check.py prepare CLASS_DIR           copy the cases, generate the 10 MB one
    check.py check GRADES_DIR [--backend gpu|sim|none]
                                          read GRADES_DIR/gradebook.json and
                                          submissions/<case>.json; print every
                                          part's verdict; exit 1 on a mismatch

The rules are those of grader/tests/hostile.rs, which checks `none` and `sim`
without a GPU: a part's verdict is that of its first failing test, or `pass`.
"""

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
# No message in a result may be longer (compile logs and printf are capped upstream).
MAX_MESSAGE_BYTES = 64 * 1024
# `grader batch` keeps 256 KiB of each of a child's stdout and stderr.
MAX_LOG_BYTES = 2 * 256 * 1024 + 4096
# What a leaked /etc/passwd would show.
LEAK_MARKERS = ["root:x:0", "fn real_main", "PRIVATE KEY"]
HUGE_SOURCE_BYTES = 10 * 1024 * 1024


def load_table():
    return json.loads((HERE / "expected.json").read_text())


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
    """The corpus keeps only the broken files of a case; every other kernel
    file of its exercises comes from reference/ (hostile.rs does the same)."""
    for exercise in sorted({key.split("/")[0] for key in case["parts"]}):
        (folder,) = (REPO / "reference").glob(f"{exercise}-*")
        for source in (folder / "kernels").glob("*.cu"):
            target = case_dir / "exercises" / folder.name / "kernels" / source.name
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, target)


def prepare(class_dir: Path):
    if class_dir.exists():
        sys.exit(f"{class_dir} exists: prepare into a new folder")
    for name, case in load_table()["cases"].items():
        if case.get("generated"):
            generate_huge_source(class_dir / name)
        else:
            shutil.copytree(HERE / name, class_dir / name)
        fill_from_reference(class_dir / name, case)
    print(f"{len(load_table()['cases'])} submissions in {class_dir}")


def part_verdict(part):
    failed = [t for t in part["tests"] if t["status"] == "fail"]
    return (failed[0]["verdict"], failed[0].get("message") or "") if failed else ("pass", "")


def part_reports(grades: Path, case: str):
    """The student's merged grades, or, when the batch never got to merging
    them, the one-part results its children wrote as they finished."""
    merged = grades / "submissions" / f"{case}.json"
    if merged.is_file():
        return [json.loads(merged.read_text())["grades"]]
    return [json.loads(f.read_text()) for f in sorted((grades / "results" / case).glob("*-*.json"))
            if not f.name.endswith(".child.json")]


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def check(grades: Path, backend: str):
    problems = []
    book = grades / "gradebook.json"
    if not book.is_file():
        problems.append(f"{book} is missing: the batch did not complete")
    for name, case in load_table()["cases"].items():
        parts = {k: v for k, v in case["parts"].items() if v.get(backend) is not None}
        if not parts:
            continue
        reports = part_reports(grades, name)
        if not reports:
            problems.append(f"{name}: no result in {grades}")
            continue
        got = {f"{e['id']}/{p['name']}": p for r in reports for e in r["exercises"] for p in e["parts"]}
        for key, want in parts.items():
            part = got.get(key)
            if part is None:
                problems.append(f"{name} {key}: not graded")
                continue
            verdict, message = part_verdict(part)
            ok = verdict == want[backend]
            why = [] if ok else [f"verdict `{verdict}`, expected `{want[backend]}`"]
            if verdict != "pass":
                why += [f"message lacks {s!r}" for s in want.get("says", []) if s not in message]
            if backend == "gpu":
                score = want.get("gpu_score", part["max_score"] if want["gpu"] == "pass" else 0.0)
                if abs(part["score"] - score) > 1e-6:
                    why.append(f"score {part['score']}, expected {score}")
            mark = "ok " if not why else "BAD"
            print(f"{mark} {name:<26} {key:<12} {verdict:<26} {part['score']:>5.2f}/{part['max_score']:<5.2f}")
            problems += [f"{name} {key}: {w}" for w in why]
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
    for p in problems:
        print(f"MISMATCH {p}")
    print(f"{len(problems)} mismatch(es)" if problems else "every verdict as expected")
    return 1 if problems else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "prepare":
        return prepare(Path(argv[1]))
    if len(argv) >= 2 and argv[0] == "check":
        backend = argv[argv.index("--backend") + 1] if "--backend" in argv else "gpu"
        return check(Path(argv[1]), backend)
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
