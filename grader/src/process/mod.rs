//! Child processes run under limits: a batch's workers and parts, and the
//! profiler's run that reads the GPU's counters. Whatever a child does (hang,
//! crash, print forever, stop making progress), the caller gets it back.

pub mod capture;
pub mod child;
