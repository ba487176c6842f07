#!/usr/bin/env python3
"""A realistic class for timing `grader batch` (issue 25): full repositories
whose kernels come from the variants corpus, written independently in many
styles, instead of the generated class's copies of the reference.

    realistic_class.py make DIR [--students 40] [--seed 1]
                                  DIR/<student>/exercises/<folder>/kernels/*.cu for
                                  every part, and DIR/.realistic.json (who got what,
                                  and the verdict each changed part should get on a GPU)
    realistic_class.py check DIR GRADES_DIR
                                  compares a batch's verdicts with .realistic.json;
                                  exits 1 on a mismatch

The make-up (seeded, so the same arguments give the same class):
- every part of every student is the reference or one of the corpus's correct
  variants of that part (about half each), so most parts are correct and few
  students share a kernel;
- a third of the students have one or two parts from the corpus's buggy cases
  (races, out-of-bounds accesses, wrong results, too slow, wrong structure);
- three students left one part unfinished (the stub);
- two students have a kernel that never ends (it spins on clock64(), which
  ptxas cannot delete).
"""

import json
import random
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402

ENDLESS = "for (;;) { if (clock64() == -1) return; }"
UNFINISHED = 3
ENDLESS_STUDENTS = 2


def part_files(cases):
    """`ex01/global` -> [(exercise folder, file name)], from the single-part cases' files."""
    files = {}
    for name, case in cases.items():
        if len(case["parts"]) != 1 or case.get("generated"):
            continue
        (key,) = case["parts"]
        for f in sources_of(name, case):
            files.setdefault(key, set()).add((f.parts[-3], f.name))
    return {k: sorted(v) for k, v in files.items()}


def sources_of(name, case):
    """The files a case varies, as paths ending in <folder>/kernels/<file>.cu."""
    if case.get("slow_files") or case.get("files"):
        return [Path("exercises") / rel for rel in corpus.pointed_files(case)]
    root = corpus.corpus_dir("variants") / name
    edits = [Path(str(f)[: -len(corpus.EDIT_SUFFIX)]) for f in root.rglob("*.cu" + corpus.EDIT_SUFFIX)]
    return sorted(f.relative_to(root) for f in [*root.rglob("*.cu"), *edits])


def copy_case(name, case, student: Path):
    """The case's kernels (whole, or as the edit makes them) into the student's tree."""
    staged = student.parent / f".{student.name}.case"
    corpus.write_case(corpus.corpus_dir("variants"), name, case, staged)
    shutil.copytree(staged, student, dirs_exist_ok=True)
    shutil.rmtree(staged)


def at_kernel_start(text: str, line: str) -> str:
    """`line` as the first statement of the first __global__ function (as make-class does)."""
    at = text.index("__global__")
    brace = text.index("{", at)
    return text[: brace + 1] + "\n    " + line + "\n" + text[brace + 1:]


def make(target: Path, students: int, seed: int):
    if target.exists():
        sys.exit(f"{target} exists: make the class in a new folder")
    cases = corpus.load_table(corpus.corpus_dir("variants"))["cases"]
    files = part_files(cases)
    usable = {
        name: case for name, case in cases.items()
        if len(case["parts"]) == 1 and not case.get("generated")
        and not any(w.get("needs") for w in case["parts"].values())
    }
    correct, buggy = {}, {}
    for name, case in usable.items():
        (key, want), = case["parts"].items()
        (correct if want["gpu"] == "pass" else buggy).setdefault(key, []).append(name)
    rng = random.Random(seed)
    order = list(range(students))
    rng.shuffle(order)
    unfinished = set(order[:UNFINISHED])
    endless = set(order[UNFINISHED:UNFINISHED + ENDLESS_STUDENTS])
    with_bugs = set(order[UNFINISHED + ENDLESS_STUDENTS:UNFINISHED + ENDLESS_STUDENTS + students // 3])
    made = []
    for i in range(students):
        key = f"student{i + 1:03}"
        student = target / key
        for folder in (corpus.REPO / "reference").glob("ex*"):
            shutil.copytree(folder / "kernels", student / "exercises" / folder.name / "kernels")
        changes = []
        for part in sorted(files):
            if correct.get(part) and rng.random() < 0.5:
                name = rng.choice(correct[part])
                copy_case(name, usable[name], student)
                changes.append({"part": part, "source": name, "expect": "pass"})
        if i in with_bugs:
            for part in rng.sample(sorted(buggy), rng.choice([1, 2])):
                name = rng.choice(buggy[part])
                copy_case(name, usable[name], student)
                changes = [c for c in changes if c["part"] != part]
                changes.append({"part": part, "source": name, "expect": usable[name]["parts"][part]["gpu"]})
        for label, chosen, edit in (("stub", unfinished, None), ("endless", endless, ENDLESS)):
            if i not in chosen:
                continue
            part = rng.choice(sorted(files))
            folder, file = files[part][0]
            path = student / "exercises" / folder / "kernels" / file
            if edit is None:
                shutil.copy(corpus.REPO / "exercises" / folder / "kernels" / file, path)
            else:
                path.write_text(at_kernel_start((corpus.REPO / "reference" / folder / "kernels" / file).read_text(), edit))
            changes = [c for c in changes if c["part"] != part]
            changes.append({"part": part, "source": label, "expect": "timeout" if edit else "fail"})
        made.append({"key": key, "changes": sorted(changes, key=lambda c: c["part"])})
    (target / ".realistic.json").write_text(json.dumps({"seed": seed, "students": made}, indent=1))
    parts = sum(len(files) for _ in made)
    changed = sum(len(s["changes"]) for s in made)
    bugs = sum(c["expect"] not in ("pass",) for s in made for c in s["changes"])
    print(f"{students} students in {target}: {parts} parts, {changed} not the reference "
          f"({changed - bugs} correct variants, {bugs} buggy, unfinished or endless)")
    return 0


def check(target: Path, grades: Path):
    made = json.loads((target / ".realistic.json").read_text())["students"]
    problems = []
    for s in made:
        path = grades / "submissions" / f"{s['key']}.json"
        if not path.is_file():
            problems.append(f"{s['key']}: no grades")
            continue
        report = json.loads(path.read_text())["grades"]
        got = {f"{e['id']}/{p['name']}": corpus.part_verdict(p)[0] for e in report["exercises"] for p in e["parts"]}
        want = {c["part"]: c for c in s["changes"]}
        for part, verdict in got.items():
            expect = want.get(part, {"expect": "pass", "source": "reference"})
            ok = verdict != "pass" if expect["expect"] == "fail" else verdict == expect["expect"]
            if not ok:
                problems.append(f"{s['key']} {part} ({expect['source']}): `{verdict}`, expected `{expect['expect']}`")
    for p in problems:
        print(f"MISMATCH {p}")
    n = sum(1 for s in made for _ in s["changes"])
    print(f"{len(made)} students, {n} changed parts: " +
          (f"{len(problems)} mismatch(es)" if problems else "every verdict as expected"))
    return 1 if problems else 0


def main(argv):
    opt = lambda flag, default: int(argv[argv.index(flag) + 1]) if flag in argv else default
    if len(argv) >= 2 and argv[0] == "make":
        return make(Path(argv[1]), opt("--students", 40), opt("--seed", 1))
    if len(argv) >= 3 and argv[0] == "check":
        return check(Path(argv[1]), Path(argv[2]))
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
