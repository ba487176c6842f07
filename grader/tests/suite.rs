//! The grader's integration tests, one binary (`cargo test -p grader --test suite`):
//! one link after an edit instead of one per file, and the slow tests of every
//! file share both cores instead of running one binary after another. Each file
//! is a module; select one with its name, e.g. `--test suite variants::`.

mod corpus;
mod support;

mod audit;
mod batch;
mod batch_workers;
mod can_fail;
mod cheats;
mod check_limits;
mod check_names;
mod class_report;
mod cli;
mod compilers_agree;
mod devcontainer;
mod differential;
mod formats;
mod hostile;
mod input_ranges;
mod intake_props;
mod measured;
mod messages;
mod module_graph;
mod no_compiler;
mod platforms;
mod policy;
mod runner_hardening;
mod sanitize;
mod similarity;
mod simulated;
mod slurm;
mod sources_compile;
mod student_loop;
mod template;
mod variants;
