//! The GPU's hardware counters for the structure checks' measured launches
//! (`kit::counters` has the model), read with Nsight Compute's command line.
//!
//! Why `ncu` and not CUPTI in-process: `ncu` is NVIDIA's supported way to
//! read these metrics on every driver and GPU generation it knows, names them
//! the same everywhere, replays a kernel for metrics that need several passes,
//! and says in plain words when a user may not read counters. CUPTI's range
//! profiler (which cudarc binds) would need the metric configuration images,
//! the replay and the counter-data decoding written here, per driver.
//!
//! How: before the checks run, the grader runs the same selection again in a
//! child process under `ncu`, compiled only (`--backend none`), so that the
//! only kernels it launches on the GPU are the measurements' own
//! ([`kit::counters::COLLECT_ENV`]); the child writes which launches each
//! measurement made, `ncu` exports one row per launch, and the two are zipped
//! in launch order. Nothing timed runs under the profiler. The child gets the
//! run's shapes secret (`kit::SHAPES_SECRET_ENV`) and compiles for the GPU, so
//! it measures the very launches the simulator measures. In a batch
//! ([`kit::counters::cache`]) one child profiles a whole submission, and
//! what it read is kept per part and PTX for the batch's other parts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use kit::counters::{CountedLaunch, GpuCounters, Key};

/// Where to find `ncu` when it is not on PATH or in the toolkit.
pub const NCU_ENV: &str = "CUDA_LAB_NCU";

/// The metrics read for every measured launch, and the field each fills.
/// The counter a metric fills.
pub type Field = fn(&mut GpuCounters) -> &mut u64;

pub const METRICS: &[(&str, Field)] = &[
    ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", |c| &mut c.global_load_requests),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", |c| &mut c.global_load_sectors),
    ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", |c| &mut c.global_store_requests),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", |c| &mut c.global_store_sectors),
    ("smsp__sass_inst_executed_op_shared_ld.sum", |c| &mut c.shared_load_requests),
    ("smsp__sass_inst_executed_op_shared_st.sum", |c| &mut c.shared_store_requests),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", |c| &mut c.shared_load_wavefronts),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", |c| &mut c.shared_store_wavefronts),
    ("smsp__sass_inst_executed_op_local_ld.sum", |c| &mut c.local_load_requests),
    ("smsp__sass_inst_executed_op_local_st.sum", |c| &mut c.local_store_requests),
    ("smsp__sass_branch_targets.sum", |c| &mut c.branches),
    ("smsp__sass_branch_targets_threads_divergent.sum", |c| &mut c.divergent_branches),
    ("smsp__sass_inst_executed_op_global_atom.sum", |c| &mut c.global_atomic_requests),
    ("smsp__sass_inst_executed_op_shared_atom.sum", |c| &mut c.shared_atomic_requests),
];

/// Why counters are not read here, said once in the run's header.
pub const HOW_TO_ENABLE: &str =
    "install Nsight Compute (it comes with the CUDA toolkit) or set CUDA_LAB_NCU to its `ncu`; \
     a user who is not root also needs the driver's permission (NVreg_RestrictProfilingToAdminUsers=0)";

/// `ncu`, where it can be found: CUDA_LAB_NCU, PATH, then the toolkit's usual places.
pub fn find_ncu() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(NCU_ENV) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let toolkit = ["CUDA_PATH", "CUDA_HOME"].iter().filter_map(std::env::var_os).map(|d| PathBuf::from(d).join("bin"));
    std::env::split_paths(&path)
        .chain(toolkit)
        .chain([PathBuf::from("/usr/local/cuda/bin")])
        .map(|d| d.join("ncu"))
        .find(|p| p.is_file())
}

/// What a grading run grades: the child run grades the same.
pub struct Selection<'a> {
    pub root: &'a Path,
    pub sources: &'a str,
    pub seed: u64,
    pub test_args: &'a libtest_mimic::Arguments,
    /// The GPU counted on (its model keys the kept counters).
    pub gpu: &'a str,
    /// Every compiled part with a structure check: `ex07::coalesced` and its PTX.
    pub parts: Vec<(String, &'a str)>,
    /// The key of the shapes the run measures (`kit::shapes_secret`): the
    /// child measures the same ones, so each counter is of a launch the
    /// simulator measured too.
    pub shapes_secret: u64,
    /// How long the profiler's run may go without progress ([`stall_limit`]).
    pub stall: Duration,
}

/// The exercises a batch grades (`ex01,ex02`), set for its workers: the first
/// part of a submission to need counters profiles all of them at once.
pub const SCOPE_ENV: &str = "CUDA_LAB_COUNTERS_SCOPE";

/// Where the counters came from.
enum Source {
    /// This run's own profiler run (seconds).
    Profiled(f64),
    /// Kept from a profiler run before: this submission's, or another that
    /// handed in the same kernels ([`kit::counters::cache`]).
    Kept,
}

/// What a run takes from the profiler: the counters of its measurements, and
/// why each of its parts whose measurement never finished on the GPU has none.
struct Read {
    figures: HashMap<Key, GpuCounters>,
    stuck: HashMap<String, String>,
}

/// Reads and installs the counters of every measurement the checks of
/// `exercises` will make, and says what happened: the run's header line.
pub fn read_for(exercises: &[kit::Exercise], opts: &Selection) -> String {
    kit::counters::clear();
    if kit::counters::collecting() {
        return "being read (this is the profiler's run)".into();
    }
    if let Some(why) = kit::counters::turned_off() {
        return format!("not read ({why}); structure checks measured on the simulator");
    }
    // Only parts with a structure check measure anything worth a profiler's start.
    let measures =
        exercises.iter().flat_map(|e| &e.parts).flat_map(|p| &p.checks).any(|c| c.kind == kit::CheckKind::Structure);
    if !measures {
        return "not needed (no structure check selected)".into();
    }
    if opts.parts.is_empty() {
        return "not needed (no kernel with a structure check compiled)".into();
    }
    let Some(ncu) = find_ncu() else {
        return format!("not read here (no Nsight Compute `ncu` found): structure checks are measured on the simulator; to read them, {HOW_TO_ENABLE}");
    };
    let read = kit::stats::timed(kit::stats::Counter::HardwareCounters, || read(exercises, &ncu, opts));
    match read {
        Ok((read, _)) if read.figures.is_empty() && read.stuck.is_empty() => {
            "read, but no measurement's launches were profiled: structure checks measured on the simulator".into()
        }
        Ok((Read { figures, stuck }, source)) => {
            let n = figures.len();
            let stuck_parts = stuck.keys().cloned().collect::<Vec<_>>().join(", ");
            kit::counters::install(figures, stuck);
            let how = match source {
                Source::Profiled(s) => format!("{s:.1} s"),
                Source::Kept => "kept from this batch's profile of the same kernels".into(),
            };
            let stuck = if stuck_parts.is_empty() {
                String::new()
            } else {
                format!("; {stuck_parts}: its measurement never finished on the GPU, so its structure checks fail")
            };
            format!(
                "read by Nsight Compute for {n} measurement{} ({how}): structure checks grade the GPU's figures, the simulator's beside them{stuck}",
                if n == 1 { "" } else { "s" },
            )
        }
        Err(e) => format!("not read ({e:#}): structure checks are measured on the simulator; {HOW_TO_ENABLE}"),
    }
}

/// The counters of this run's parts: kept ones where a batch keeps them,
/// else from a profiler run (in a batch, over the whole submission).
fn read(exercises: &[kit::Exercise], ncu: &Path, opts: &Selection) -> Result<(Read, Source)> {
    let started = std::time::Instant::now();
    use kit::counters::cache::{digest, Cache};
    let stuck = |cache: &Cache| -> HashMap<String, String> {
        let of = |(part, ptx): &(String, &str)| Some((part.clone(), cache.stuck(part, &digest(ptx))?));
        opts.parts.iter().filter_map(of).collect()
    };
    // Every part's figures kept, or none: a part kept as stuck has none to keep.
    let kept = |cache: &Cache| -> Option<Read> {
        let stuck = stuck(cache);
        let parts = opts.parts.iter().filter(|(part, _)| !stuck.contains_key(part));
        let figures = parts.map(|(part, ptx)| cache.get(part, &digest(ptx))).collect::<Option<Vec<_>>>()?;
        Some(Read { figures: figures.into_iter().flatten().collect(), stuck })
    };
    let Some(batch) = Cache::from_env() else {
        // A run of its own keeps what its profiler runs read in a folder of its own.
        let own = tempfile::tempdir().context("a folder for the counters read")?;
        let cache = Cache::at(own.path());
        let figures = profile(ncu, &Child::of(exercises, opts)?, &cache, opts.stall)?;
        let read = kept(&cache).unwrap_or_else(|| Read { figures, stuck: stuck(&cache) });
        return Ok((read, Source::Profiled(started.elapsed().as_secs_f64())));
    };
    let metrics: Vec<&str> = METRICS.iter().map(|(m, _)| *m).collect();
    let shapes = digest(&format!("{:x}", opts.shapes_secret));
    let cache = batch.for_run(&format!("{}|seed {}|shapes {shapes}|{}", opts.gpu, opts.seed, metrics.join(",")));
    if let Some(read) = kept(&cache) {
        return Ok((read, Source::Kept));
    }
    // The submission's parts take turns: the first profiles them all, the
    // others wait for it and find theirs kept.
    let _turn = cache.lock(&opts.root.display().to_string()).context("locking the kept counters")?;
    if let Some(read) = kept(&cache) {
        return Ok((read, Source::Kept));
    }
    // One profiler at a time in a batch: Nsight Compute reads the GPU's
    // counters for one session at a time, so workers take turns at it (and
    // grade beside it).
    let _profiler = batch.lock("the profiler").context("waiting for the profiler")?;
    // Every check of every part, whatever this run's filter: what is kept is whole.
    let every_check = libtest_mimic::Arguments::default();
    let whole = Selection { test_args: &every_check, parts: Vec::new(), ..*opts };
    let figures = profile(ncu, &Child::of(&scope(exercises)?, &whole)?, &cache, opts.stall)?;
    let read = kept(&cache).unwrap_or_else(|| {
        let mine = figures
            .into_iter()
            .filter(|(k, _)| opts.parts.iter().any(|(part, _)| kit::counters::cache::part_of(&k.check) == *part));
        Read { figures: mine.collect(), stuck: stuck(&cache) }
    });
    Ok((read, Source::Profiled(started.elapsed().as_secs_f64())))
}

/// How long the profiler's run may go without finishing a measurement or
/// starting one: a kernel's own limit (`--timeout`), with time for `ncu` to
/// start and the next exercise to compile. A measured launch takes
/// milliseconds (its inputs are small enough for the simulator), a tenth of a
/// second profiled.
pub fn stall_limit(kernel_timeout: Duration) -> Duration {
    kernel_timeout + Duration::from_secs(10)
}

/// Runs `child` under the profiler until it finishes: a part whose
/// measurement gets stuck on the GPU (a kernel that never ends there) is kept
/// as stuck in `cache`, and the profiler runs again without it, so one such
/// kernel costs its own part's structure checks and a stall's wait, never the
/// counters of the submission's other parts. The figures of the last run.
fn profile(
    ncu: &Path,
    child: &Child,
    cache: &kit::counters::cache::Cache,
    stall: Duration,
) -> Result<HashMap<Key, GpuCounters>> {
    loop {
        match collect(ncu, child, cache, stall) {
            Ok(matched) => return Ok(matched.figures),
            Err(e) => {
                let Some(Stuck { part, ptx }) = e.downcast_ref::<Stuck>() else { return Err(e) };
                if cache.has(part, ptx) {
                    bail!("the profiler's run got stuck again in {part}, which it had left out");
                }
                let why = format!(
                    "on the GPU, this part's measured launches did not finish: Nsight Compute, reading the GPU's \
                     counters, saw no progress for {:.0} s. A kernel that does not finish where it is measured fails \
                     its structure checks; make sure every thread's loops end",
                    stall.as_secs_f64()
                );
                cache.put_stuck(part, ptx, &why).context("keeping the stuck part")?;
            }
        }
    }
}

/// The profiler's run saw no progress in `part`'s measurement (PTX digest `ptx`).
#[derive(Debug, thiserror::Error)]
#[error("the profiler's run got stuck measuring {part}")]
struct Stuck {
    part: String,
    ptx: String,
}

/// The exercises one profiler run covers: those the batch grades
/// ([`SCOPE_ENV`]) with this run's own, or this run's alone.
fn scope(exercises: &[kit::Exercise]) -> Result<Vec<kit::Exercise>> {
    let mut ids: Vec<String> = std::env::var(SCOPE_ENV)
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    for ex in exercises {
        if !ids.iter().any(|id| id == ex.id) {
            ids.push(ex.id.to_string());
        }
    }
    crate::registry::select(&ids)
}

/// The child run: the same selection, compiled only, its measurements run on the GPU.
pub struct Child {
    pub exe: PathBuf,
    pub args: Vec<String>,
    /// The grading run's shapes secret, handed down ([`kit::SHAPES_SECRET_ENV`]).
    pub shapes_secret: u64,
}

impl Child {
    /// This grader, on the same exercises (and part), seed, root and sources, compiled only.
    pub fn of(exercises: &[kit::Exercise], opts: &Selection) -> Result<Self> {
        let exe = std::env::current_exe().context("finding this grader's executable")?;
        let mut args: Vec<String> = exercises.iter().map(|e| e.id.to_string()).collect();
        if let [ex] = exercises {
            let whole = crate::registry::select(&[ex.id.to_string()])?;
            if let ([part], Some(all)) = (&ex.parts[..], whole.first()) {
                if all.parts.len() > 1 {
                    args.extend(["--part".into(), part.name.to_string()]);
                }
            }
        }
        let root = opts.root.display().to_string();
        let seed = opts.seed.to_string();
        for (flag, value) in [
            ("--root", root.as_str()),
            ("--sources", opts.sources),
            ("--seed", &seed),
            ("--backend", "none"),
            ("--sanitize", "off"),
        ] {
            args.extend([flag.to_string(), value.to_string()]);
        }
        args.push("--no-report".into());
        let t = &opts.test_args;
        args.push("--".into());
        if let Some(f) = &t.filter {
            args.push(f.clone());
        }
        if t.exact {
            args.push("--exact".into());
        }
        for s in &t.skip {
            args.extend(["--skip".into(), s.clone()]);
        }
        Ok(Self { exe, args, shapes_secret: opts.shapes_secret })
    }
}

/// Reads the counters of every measurement `child` makes, or says why not
/// (no permission, `ncu` failed, [`Stuck`]): the run then grades by the
/// simulator alone. Every part the child measured is kept in `keep`, when
/// every launch found its row; parts kept there already are not measured.
pub fn collect(
    ncu: &Path,
    child: &Child,
    keep: &kit::counters::cache::Cache,
    stall: Duration,
) -> Result<kit::counters::Matched> {
    let dir = tempfile::tempdir().context("a folder for the profiler's report")?;
    let log = dir.path().join("launches.jsonl");
    let report = dir.path().join("counters");
    let metrics: Vec<&str> = METRICS.iter().map(|(m, _)| *m).collect();
    let mut cmd = Command::new(ncu);
    // Only the measured launches (the kit brackets them with cuProfilerStart
    // and Stop), not the grader's own comparisons between: each profiled
    // launch costs about a tenth of a second (docs/gpu-runs.md). These
    // counters count requests, sectors and wavefronts, which do not depend
    // on what the caches hold, so the caches are not flushed between passes.
    cmd.args(["--metrics", &metrics.join(","), "--target-processes", "all", "--clock-control", "none"])
        .args(["--profile-from-start", "off", "--cache-control", "none"])
        .args(["--force-overwrite", "--export"])
        .arg(&report)
        .arg(&child.exe)
        .args(&child.args)
        .env(kit::counters::COLLECT_ENV, &log)
        .env(kit::SHAPES_SECRET_ENV, format!("{:x}", child.shapes_secret))
        .env(kit::counters::cache::ENV, keep.dir())
        .env_remove("GITHUB_STEP_SUMMARY");
    // Progress: a measurement started or finished (both logs only grow).
    let started = kit::counters::cache::started_log(&log);
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let progress = || size(&log) + size(&started);
    let limits = crate::process::child::Limits { wall: Duration::MAX, output_cap: 1 << 20 };
    let watch = crate::process::child::Watch { progress: &progress, after: stall };
    let run = crate::process::child::run_watched(cmd, limits, Some(watch))
        .with_context(|| format!("starting {}", ncu.display()))?;
    if run.ending == crate::process::child::Ending::TimedOut {
        return Err(match kit::counters::cache::unfinished(&log) {
            Some(p) => anyhow!(Stuck { part: p.part, ptx: p.ptx }),
            None => {
                anyhow!("the profiler's run made no progress for {:.0} s between measurements", stall.as_secs_f64())
            }
        });
    }
    let said = run.log();
    if said.contains("ERR_NVGPUCTRPERM") {
        bail!("this user may not read the GPU's performance counters (the driver restricts them to administrators: NVreg_RestrictProfilingToAdminUsers)");
    }
    let rep = report.with_extension("ncu-rep");
    let rows = if rep.is_file() {
        let csv = Command::new(ncu)
            .args(["--import"])
            .arg(&rep)
            .args(["--csv", "--page", "raw", "--print-units", "base"])
            .output()
            .context("reading the profiler's report")?;
        if !csv.status.success() {
            bail!("Nsight Compute could not read its report: {}", String::from_utf8_lossy(&csv.stderr).trim());
        }
        parse_raw_csv(&String::from_utf8_lossy(&csv.stdout))?
    } else if run.ending == crate::process::child::Ending::Exited(0) && said.contains("No kernels were profiled") {
        // The measurements launched nothing (or only parts kept already).
        Vec::new()
    } else {
        let last = said
            .lines()
            .rev()
            .find(|l| l.contains("==ERROR==") || l.contains("==WARNING=="))
            .unwrap_or("no report written");
        bail!("Nsight Compute profiled nothing ({})", last.trim());
    };
    let launches = if log.is_file() { kit::counters::read_launches(&log)? } else { Vec::new() };
    let matched = kit::counters::per_measurement(&launches, &rows);
    if matched.complete {
        // Parts kept already were not profiled again: their entries stay.
        for p in kit::counters::cache::read_profiled(&log).iter().filter(|p| !keep.has(&p.part, &p.ptx)) {
            keep.put(&p.part, &p.ptx, &matched.figures).context("keeping the counters read")?;
        }
    }
    Ok(matched)
}

/// `ncu --csv --page raw`: a header row of column names, a row of units,
/// then one row per profiled launch. Numbers may carry thousands separators.
pub fn parse_raw_csv(text: &str) -> Result<Vec<CountedLaunch>> {
    // ncu prints its own `==PROF==` lines before the table.
    let start = text.find("\"ID\"").ok_or_else(|| anyhow!("no table in the profiler's output"))?;
    let mut reader = csv::ReaderBuilder::new().has_headers(true).flexible(true).from_reader(&text.as_bytes()[start..]);
    let headers = reader.headers()?.clone();
    let column = |name: &str| headers.iter().position(|h| h == name);
    let kernel = column("Kernel Name").ok_or_else(|| anyhow!("the profiler's table has no `Kernel Name` column"))?;
    let columns: Vec<(usize, Field)> = METRICS.iter().filter_map(|(m, field)| column(m).map(|i| (i, *field))).collect();
    let mut rows = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let record = record?;
        let name = record.get(kernel).unwrap_or_default();
        // The units row has an empty kernel name.
        if i == 0 && name.is_empty() {
            continue;
        }
        let mut counters = GpuCounters { launches: 1, ..Default::default() };
        for (col, field) in &columns {
            let text: String = record.get(*col).unwrap_or_default().chars().filter(|c| *c != ',').collect();
            *field(&mut counters) = text.trim().parse::<f64>().map(|v| v.round() as u64).unwrap_or(0);
        }
        // `ncu` shows a kernel's name as declared; an `extern "C"` kernel's is the PTX entry's.
        let name = name.split('(').next().unwrap_or(name).trim().to_string();
        rows.push(CountedLaunch { kernel: name, counters });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_raw_page_gives_one_row_per_launch_with_its_counters() {
        let text = "==PROF== Connected to process 1\n\
            \"ID\",\"Process ID\",\"Kernel Name\",\"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\"\n\
            \"\",\"\",\"\",\"request\",\"sector\"\n\
            \"0\",\"12\",\"transpose_coalesced\",\"32\",\"128\"\n\
            \"1\",\"12\",\"transpose_naive\",\"1,024\",\"32,768\"\n";
        let rows = parse_raw_csv(text).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].kernel, "transpose_coalesced");
        assert_eq!((rows[0].counters.global_load_requests, rows[0].counters.global_load_sectors), (32, 128));
        assert_eq!(rows[1].counters.global_load_sectors, 32768);
    }

    /// A stand-in for `ncu` that measures `part` (PTX `ptx`) and never
    /// finishes there, unless (with `once`) that part is kept as stuck already.
    fn stuck_profiler(dir: &Path, once: bool, part: &str, ptx: &str) -> PathBuf {
        let ncu = dir.join(if once { "ncu-once" } else { "ncu-always" });
        let skip = if once {
            r#"ls "$CUDA_LAB_COUNTERS_CACHE"/*.stuck >/dev/null 2>&1 && { echo "==PROF== No kernels were profiled."; exit 0; }"#
        } else {
            ""
        };
        let script = format!(
            "#!/bin/sh\n{skip}\necho '{{\"part\":\"{part}\",\"ptx\":\"{}\"}}' >> \"${{CUDA_LAB_COUNTERS_COLLECT%.jsonl}}.started.jsonl\"\nsleep 60\n",
            kit::counters::cache::digest(ptx)
        );
        std::fs::write(&ncu, script).unwrap();
        std::fs::set_permissions(&ncu, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        ncu
    }

    #[test]
    fn a_measurement_stuck_under_the_profiler_is_kept_as_stuck_and_the_rest_profiled_without_it() {
        let dir = tempfile::tempdir().unwrap();
        let cache = kit::counters::cache::Cache::at(dir.path().join("kept"));
        let child = Child { exe: "/bin/true".into(), args: Vec::new(), shapes_secret: 1 };
        let started = std::time::Instant::now();
        let figures = profile(
            &stuck_profiler(dir.path(), true, "ex03::rect", "endless"),
            &child,
            &cache,
            Duration::from_millis(300),
        )
        .unwrap();
        assert!(figures.is_empty());
        assert!(started.elapsed() < Duration::from_secs(20), "the stuck run was stopped, not waited for");
        let why = cache.stuck("ex03::rect", &kit::counters::cache::digest("endless")).expect("kept as stuck");
        assert!(why.contains("did not finish") && why.contains("every thread's loops end"), "{why}");
        // A profiler that gets stuck in the part it was told to leave out stops there.
        let again = profile(
            &stuck_profiler(dir.path(), false, "ex03::rect", "endless"),
            &child,
            &cache,
            Duration::from_millis(300),
        );
        assert!(format!("{:#}", again.unwrap_err()).contains("stuck again in ex03::rect"));
    }

    #[test]
    fn a_run_of_its_own_gets_its_stuck_part_to_fail_and_no_counters_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let exercises = crate::registry::select(&["ex07".to_string()]).unwrap();
        let args = libtest_mimic::Arguments::default();
        let opts = Selection {
            root: dir.path(),
            sources: "exercises",
            seed: 1,
            test_args: &args,
            gpu: "a GPU",
            parts: vec![("ex07::coalesced".into(), "its PTX"), ("ex07::naive".into(), "the other PTX")],
            shapes_secret: 1,
            stall: Duration::from_millis(300),
        };
        let ncu = stuck_profiler(dir.path(), true, "ex07::coalesced", "its PTX");
        let (read, _) = read(&exercises, &ncu, &opts).unwrap();
        assert_eq!(read.stuck.keys().collect::<Vec<_>>(), ["ex07::coalesced"], "only the part that got stuck");
        assert!(read.stuck["ex07::coalesced"].contains("did not finish"));
        assert!(read.figures.is_empty());
    }

    #[test]
    fn output_without_a_table_is_an_error_not_an_empty_profile() {
        assert!(parse_raw_csv("==ERROR== something went wrong\n").is_err());
    }
}
