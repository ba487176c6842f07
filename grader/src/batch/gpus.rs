//! Which GPUs a batch grades on: those `--gpus` names, else every GPU this
//! process can see. Two H200s of one host graded a realistic class of 80 in
//! 61.5 s instead of 111.3 s on one (README, docs/gpu-runs.md), so leaving a
//! GPU idle by default only costs time. One visible GPU, none, or a
//! simulator backend keep one set of workers with the devices as they are.

use crate::grade::BackendChoice;

/// Set by tests only: pretend the driver shows this many GPUs (there is no
/// GPU where they run). Read in [`visible`] and nowhere else.
pub const FAKE_COUNT_VAR: &str = "CUDA_LAB_FAKE_GPU_COUNT";

/// The GPUs a batch uses, and how they were chosen, for the line the run starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// `CUDA_VISIBLE_DEVICES` of each set of workers; empty: one set, devices as they are.
    pub ids: Vec<String>,
    pub why: &'static str,
}

impl std::fmt::Display for Choice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.ids.as_slice() {
            [] => write!(f, "grading with one set of workers ({})", self.why),
            [one] => write!(f, "grading on GPU {one} ({})", self.why),
            ids => write!(f, "grading on GPUs {} ({})", ids.join(", "), self.why),
        }
    }
}

/// `--gpus` when given; else every visible GPU where there are two or more.
pub fn gpus_to_use(cli: &[String], visible: &[String]) -> Choice {
    if !cli.is_empty() {
        return Choice { ids: cli.to_vec(), why: "--gpus" };
    }
    match visible.len() {
        0 => Choice { ids: Vec::new(), why: "no GPU visible" },
        1 => Choice { ids: Vec::new(), why: "the one GPU visible" },
        _ => Choice { ids: visible.to_vec(), why: "every GPU visible; --gpus chooses others" },
    }
}

/// The ids of the GPUs the driver shows (`count` of them), as a worker's
/// `CUDA_VISIBLE_DEVICES` names them: the entries of this process's own
/// `CUDA_VISIBLE_DEVICES` where it is set (ids or UUIDs), else `0..count`.
pub fn visible_ids(cuda_visible_devices: Option<&str>, count: usize) -> Vec<String> {
    match cuda_visible_devices {
        Some(list) => list.split(',').map(str::trim).filter(|s| !s.is_empty()).take(count).map(String::from).collect(),
        None => (0..count).map(|i| i.to_string()).collect(),
    }
}

/// The GPUs this process can see for `backend` (none for the simulator or `none`).
pub fn visible(backend: BackendChoice) -> Vec<String> {
    match backend {
        BackendChoice::Cuda | BackendChoice::Auto => {}
        BackendChoice::Sim | BackendChoice::None | BackendChoice::LuckySim => return Vec::new(),
    }
    let fake = std::env::var(FAKE_COUNT_VAR).ok().and_then(|n| n.parse::<usize>().ok());
    let count = fake.unwrap_or_else(kit::backend::cuda::gpu_count);
    visible_ids(std::env::var("CUDA_VISIBLE_DEVICES").ok().as_deref(), count)
}

/// The batch's choice for `--gpus` (possibly empty) and `backend`.
pub fn choose(cli: &[String], backend: BackendChoice) -> Choice {
    let no_gpu = |why| Choice { ids: Vec::new(), why };
    match backend {
        // `auto` on a machine with no GPU grades on the simulator: the named GPUs are not used.
        BackendChoice::Auto if !cli.is_empty() && visible(backend).is_empty() => {
            no_gpu("no GPU visible, so the simulator grades: --gpus is ignored")
        }
        // Asking the driver loads it: not where the flag already says. With a
        // simulator backend the named sets of workers still split the class (the tests' plumbing).
        _ if !cli.is_empty() => gpus_to_use(cli, &[]),
        BackendChoice::Cuda | BackendChoice::Auto => gpus_to_use(cli, &visible(backend)),
        BackendChoice::Sim | BackendChoice::None | BackendChoice::LuckySim => no_gpu("this --backend uses no GPU"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_named_where_auto_finds_no_gpu_are_said_to_be_ignored() {
        if visible(BackendChoice::Auto).is_empty() {
            // Where no GPU is visible, as in CI: the simulator grades.
            let auto = choose(&ids(&["0", "1"]), BackendChoice::Auto);
            assert!(auto.ids.is_empty() && auto.why.contains("--gpus is ignored"), "{auto}");
        }
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn two_visible_gpus_are_both_used_without_the_flag() {
        let visible = visible_ids(None, 2);
        assert_eq!(visible, ids(&["0", "1"]));
        let choice = gpus_to_use(&[], &visible);
        assert_eq!(choice.ids, ids(&["0", "1"]));
        assert_eq!(choice.to_string(), "grading on GPUs 0, 1 (every GPU visible; --gpus chooses others)");
    }

    #[test]
    fn the_flag_wins_and_one_gpu_or_none_stays_as_it_was() {
        assert_eq!(gpus_to_use(&ids(&["1"]), &ids(&["0", "1"])).ids, ids(&["1"]));
        assert!(gpus_to_use(&[], &ids(&["0"])).ids.is_empty());
        assert!(gpus_to_use(&[], &[]).ids.is_empty());
    }

    #[test]
    fn cuda_visible_devices_names_the_gpus() {
        assert_eq!(visible_ids(Some("2,3"), 2), ids(&["2", "3"]));
        assert_eq!(visible_ids(Some("GPU-aa, GPU-bb"), 2), ids(&["GPU-aa", "GPU-bb"]));
        // The driver shows fewer than listed (an id that does not exist ends the list for CUDA).
        assert_eq!(visible_ids(Some("0,7"), 1), ids(&["0"]));
        assert!(visible_ids(Some(""), 0).is_empty());
    }

    #[test]
    fn the_simulator_sees_no_gpu() {
        assert!(visible(BackendChoice::Sim).is_empty());
        assert!(visible(BackendChoice::None).is_empty());
    }
}
