//! The grader as a library: the binary in main.rs is its command line, and the
//! tests use the same modules.

pub mod ahead;
pub mod atomic;
pub mod audit;
pub mod author;
pub mod batch;
pub mod calibrate;
pub mod check_limits;
pub mod class_report;
pub mod counters;
pub mod course;
pub mod credit;
pub mod differential;
pub mod digests;
pub mod gpu_load;
pub mod grade;
pub mod headers;
pub mod html;
pub mod lab;
pub mod not_graded_here;
pub mod platforms;
pub mod policy;
pub mod process;
pub mod registry;
pub mod report;
pub mod sanitize;
pub mod score;
pub mod similarity;
pub mod student;
pub mod template;
pub mod verdict;
pub mod words;

// The platforms' modules under their earlier paths.
pub use platforms as formats;
pub use platforms::{classroom, gradescope, job_summary, lms};
