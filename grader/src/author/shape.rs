//! The shapes `grader new exercise --shape` writes (docs/authoring.md).

/// What the generated exercise's kernel is laid over: its launch, yardstick
/// and measured check follow (docs/authoring.md, "1. Generate it").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Shape {
    /// One thread per element of a vector (a scaling): a 1-D grid.
    #[default]
    Linear,
    /// One block per row of a matrix (a row sum): its threads share the row.
    Rows,
    /// A 2-D grid of 16 x 16 blocks over an image (a scaling), one thread per pixel.
    #[value(name = "tiles-2d")]
    Tiles2d,
}

impl Shape {
    pub fn name(self) -> &'static str {
        match self {
            Shape::Linear => "linear",
            Shape::Rows => "rows",
            Shape::Tiles2d => "tiles-2d",
        }
    }
}
