#!/usr/bin/env bash
# A TA's term, tried by hand (issue 47), as a script: no GPU needed.
#
# A class of four graded on ex01 and ex10 with `grader batch` on the simulator:
#   ana  every reference;            ben  the stubs, unchanged;
#   cy   ex10 `private` without the __syncthreads() before its merge, and an
#        off-by-one bound in ex01 `global`; the rest the reference;
#   dee  one of each: ex01's references, ex10's stubs, as a flat upload.
# A roster with dee missing from it and eve on it, who handed in nothing;
# Canvas, Moodle and Gradescope files; the class report. Then it checks every
# "Done when" bullet of the issue, one line each, and exits 1 if any failed.
#
#   GRADER   the grader binary (default: ./.device/grader, else target/debug/grader)
#   OUT      results go to $OUT/ta-trial/ (default: target)
#   ROOT     the course (default: this checkout)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${ROOT:-$here}
grader=${GRADER:-}
if [[ -z $grader ]]; then
    if [[ -x $here/.device/grader ]]; then grader=$here/.device/grader; else grader=$here/target/debug/grader; fi
fi
grader=$(cd "$(dirname "$grader")" && pwd)/$(basename "$grader")
out=$(mkdir -p "${OUT:-$here/target}/ta-trial" && cd "${OUT:-$here/target}/ta-trial" && pwd)
rm -rf "$out"/{class,grades,grades-fail,copy,solo,*.csv,*.json,*.txt}
start=$(date +%s)
class=$out/class
cd "$ROOT"

put() { # student, file (repository path), source file (a corpus case's kernel may be kept as an edit)
    mkdir -p "$class/$1/$(dirname "$2")"
    python3 grader/tests/corpus/corpus.py kernel "$3" > "$class/$1/$2"
}
ex01=(exercises/ex01-pi/kernels/pi_global.cu exercises/ex01-pi/kernels/pi_shared.cu)
ex10=(exercises/ex10-histogram/kernels/histogram_global.cu exercises/ex10-histogram/kernels/histogram_private.cu
      exercises/ex10-histogram/kernels/histogram_coarse.cu)
for f in "${ex01[@]}" "${ex10[@]}"; do
    put ana "$f" "reference/${f#exercises/}"
    put ben "$f" "$f"
    put cy "$f" "reference/${f#exercises/}"
done
put cy exercises/ex01-pi/kernels/pi_global.cu grader/tests/variants/ex01-global-off-by-one/exercises/ex01-pi/kernels/pi_global.cu
put cy exercises/ex10-histogram/kernels/histogram_private.cu \
    grader/tests/variants/ex10-private-no-sync-before-merge/exercises/ex10-histogram/kernels/histogram_private.cu
mkdir -p "$class/dee"
for f in "${ex01[@]}"; do cp "reference/${f#exercises/}" "$class/dee/"; done
for f in "${ex10[@]}"; do cp "$f" "$class/dee/"; done

cat > "$out/roster.csv" <<'CSV'
folder,Student,SIS Login ID,Email address
ana,Ana Lima,ana,ana@uni.edu
ben,Ben Ode,ben,ben@uni.edu
cy,Cy Park,cy,cy@uni.edu
eve,Eve Sato,eve,eve@uni.edu
CSV

run() { echo "+ $*" >&2; "$@"; }
common=(--exercises ex01,ex10 --seed 1 --backend sim --timeout 10 --part-timeout 600)
run "$grader" batch "$class" --out "$out/grades" "${common[@]}" \
    --lms-csv "$out/canvas.csv" --lms canvas --roster "$out/roster.csv" | tee "$out/batch-1.txt"
run "$grader" class-report "$out/grades" --lms-csv "$out/moodle.csv" --lms moodle --roster "$out/roster.csv" \
    | tee "$out/moodle.txt"
run "$grader" report "$out/grades/submissions/ana.json" --format gradescope --results "$out/gradescope-ana.json"
run "$grader" report "$out/grades/submissions/ben.json" --format summary > "$out/summary-ben.txt"
run "$grader" report "$out/grades/submissions/ben.json" --format gradescope --results "$out/gradescope-ben.json"

# The staged submission graded again, as the TA guide says (outputs must not land in the staging folder).
run "$grader" ex01 ex10 --root "$out/grades/staging/ana" --seed 1 --backend sim --json "$out/staged-ana.json" \
    --no-report > "$out/staged-ana.txt" 2>&1 || true

# `fail` on the reference alone.
mkdir -p "$out/solo"
cp -R "$class/ana" "$out/solo/ana"
run "$grader" batch "$out/solo" --out "$out/grades-fail" "${common[@]}" --perf-without-gpu fail > "$out/batch-fail.txt"

# The reference graded as a student, in a copy of the course: its report's reference figures.
mkdir -p "$out/copy"
cp -R exercises reference calibration cuda-lab.toml "$out/copy/"
for f in "${ex01[@]}" "${ex10[@]}"; do cp "reference/${f#exercises/}" "$out/copy/$f"; done
run "$grader" ex01 ex10 --root "$out/copy" --seed 5 --backend sim --json "$out/copy-reference.json" \
    > "$out/copy-run.txt" 2>&1 || true

# A late fix: ben copies the reference into ex01, and the TA runs the same batch again.
for f in "${ex01[@]}"; do cp "reference/${f#exercises/}" "$class/ben/$f"; done
run "$grader" batch "$class" --out "$out/grades" "${common[@]}" | tee "$out/batch-2.txt"
"$grader" --help > "$out/help.txt"
# The class report as a TA first sees it (headless Chromium, when installed).
for c in chromium chromium-browser google-chrome; do
    if command -v "$c" > /dev/null; then
        profile=$(mktemp -d)
        "$c" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --window-size=1200,1000 \
            --user-data-dir="$profile" --screenshot="$out/class-report.png" "file://$out/grades/class-report.html" \
            > /dev/null 2>&1 || echo "chromium failed: no screenshot" >&2
        rm -rf "$profile"
        break
    fi
done
end=$(date +%s)

python3 - "$out" "$((end - start))" <<'PY'
import csv, glob, json, os, re, sys
out, took = sys.argv[1], sys.argv[2]
failed = []
def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok: failed.append(what)
def load(p): return json.load(open(os.path.join(out, p)))
def text(p): return open(os.path.join(out, p)).read()

book = load("grades/gradebook.json")
rows = {r["key"]: r for r in book["students"]}
cols = {e["id"]: e["max_score"] for e in book["exercises"]}
total_max = round(sum(cols.values()), 2)
html = text("grades/class-report.html")
def score_row(ex):
    m = re.search(r'<tr data-exercise="%s">(.*?)</tr>' % ex, html)
    return re.findall(r"<td>(.*?)</td>", m.group(1)) if m else []

# 1. One maximum: full marks counted right in every table.
try:
    ana = rows["ana"]
    check(all(abs(ana["scores"][e] - cols[e]) < 0.005 for e in cols), f"the reference has full marks per gradebook column {cols}: {ana['scores']}")
    check(abs(ana["total"] - total_max) < 0.005 and abs(ana["max_score"] - total_max) < 0.005, f"the reference's total {ana['total']} of {ana['max_score']} is the gradebook's {total_max}")
    for ex in list(cols) + ["total"]:
        cells = score_row(ex)
        want = cols.get(ex, total_max)
        # cells: exercise, max, mean, median, full marks, zero
        check(len(cells) >= 6 and float(cells[1]) == round(want, 2) and int(cells[4]) >= 1, f"class report {ex}: max {cells[1:2]} = {want:.2f}, full marks {cells[4:5]} >= 1")
    raw = text("grades/gradebook.json")
    check(not re.search(r"\d\.\d{3,}", raw), "gradebook.json numbers are rounded to hundredths")
    with open(os.path.join(out, "canvas.csv")) as f:
        canvas = list(csv.reader(f))
    possible = canvas[1]
    check([float(x) for x in possible[5:5 + len(cols)]] == [round(cols[e], 2) for e in cols], f"Canvas's Points Possible {possible[5:]} are the gradebook's columns")
except Exception as e:  # a missing file or field is a failed check, not a stop
    check(False, '1. One maximum: full marks counted right in every table.' + f': {e!r}')

# 2. Like with like: the reference at its own figures, in the class report and a student's report.
try:
    ref = load("grades/class-report/reference.json")
    check(ref["seed"] == book["seed"], f"the class report's reference was graded with the batch's seed ({ref['seed']} / {book['seed']})")
    def measured(report):
        got = {}
        for e in report["exercises"]:
            for p in e["parts"]:
                for t in (t for t in p["tests"] if t["kind"] == "structure"):  # what the memory lessons draw
                    for m in t.get("measured", []):
                        got[(t["name"], m["kernel"])] = {k: v for k, v in m.items() if k != "warp_sample"}
        return got
    mine = measured(load("grades/submissions/ana.json")["grades"])
    theirs = measured(ref)
    check(mine and all(theirs.get(k) == v for k, v in mine.items()), f"every measured figure of the reference student equals the reference's ({len(mine)} kernels)")
    lessons = re.findall(r'<tr data-figure="[^"]*"><td>[^<]*</td><td>[^<]*</td><td>[^<]*</td><td>([^<]*)</td><td>(\d+) of (\d+)</td>', html)
    check(lessons and all(int(k) >= 1 for _, k, _ in lessons), f"every memory lesson counts the reference student at the reference's figure ({len(lessons)} rows)")
    def profiles(report):
        got = {}
        for e in report["exercises"]:
            for p in e["parts"]:
                for t in p["tests"]:
                    for m in t.get("profile", []):
                        got[(t["name"], m["kernel"])] = {k: v for k, v in m.items() if k != "warp_sample"}
        return got
    copy = load("copy-reference.json")
    cached = glob.glob(os.path.join(out, "copy/target/grades/reference-profiles/*seed-5-*.json"))
    check(bool(cached), "a student's run graded the reference with the student's seed (cached by seed and source)")
    if cached:
        a, b = profiles(copy), profiles(json.load(open(cached[0])))
        same = [k for k in a if b.get(k) == a[k]]
        check(a and len(same) == len(a), f"the reference graded as a student matches the reference on every figure ({len(same)} of {len(a)})")
except Exception as e:  # a missing file or field is a failed check, not a stop
    check(False, "2. Like with like: the reference at its own figures, in the class report and a student's report." + f': {e!r}')

# 3. `fail` costs the reference exactly its performance points.
try:
    fail = load("grades-fail/submissions/ana.json")["grades"]
    perf = sum(t["max_score"] for e in fail["exercises"] for p in e["parts"] for t in p["tests"] if t["kind"] == "performance")
    check(abs((fail["max_score"] - fail["score"]) - perf) < 0.01, f"under fail the reference loses {fail['max_score'] - fail['score']:.2f} = its performance points {perf:.2f}")
    structure_lost = [t["name"] for e in fail["exercises"] for p in e["parts"] for t in p["tests"] if t["kind"] == "structure" and t["score"] < t["max_score"]]
    check(not structure_lost, f"under fail no structure point is lost: {structure_lost}")
except Exception as e:  # a missing file or field is a failed check, not a stop
    check(False, '3. `fail` costs the reference exactly its performance points.' + f': {e!r}')

# 4. set_by and the header true; credit carried.
try:
    result = load("grades/results/ana/ex01-global.json")
    pol = result["environment"]["policy"]
    check(pol["set_by"].startswith("cuda-lab.toml [perf-without-gpu] "), f"set_by names the course file's key: {pol['set_by']!r}")
    check(result["environment"].get("credit") in ("threshold", "scaled"), f"the grades JSON carries the credit: {result['environment'].get('credit')}")
    check(book.get("credit") in ("threshold", "scaled"), f"gradebook.json carries the credit: {book.get('credit')}")
    run_text = text("staged-ana.txt")
    check("performance: graded by stand-ins here" in run_text and "skipped" not in run_text.split("performance:")[1].split("\n")[0], "the run's header says performance is graded by stand-ins, not skipped")
    check("credit `" in run_text, "the run's header says which credit applies")
    fail_result = load("grades-fail/results/ana/ex01-global.json")["environment"]["policy"]
    check(fail_result["set_by"] == "--perf-without-gpu", f"a flag given to the batch is named as the flag: {fail_result['set_by']!r}")
except Exception as e:  # a missing file or field is a failed check, not a stop
    check(False, '4. set_by and the header true; credit carried.' + f': {e!r}')

# 5. Nobody missing.
try:
    eve = rows.get("eve")
    check(eve is not None and eve["status"] == "no submission" and eve["total"] == 0, f"eve (on the roster, nothing handed in) is a 0 in gradebook.json: {eve and eve['status']}")
    check(any(r[3] == "eve" and r[-1] == "0.00" for r in canvas[2:]), "eve is a 0 in the Canvas CSV")
    moodle = list(csv.reader(open(os.path.join(out, "moodle.csv"))))
    check(any(r[0] == "eve@uni.edu" and r[-1] == "0.00" for r in moodle[1:]), "eve is a 0 in the Moodle CSV")
    check("no submission" in html and "eve" in html, "the class report names eve")
    check("eve" in text("batch-1.txt") and "no submission" in text("batch-1.txt"), "the batch's output names eve")
except Exception as e:  # a missing file or field is a failed check, not a stop
    check(False, '5. Nobody missing.' + f': {e!r}')

# 6. No stale grade.
try:
    second = text("batch-2.txt")
    check("regraded: 1 changed since the last run" in second, "the second run says: regraded: 1 changed since the last run")
    book2 = load("grades/gradebook.json")
    ben2 = {r["key"]: r for r in book2["students"]}["ben"]
    check(abs(ben2["scores"]["ex01"] - cols["ex01"]) < 0.005, f"ben's changed ex01 is graded again: {ben2['scores']['ex01']} of {cols['ex01']}")
except Exception as e:  # a missing file or field is a failed check, not a stop
    check(False, '6. No stale grade.' + f': {e!r}')

# 7. A staged submission is exactly what was graded.
try:
    staged = load("staged-ana.json")
    check(abs(staged["score"] - ana["total"]) < 0.005, f"the staged re-grade gives the batch's grade: {staged['score']} vs {ana['total']}")
    check(not os.path.exists(os.path.join(out, "grades/staging/ana/target")), "re-grading the staging folder wrote nothing into it")
    check(os.path.isfile(os.path.join(out, "grades/staging/ana/exercises/ex10-histogram/hints.toml")), "the staged submission carries its hints")
except Exception as e:  # a missing file or field is a failed check, not a stop
    check(False, '7. A staged submission is exactly what was graded.' + f': {e!r}')

# 8. The smaller items.
try:
    check("make-class" in text("help.txt"), "`grader --help` lists make-class")
    said = text("moodle.txt")
    check("   " not in said.replace("\n  ", "\n"), "the Moodle message has no runs of spaces")
    summary = text("summary-ben.txt")
    gs = load("gradescope-ben.json")
    m = re.search(r"(\d+) ignored", summary)
    check(m is not None, f"--format summary says how many were ignored")
    attention = re.search(r"What needs a TA&#39;s eye \((\d+) students?\)|What needs a TA's eye \((\d+) students?\)", html)
    n = attention and int(attention.group(1) or attention.group(2))
    check(n is not None and n >= 2, f"'What needs a TA's eye' counts the unchanged stubs (ben, dee) and eve: {n}")
    tables = html[html.find('data-section="wrong"'):html.find('data-section="memory"')]
    messages = re.findall(r'<pre class="msg">(.*?)</pre>', tables, re.S)
    todo = [m for m in messages if "TODO" in m]
    check(messages and not todo, f"no failure table is filled by the stubs' 'did the kernel run its TODO yet?' ({len(messages)} messages): {todo[:2]}")
    wrong = html[html.find('data-section="wrong"'):html.find('data-section="scores"')]
    check(0 <= html.find('data-section="wrong"') < html.find('data-section="scores"') and "data-wrong-first" in wrong, "what the class got wrong comes first on the page")
    check("race 1" not in html, "a race shows with its meaning, not a bare 'race 1'")
except Exception as e:  # a missing file or field is a failed check, not a stop
    check(False, '8. The smaller items.' + f': {e!r}')

print(f"\nta-trial: {len(failed)} failed, took {took} s; files in {out}")
sys.exit(1 if failed else 0)
PY
