#!/usr/bin/env bash
# The sanitizer pass on a real GPU: what it costs and what it catches.
#
#   GRADER=target/release/grader OUT=/tmp/out scripts/gpu-sanitize.sh
#
# 1. `grader all --reference --backend cuda`, with `--sanitize off` and `on`
#    alternately, for each seed in SEEDS (default "11 7 3"), after one warm-up
#    run that fills the PTX cache: wall times, and 160/160 with the pass on.
# 2. The planted flaws under grader/tests/planted on the GPU, six seeds, pass
#    off and on: the lucky race in ex01 `shared` (a shared counter cleared with
#    no barrier) and the missing second barrier in ex03 `tiled`.
# Writes $OUT/sanitize.tgz (logs, JSONs, summary.txt) and prints the summary.
set -uo pipefail
cd "$(dirname "$0")/.."
grader=$(realpath "${GRADER:-target/release/grader}")
out=${OUT:-$(mktemp -d /tmp/cuda-lab-sanitize.XXXXXX)}
res=$out/sanitize
mkdir -p "$res"
seeds=${SEEDS:-11 7 3}
nproc > "$res/nproc.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$res/gpu.txt" 2>&1

run() { # name, then the grader's arguments; appends "name rc seconds" to times.txt
    local name=$1 start end rc=0
    shift
    start=$(date +%s.%N)
    "$grader" "$@" --json "$res/$name.json" -- -q > "$res/$name.log" 2>&1 || rc=$?
    end=$(date +%s.%N)
    echo "$name $rc $(python3 -c "print(f'{$end - $start:.2f}')")" | tee -a "$res/times.txt"
}

run warmup all --reference --backend cuda --seed 1 --sanitize off
for seed in $seeds; do
    for mode in off on; do
        run "ref-$mode-$seed" all --reference --backend cuda --seed "$seed" --sanitize "$mode"
    done
done
for seed in 1 2 3 4 5 6; do
    for mode in off on; do
        run "ex01-race-$mode-$seed" ex01 --part shared --root grader/tests --sources planted --backend cuda --seed "$seed" --sanitize "$mode"
        run "ex03-barrier-$mode-$seed" ex03 --part tiled --root grader/tests --sources planted --backend cuda --seed "$seed" --sanitize "$mode"
    done
done

python3 - "$res" <<'PY' | tee "$res/summary.txt"
import json, statistics, sys, pathlib
res = pathlib.Path(sys.argv[1])
times = {l.split()[0]: (int(l.split()[1]), float(l.split()[2])) for l in open(res / "times.txt")}
def load(name):
    p = res / f"{name}.json"
    return json.load(open(p)) if p.exists() else None
def parts(r):
    return [p for e in r["exercises"] for p in e["parts"]]
print("cores:", (res / "nproc.txt").read_text().strip(), " gpu:", (res / "gpu.txt").read_text().strip())
for mode in ("off", "on"):
    walls = [t for n, (rc, t) in times.items() if n.startswith(f"ref-{mode}-")]
    print(f"all --reference --sanitize {mode}: median {statistics.median(walls):.2f} s over {walls}")
off = statistics.median([t for n, (_, t) in times.items() if n.startswith("ref-off-")])
on = statistics.median([t for n, (_, t) in times.items() if n.startswith("ref-on-")])
print(f"overhead of the sanitizer pass: {100 * (on / off - 1):+.1f} % (target: at most +30 %)")
for n in sorted(times):
    if not n.startswith("ref-on-"):
        continue
    r = load(n)
    s = [p.get("sanitizer") or {} for p in parts(r)]
    print(f"{n}: {r['score']:.2f} / {r['max_score']:.2f}, sanitizer {r['environment'].get('sanitizer')}, "
          f"{sum(x.get('cases', 0) for x in s)} cases replayed, {sum(x.get('cpu_ms', 0) for x in s) / 1e3:.1f} s CPU, "
          f"findings {sum(len(x.get('findings', [])) for x in s)}, disagreements {sum(len(x.get('disagreements', [])) for x in s)}, "
          f"not checked {sum(len(x.get('not_checked', [])) for x in s)}")
    for x in s:
        for kind in ("findings", "disagreements", "not_checked"):
            for f in x.get(kind, []):
                print(f"    {kind}: {f['test']}: {f['verdict']}: {f['message'].splitlines()[0][:200]}")
# The pass must not disturb the timings: each perf check's ratio, pass off vs on.
ratios = {}
for n in times:
    if n.startswith("ref-"):
        mode = n.split("-")[1]
        for p in parts(load(n)):
            for t in p["tests"]:
                if t.get("perf"):
                    ratios.setdefault(t["name"], {}).setdefault(mode, []).append(t["perf"]["value"])
changes = [(abs(statistics.median(v["on"]) / statistics.median(v["off"]) - 1), k)
           for k, v in ratios.items() if v.get("on") and v.get("off")]
worst = max(changes, default=(0.0, "no timed check"))
print(f"perf ratios, median with the pass on vs off: largest change {100 * worst[0]:.1f} % ({worst[1]})")
for case in ("ex01-race", "ex03-barrier"):
    for mode in ("off", "on"):
        rows = []
        for seed in range(1, 7):
            r = load(f"{case}-{mode}-{seed}")
            if r is None:
                rows.append("no-json")
                continue
            tests = [t for p in parts(r) for t in p["tests"] if t["kind"] == "correctness" and t["status"] != "ignored"]
            bad = [t for t in tests if t["status"] == "fail"]
            verdicts = sorted({f"{t['verdict']}{'/sanitizer' if t.get('found_by') else ''}" for t in bad})
            rows.append(f"{len(tests) - len(bad)}/{len(tests)} pass {','.join(verdicts) or '-'}")
        print(f"{case} --sanitize {mode}: " + " | ".join(rows))
PY
tar czf "$out/sanitize.tgz" -C "$out" sanitize
echo "results in $out/sanitize.tgz"
