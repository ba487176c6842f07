#!/usr/bin/env python3
"""Keeps a corpus case's kernel as an edit of the kernel it was written from.

    scripts/case-as-edit.py [--dry-run] FILE.cu ...

For each case file (grader/tests/<corpus>/<case>/exercises/<exercise>/<path>.cu)
it looks for the kernel the case changes: the reference of the same path,
the slow variant of that path, or a calibration kernel of the exercise. Where
the case keeps at least about half of one's lines, the case file
becomes FILE.cu.diff, a unified diff whose `---` line names that kernel from
the repository's root, and FILE.cu is removed: the corpus then holds what the
case gets wrong, and a fix to the kernel it was written from reaches it (a
diff that no longer applies fails the corpus's tests, naming the case).
kit::case_file (Rust) and corpus.py (on a GPU machine) apply such diffs.
"""
import difflib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Changed lines (added plus removed) over the case's lines, at most, for an
#: edit: a kernel that keeps at least about half of the other's lines.
MAX_CHANGED_SHARE = 1.0

sys.path.insert(0, str(ROOT / "grader/tests/corpus"))
from corpus import apply_edit  # noqa: E402  (the one applier the GPU machine has)


def candidates(case_file: Path):
    rel = case_file.relative_to(ROOT).parts
    exercise, below = rel[rel.index("exercises") + 1], Path(*rel[rel.index("exercises") + 2:])
    for base in [ROOT / "reference" / exercise / below, ROOT / "reference/slow" / exercise / below]:
        if base.is_file():
            yield base
    yield from sorted((ROOT / "exercises" / exercise / "calibration").glob("*.cu"))


def edit(case_file: Path, base: Path) -> str:
    old, new = base.read_text().splitlines(True), case_file.read_text().splitlines(True)
    header = [str(base.relative_to(ROOT)), str(case_file.relative_to(ROOT))]
    return "".join(difflib.unified_diff(old, new, fromfile=header[0], tofile=header[1]))


def changed(diff: str) -> int:
    lines = diff.splitlines()[2:]
    return sum(1 for l in lines if l[:1] in "+-")


#: Cases graded as a folder of their own by tests that take a --root or
#: --sources (grader/tests/sanitize.rs, cli.rs): kept whole.
KEPT_WHOLE = ["ex04-v2-returns-before-barrier", "ex01-shared-cg-reduce"]


def main(argv):
    dry = "--dry-run" in argv
    for name in [a for a in argv if a != "--dry-run"]:
        case_file = Path(name).resolve()
        try:
            text = case_file.read_text()
        except UnicodeDecodeError:
            print(f"kept   {name}: not UTF-8 text")
            continue
        if any(f"/{case}/" in str(case_file) for case in KEPT_WHOLE):
            print(f"kept   {name}: graded as a folder of its own by a test")
            continue
        if not text.endswith("\n"):
            print(f"kept   {name}: no newline at its end")
            continue
        best = min(((changed(d), d, b) for b in candidates(case_file) if b.read_text().endswith("\n")
                    for d in [edit(case_file, b)]), default=None, key=lambda t: t[0])
        if best is None or best[0] == 0 or best[0] > MAX_CHANGED_SHARE * len(text.splitlines()):
            why = "the same as " + str(best[2].relative_to(ROOT)) if best and best[0] == 0 else "its own kernel"
            print(f"kept   {name}: {why}")
            continue
        count, diff, base = best
        assert apply_edit(ROOT, diff) == text, name
        print(f"edit   {name}: {count} lines changed from {base.relative_to(ROOT)}")
        if not dry:
            Path(str(case_file) + ".diff").write_text(diff)
            case_file.unlink()


if __name__ == "__main__":
    main(sys.argv[1:])
