//! What a backend can do ([`Capabilities`]), so that callers ask for an ability
//! (timing, watching accesses, ...) instead of comparing backend names. A
//! module of its own that imports nothing: the trait
//! ([`crate::backend::Backend::capabilities`]) and the backends
//! ([`crate::backend::cuda`], [`crate::backend::sim`]) all use it, and it
//! refers to none of them.

/// What a backend can do. Callers ask for an ability here, never compare
/// [`crate::backend::DeviceInfo::backend`] (a name, for display and reports only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Capabilities {
    /// [`crate::backend::Backend::time_ms`] times kernels with device events:
    /// performance checks and yardsticks can be timed.
    pub times_kernels: bool,
    /// Kernels run at hardware speed, so that large inputs (heavy checks) are
    /// affordable; an interpreter leaves them to a GPU.
    pub full_speed: bool,
    /// Every kernel access is watched as it happens: races on shared and
    /// global memory, out-of-bounds reads and writes
    /// ([`crate::backend::Backend::protect`]), uninitialised shared reads,
    /// barrier divergence, each named by the student's source line where the
    /// PTX has line info.
    pub checks_accesses: bool,
    /// [`crate::backend::Backend::take_profiles`] reports the memory behaviour
    /// of launches.
    pub profiles_memory: bool,
    /// [`crate::backend::Backend::kernel_resources`] answers with what the
    /// driver allocated.
    pub reports_kernel_resources: bool,
    /// [`crate::backend::DeviceInfo`]'s compute capability and limits are a
    /// real device's (the simulator's are nominal and would mislead an
    /// occupancy estimate).
    pub real_device_info: bool,
    /// Device memory is the host's: reading it back costs no transfer, so a
    /// host copy of a buffer is as cheap as a device copy.
    pub host_memory: bool,
    /// A fatal error ([`crate::backend::BackendError::is_fatal`]) leaves the
    /// device unusable for the rest of the process (a CUDA context), and its
    /// memory untrusted.
    pub loses_context: bool,
}

impl Capabilities {
    /// A backend that can do none of the above.
    pub const NONE: Self = Self {
        times_kernels: false,
        full_speed: false,
        checks_accesses: false,
        profiles_memory: false,
        reports_kernel_resources: false,
        real_device_info: false,
        host_memory: false,
        loses_context: false,
    };

    /// A real GPU ([`crate::backend::cuda`]): it times kernels at full speed
    /// and tells what the driver gave a kernel; it watches no access, and a
    /// fatal error loses its context.
    pub const CUDA: Self = Self {
        times_kernels: true,
        full_speed: true,
        checks_accesses: false,
        profiles_memory: false,
        reports_kernel_resources: true,
        real_device_info: true,
        host_memory: false,
        loses_context: true,
    };

    /// The simulator ([`crate::backend::sim`]): it watches every access and
    /// profiles memory, in the host's memory; it cannot time, is too slow for
    /// heavy checks, reports nominal limits, and starts every launch afresh
    /// (nothing fatal lasts).
    pub const SIM: Self = Self {
        times_kernels: false,
        full_speed: false,
        checks_accesses: true,
        profiles_memory: true,
        reports_kernel_resources: false,
        real_device_info: false,
        host_memory: true,
        loses_context: false,
    };

    /// The capabilities of the backend that reports itself as `backend`
    /// ([`crate::backend::DeviceInfo::backend`]: `"cuda"` is [`Self::CUDA`],
    /// `"sim"` [`Self::SIM`]), none for any other name (`"none"`, say). The
    /// one place a name turns into abilities: for a report read back, which
    /// keeps only the name, and for a backend that does not say
    /// ([`crate::backend::Backend::capabilities`]'s default). Each backend's
    /// tests check that its name maps to what it declares.
    pub fn of_named(backend: &str) -> Self {
        match backend {
            "cuda" => Self::CUDA,
            "sim" => Self::SIM,
            _ => Self::NONE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_no_backend_reports_can_do_nothing() {
        assert_eq!(Capabilities::default(), Capabilities::NONE);
        for name in ["none", "", "CUDA", "device-copies"] {
            assert_eq!(Capabilities::of_named(name), Capabilities::NONE, "{name:?}");
        }
    }
}
