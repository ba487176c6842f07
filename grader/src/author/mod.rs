//! Authoring: what a course needs to add an exercise of its own
//! (docs/authoring.md). `grader new exercise exNN-slug` writes a complete,
//! compiling exercise from a template ([`new_exercise`]), and
//! [`completeness`] says what an `exercises/ex*` folder lacks: a test runs it
//! on the workspace, so that no exercise is left unregistered or half-made.
//!
//! Nothing else lists the exercises by hand: the workspace takes
//! `exercises/*` as members, and the registry is generated from the grader's
//! dependencies (build.rs).

pub mod completeness;
pub mod new_exercise;
pub mod shape;
pub mod variants;
