//! `grader new exercise exNN-slug`: write something new for the course (docs/authoring.md).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use grader::registry;

#[derive(Subcommand)]
pub enum New {
    /// A complete exercise that builds and grades (stub 0, reference full
    /// marks), registered in grader/Cargo.toml, the Classroom workflow and the README.
    Exercise {
        /// exNN-slug, e.g. `ex09-picture`.
        name: String,
        /// The title `grader list` and the README show.
        #[arg(long)]
        title: Option<String>,
        /// What the kernel is laid over: `linear` (a vector, one thread per
        /// element), `rows` (a matrix, one block per row) or `tiles-2d` (an
        /// image, a 2-D grid of 16 x 16 blocks). The launch, the yardstick and
        /// the measured check follow.
        #[arg(long, value_enum, default_value = "linear")]
        shape: grader::author::new_exercise::Shape,
        /// The workspace to write into (default: as for grading).
        #[arg(long)]
        root: Option<PathBuf>,
    },
}

pub fn run(new: New) -> Result<ExitCode> {
    use grader::author::new_exercise::{create, next_steps, Names};
    let New::Exercise { name, title, shape, root } = new;
    let names = Names::parse(&name, title.as_deref())?.shaped(shape);
    let root = super::root_or_default(root)?;
    let created = create(&root, &names, &registry::all())?;
    print!("{}", next_steps(&names, &created));
    Ok(ExitCode::SUCCESS)
}
