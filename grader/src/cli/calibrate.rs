//! `grader calibrate`: measure every performance threshold on this GPU, or
//! (no GPU needed) print, document or re-place the committed calibrations.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use grader::grade;
use grader::registry;

#[derive(clap::Args)]
pub struct Args {
    /// Seeds every family is graded with.
    #[arg(long, default_value = "1,2,3", value_delimiter = ',')]
    seeds: Vec<u64>,
    /// Exercises to calibrate.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    exercises: Vec<String>,
    /// The course's folder (with reference/, reference/slow/ and the variants corpus).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Where the calibration goes (default: <root>/calibration/<gpu model>.toml).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Do nothing where this GPU model already has a calibration (what `grader batch` runs first).
    #[arg(long)]
    if_missing: bool,
    /// Also time the `technique` variants (shown for comparison; not used by the rule).
    #[arg(long)]
    with_technique: bool,
    /// Seconds one kernel may run before it is declared stuck.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Print every committed calibration side by side as Markdown (no GPU needed).
    #[arg(long)]
    markdown: bool,
    /// Write those tables into each exercise's CALIBRATION.md (no GPU needed).
    #[arg(long)]
    update_docs: bool,
    /// Place every threshold of the committed calibrations again with today's
    /// rule, from the figures they recorded (no GPU needed).
    #[arg(long)]
    replace: bool,
    /// Measure, compare with the committed file of this GPU model and write
    /// nothing there: every threshold and decision that would move. Exit 1
    /// only where a decision moves beyond the hysteresis band.
    #[arg(long)]
    check: bool,
    /// Record only the structure checks' figures on this GPU's counters into
    /// this model's committed file (the references and slow variants graded
    /// once more with the counters read; no timing, the thresholds untouched).
    #[arg(long)]
    counters_only: bool,
}

/// `grader calibrate`: exit 2 without a GPU.
pub fn run(args: Args) -> Result<ExitCode> {
    use grader::calibrate::{self, file, markdown, run};
    let root = args.root.clone().map_or_else(super::default_root, Ok)?;
    let exercises = registry::select(&args.exercises)?;
    if args.replace {
        for (path, mut f) in file::CalibrationFile::all_in(&file::course_dir(&root)) {
            run::replace(&mut f);
            f.write_with_notes(&path, &file::notes_at(&path))?;
            println!("{}", run::summary(&f, &path));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.markdown || args.update_docs {
        let files = file::CalibrationFile::all_in(&file::course_dir(&root));
        if args.update_docs {
            for path in markdown::update_docs(&root, &files, &exercises)? {
                println!("updated {}", path.display());
            }
        } else {
            print!("{}", markdown::tables(&files, None));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let gpu = match kit::Gpu::cuda(Duration::from_secs_f64(args.timeout)) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!(
                "grader calibrate needs a CUDA GPU: it times the kernels of every performance check, which the \
                 simulator cannot ({e})"
            );
            return Ok(ExitCode::from(2));
        }
    };
    let info = gpu.info().clone();
    // Only the device's description is needed here: the children time.
    drop(gpu);
    if args.if_missing {
        let chosen = calibrate::choose(&calibrate::Choice::Auto(Vec::new()), &root, &info);
        if chosen.how == calibrate::How::Exact {
            let path = chosen.path.map(|p| p.display().to_string()).unwrap_or_default();
            println!("{} is calibrated ({path})", info.name);
            return Ok(ExitCode::SUCCESS);
        }
        println!("{} has no calibration: calibrating it first", info.name);
    }
    let slug = file::model_slug(&info.name);
    let work = root.join("target").join("calibrate").join(&slug);
    let _ = std::fs::remove_dir_all(&work);
    let mut envs = Vec::new();
    if std::env::var_os(grade::PTX_CACHE_ENV).is_none() {
        envs.push((grade::PTX_CACHE_ENV.to_string(), root.join("target").join("ptx-cache").display().to_string()));
    }
    let mut source = run::GraderRun {
        exe: std::env::current_exe()?,
        root: root.clone(),
        exercises: exercises.clone(),
        timeout: Duration::from_secs_f64(args.timeout),
        envs,
        work: work.clone(),
    };
    let out = args.out.clone().unwrap_or_else(|| file::path_in(&file::course_dir(&root), &info.name));
    if args.counters_only {
        let Ok(mut calibration) = file::CalibrationFile::read(&out) else {
            eprintln!("{} has no calibration at {}: run `grader calibrate` first", info.name, out.display());
            return Ok(ExitCode::from(2));
        };
        record_counters(&mut calibration, &source, &exercises, args.seeds[0]);
        calibration.write_with_notes(&out, &file::notes_at(&out))?;
        println!("wrote {}", out.display());
        return Ok(ExitCode::SUCCESS);
    }
    let plan = calibrate::families::plan(&root, &exercises, args.with_technique)?;
    println!(
        "calibrating {} ({}): {} ({} x {}), about 5 s each; logs in {}",
        info.name,
        grader::words::count(plan.checks.len(), "check"),
        grader::words::count(plan.jobs.len() * args.seeds.len(), "grading"),
        grader::words::count(plan.jobs.len(), "kernel"),
        grader::words::count(args.seeds.len(), "seed"),
        work.display()
    );
    let start = std::time::Instant::now();
    let collected = run::collect(&plan, &args.seeds, &mut source, &mut |line| println!("  {line}"));
    // The program by name, with no folder of this machine in a committed file.
    let command = std::iter::once("grader".to_string())
        .chain(std::env::args().skip(1).filter(|a| !a.starts_with('/')))
        .collect::<Vec<_>>()
        .join(" ");
    let provenance = || run::Provenance { date: run::today(), command: command.clone(), seeds: args.seeds.clone() };
    if args.check {
        let (text, moved) =
            calibrate::check::against_committed(&root, run::gpu_model(&info), &collected, provenance, &work)?;
        print!("{text}");
        return Ok(if moved { ExitCode::FAILURE } else { ExitCode::SUCCESS });
    }
    // The same model's file keeps its decisions inside the hysteresis band (calibrate::rule::HYSTERESIS).
    let before = file::CalibrationFile::read(&out)
        .ok()
        .filter(|b| file::model_slug(&b.gpu.name) == file::model_slug(&info.name));
    let mut calibration =
        run::calibration_file_keeping(run::gpu_model(&info), &collected, provenance(), before.as_ref());
    // Calibrating in pieces (`--exercises`): the checks of this model not measured now keep their entries.
    if let Some(before) = before {
        let kept = run::keep_unmeasured(&mut calibration, before);
        if kept > 0 {
            println!("{kept} check(s) not measured in this run keep their entries from {}", out.display());
        }
    }
    record_counters(&mut calibration, &source, &exercises, args.seeds[0]);
    let notes = file::notes_at(&out);
    if !notes.is_empty() {
        println!(
            "the {} note line(s) at the top of {} spoke of the figures measured before and are left out (git keeps \
             them): say in the new file what its figures mean",
            notes.len(),
            out.display()
        );
    }
    calibration.write(&out)?;
    if let Some(cache) = file::cache_dir() {
        calibration.write(&file::path_in(&cache, &info.name))?;
    }
    print!("{}", run::summary(&calibration, &out));
    println!("calibrated in {:.1} min", start.elapsed().as_secs_f64() / 60.0);
    Ok(ExitCode::SUCCESS)
}

/// The structure checks' figures on this GPU's counters beside the
/// simulator's (`calibrate::counters`), into `calibration`; where none could
/// be read, the run says why and the file keeps what it had.
fn record_counters(
    calibration: &mut grader::calibrate::file::CalibrationFile,
    source: &grader::calibrate::run::GraderRun,
    exercises: &[kit::Exercise],
    seed: u64,
) {
    use grader::calibrate::counters;
    let ids: Vec<String> = exercises.iter().map(|e| e.id.to_string()).collect();
    match counters::record(&source.exe, &source.root, &ids, seed, &source.work) {
        Ok(r) if r.checks.is_empty() => println!(
            "counters: no structure check's figures recorded ({}); logs in {}",
            r.header.as_deref().unwrap_or("the GPU's counters were not read"),
            r.logs.display()
        ),
        Ok(r) => {
            println!(
                "counters: {} recorded, the references' and slow variants' figures beside the simulator's (logs in {})",
                grader::words::count(r.checks.len(), "structure check"),
                r.logs.display()
            );
            // calibrating in pieces: the checks not graded now keep their entries
            calibration.counters.extend(r.checks);
        }
        Err(e) => println!("counters: not recorded: {e:#}"),
    }
}
