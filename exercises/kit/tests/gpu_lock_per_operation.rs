//! The GPU lock as batch workers take it (`kit::backend::locked`): per device
//! operation, a launch until a wait sees its kernels end, and for good after a
//! kernel that never ended. A process of its own: it sets the lock's variable.

use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kit::backend::locked::Locked;
use kit::backend::{Arg, BResult, Backend, BackendError, DevPtr, DeviceInfo, LaunchConfig, ModuleId};
use kit::gpu_lock;

/// A device whose waits answer what the test says.
struct Fake {
    info: DeviceInfo,
    next_wait: Mutex<BResult<()>>,
}

impl Backend for Fake {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn load_module(&self, _: &str) -> BResult<ModuleId> {
        Ok(ModuleId(0))
    }
    fn has_kernel(&self, _: ModuleId, _: &str) -> BResult<bool> {
        Ok(true)
    }
    fn alloc(&self, _: usize) -> BResult<DevPtr> {
        Ok(256)
    }
    fn free(&self, _: DevPtr) {}
    fn write(&self, _: DevPtr, _: &[u8]) -> BResult<()> {
        Ok(())
    }
    fn read(&self, _: DevPtr, _: &mut [u8]) -> BResult<()> {
        Ok(())
    }
    fn fill(&self, _: DevPtr, _: u8, _: usize) -> BResult<()> {
        Ok(())
    }
    fn write_symbol(&self, _: ModuleId, _: &str, _: &[u8]) -> BResult<()> {
        Ok(())
    }
    fn launch(&self, _: ModuleId, _: &str, _: &LaunchConfig, _: &[Arg]) -> BResult<()> {
        Ok(())
    }
    fn synchronize(&self, _: Duration) -> BResult<()> {
        std::mem::replace(&mut *self.next_wait.lock().unwrap(), Ok(()))
    }
    fn time_ms(&self, _: &mut dyn FnMut() -> BResult<()>, _: Duration) -> BResult<f32> {
        Ok(1.0)
    }
}

fn device(next_wait: BResult<()>) -> Box<dyn Backend> {
    // The simulator's description: nothing here reads it.
    let info = kit::backend::sim::SimBackend::new().info().clone();
    Locked::if_shared(Box::new(Fake { info, next_wait: Mutex::new(next_wait) }))
}

/// Whether another process (here: thread, with its own lock files) could start
/// timing within `wait`.
fn could_time_within(wait: Duration) -> bool {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _sole = gpu_lock::exclusive();
        let _ = tx.send(());
    });
    rx.recv_timeout(wait).is_ok()
}

#[test]
fn the_gpu_is_held_per_operation_a_launch_until_its_end_and_a_stuck_kernel_for_good() {
    let lock = std::env::temp_dir().join(format!("gpu-lock-per-operation-{}", std::process::id()));
    std::env::set_var(gpu_lock::ENV, &lock);
    let short = Duration::from_millis(300);
    let cfg = LaunchConfig::linear(1, 1);

    // Between operations nothing is held: the CPU work of a check lets others time.
    let gpu = device(Ok(()));
    gpu.write(256, &[0; 4]).unwrap();
    assert!(could_time_within(Duration::from_secs(5)), "the lock outlived an upload");

    // A launched kernel holds it until a wait sees it end.
    gpu.launch(ModuleId(0), "k", &cfg, &[]).unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _sole = gpu_lock::exclusive();
        tx.send(Instant::now()).unwrap();
    });
    std::thread::sleep(short);
    let ended = Instant::now();
    gpu.synchronize(Duration::from_secs(1)).unwrap();
    assert!(rx.recv().unwrap() >= ended, "another timed while a kernel launched here still ran");

    // A kernel that never ended holds it until the process is gone.
    let (exit, exited) = mpsc::channel::<()>();
    let (stuck, is_stuck) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let gpu = device(Err(BackendError::Timeout("1.0 s".into())));
        gpu.launch(ModuleId(0), "k", &cfg, &[]).unwrap();
        assert!(gpu.synchronize(Duration::from_secs(1)).is_err());
        stuck.send(()).unwrap();
        let _ = exited.recv();
    });
    is_stuck.recv().unwrap();
    assert!(!could_time_within(short), "another timed beside a kernel that never ended");
    drop(exit);
    worker.join().unwrap();
    assert!(could_time_within(Duration::from_secs(5)), "the lock outlived the process of the stuck kernel");
    for file in [lock.clone(), lock.with_extension("turnstile")] {
        let _ = std::fs::remove_file(file);
    }
}
