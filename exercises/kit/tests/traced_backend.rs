//! Traced's tally through a [`kit::Gpu`], as the grader prints it. Here
//! rather than in `backend/traced.rs`, so that the backend's module does not
//! use `kit::gpu`, which uses it (a cycle between the two modules' tests).

use std::time::Duration;

use kit::backend::sim::SimBackend;
use kit::backend::traced::{self, Traced};
use kit::Gpu;

#[test]
fn every_call_is_counted_with_its_bytes() {
    let gpu = Gpu::new(Box::new(Traced::new(Box::new(SimBackend::new()))), Duration::MAX);
    // Only the upload's own calls (a watched input adds a copy: `kit::gpu`).
    gpu.watch_inputs(false);
    let _ = traced::take();
    let buf = gpu.upload("x", &[1.0f32; 256]).unwrap();
    let back = buf.read().unwrap();
    assert_eq!(back.len(), 256);
    let (line, total) = traced::take();
    assert!(line.contains("upload 1× 0.0 MB"), "{line}");
    assert!(line.contains("download"), "{line}");
    assert!(line.contains("alloc 1×"), "{line}");
    assert!(total.is_finite() && total > 0.0, "the calls' time adds up: {total}");
    assert_eq!(traced::take().0, "", "taken once");
}
