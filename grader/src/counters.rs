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
use std::process::{Command, Stdio};

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
        Ok((figures, _)) if figures.is_empty() => {
            "read, but no measurement's launches were profiled: structure checks measured on the simulator".into()
        }
        Ok((figures, source)) => {
            let n = figures.len();
            kit::counters::install(figures);
            let how = match source {
                Source::Profiled(s) => format!("{s:.1} s"),
                Source::Kept => "kept from this batch's profile of the same kernels".into(),
            };
            format!(
                "read by Nsight Compute for {n} measurement{} ({how}): structure checks grade the GPU's figures, the simulator's beside them",
                if n == 1 { "" } else { "s" },
            )
        }
        Err(e) => format!("not read ({e:#}): structure checks are measured on the simulator; {HOW_TO_ENABLE}"),
    }
}

/// The counters of this run's parts: kept ones where a batch keeps them,
/// else from a profiler run (in a batch, over the whole submission).
fn read(exercises: &[kit::Exercise], ncu: &Path, opts: &Selection) -> Result<(HashMap<Key, GpuCounters>, Source)> {
    let started = std::time::Instant::now();
    let Some(cache) = kit::counters::cache::Cache::from_env() else {
        let child = Child::of(exercises, opts)?;
        return Ok((collect(ncu, &child, None)?.figures, Source::Profiled(started.elapsed().as_secs_f64())));
    };
    let metrics: Vec<&str> = METRICS.iter().map(|(m, _)| *m).collect();
    let shapes = kit::counters::cache::digest(&format!("{:x}", opts.shapes_secret));
    let cache = cache.for_run(&format!("{}|seed {}|shapes {shapes}|{}", opts.gpu, opts.seed, metrics.join(",")));
    let kept = |opts: &Selection| -> Option<HashMap<Key, GpuCounters>> {
        let parts = opts.parts.iter().map(|(part, ptx)| cache.get(part, &kit::counters::cache::digest(ptx)));
        Some(parts.collect::<Option<Vec<_>>>()?.into_iter().flatten().collect())
    };
    if let Some(figures) = kept(opts) {
        return Ok((figures, Source::Kept));
    }
    // The submission's parts take turns: the first profiles them all, the
    // others wait for it and find theirs kept.
    let _turn = cache.lock(&opts.root.display().to_string()).context("locking the kept counters")?;
    if let Some(figures) = kept(opts) {
        return Ok((figures, Source::Kept));
    }
    // Every check of every part, whatever this run's filter: what is kept is whole.
    let every_check = libtest_mimic::Arguments::default();
    let whole = Selection { test_args: &every_check, parts: Vec::new(), ..*opts };
    let child = Child::of(&scope(exercises)?, &whole)?;
    let matched = collect(ncu, &child, Some(&cache))?;
    let mine: HashMap<Key, GpuCounters> = matched
        .figures
        .into_iter()
        .filter(|(k, _)| opts.parts.iter().any(|(part, _)| kit::counters::cache::part_of(&k.check) == *part))
        .collect();
    Ok((mine, Source::Profiled(started.elapsed().as_secs_f64())))
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
/// (no permission, `ncu` failed): the run then grades by the simulator alone.
/// With `keep`, every part the child measured is kept there, when every
/// launch found its row.
pub fn collect(
    ncu: &Path,
    child: &Child,
    keep: Option<&kit::counters::cache::Cache>,
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
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdin(Stdio::null());
    if let Some(cache) = keep {
        cmd.env(kit::counters::cache::ENV, cache.dir());
    }
    let out = cmd.output().with_context(|| format!("starting {}", ncu.display()))?;
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
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
    } else if out.status.success() && said.contains("No kernels were profiled") {
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
    if let (Some(cache), true) = (keep, matched.complete) {
        // Parts kept already were not profiled again: their entries stay.
        for p in kit::counters::cache::read_profiled(&log).iter().filter(|p| !cache.has(&p.part, &p.ptx)) {
            cache.put(&p.part, &p.ptx, &matched.figures).context("keeping the counters read")?;
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

    #[test]
    fn output_without_a_table_is_an_error_not_an_empty_profile() {
        assert!(parse_raw_csv("==ERROR== something went wrong\n").is_err());
    }
}
