//! The grader's gate kernel: it holds the stream until the host has queued
//! the launch to be timed, so that the events around a launch measure the
//! GPU's work alone. Without it, an idle GPU records the start event at once
//! and then waits for the host thread to get round to the launch: on a busy
//! host (a batch, with the simulator's replays on every core) that wait was
//! up to 30 % of a 0.1 ms kernel (H100, ex01), and the timing loop had to
//! batch many launches per sample, each reading what the one before wrote.
//! With the gate every sample is one launch from a fresh start, and the wait
//! before it is outside the events.
//!
//! Hand-written PTX, like [`super::compare`], so that it loads without a
//! compiler on any driver from CUDA 11 on and any GPU from sm_75 on. One
//! thread polls a word of host memory mapped into the device until the host
//! sets it, or until `max_ns` of the GPU's global timer have passed, so a
//! host that never opens the gate cannot leave the GPU stuck.

/// The kernel's name in [`PTX`].
pub const KERNEL: &str = "cuda_lab_gate";

/// The longest the gate waits for the host, in nanoseconds: far longer than
/// queuing one launch and two events takes, far shorter than any time limit.
pub const MAX_WAIT_NS: u64 = 200_000_000;

/// `cuda_lab_gate(volatile const u32 *open, u64 max_ns)`.
pub const PTX: &str = r#"
.version 7.0
.target sm_75
.address_size 64

.visible .entry cuda_lab_gate(
	.param .u64 p_open,
	.param .u64 p_max_ns
)
{
	.reg .pred %p<3>;
	.reg .b32 %r<2>;
	.reg .b64 %rd<6>;

	ld.param.u64 %rd1, [p_open];
	ld.param.u64 %rd2, [p_max_ns];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u64 %rd3, %globaltimer;
closed:
	ld.volatile.global.u32 %r1, [%rd1];
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra open;
	mov.u64 %rd4, %globaltimer;
	sub.s64 %rd5, %rd4, %rd3;
	setp.lt.u64 %p2, %rd5, %rd2;
	@%p2 bra closed;
open:
	ret;
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_parses_and_names_its_kernel() {
        let module = ptx_sim::parse_module(PTX).expect("the gate's PTX parses");
        assert!(PTX.contains(&format!(".entry {KERNEL}(")));
        drop(module);
    }
}
