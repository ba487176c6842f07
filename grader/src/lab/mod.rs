//! Labs: small experiments from the notes, run on the student's GPU (and on the
//! simulator), drawn in the report.

pub mod coalescing;
