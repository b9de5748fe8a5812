//! The C ABI's error and lock behaviour, which needs no GPU: errors come
//! back as values with a message (nothing aborts), and the per-GPU locks
//! work from several threads. On a GPU, also page-locking host memory.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use cuzk_sys::{DeviceBuffer, ErrorCode, GpuLocks, NttContext};

#[test]
fn errors_cross_the_ffi_as_values_with_messages() {
    let err = NttContext::new(9999).err().expect("device 9999 does not exist");
    assert!(!err.message.is_empty(), "{err:?}");
    // Without a driver (CI) the CUDA build reports device-lost: no device
    // can run anything. With one, device 9999 is an invalid ordinal.
    assert!(matches!(err.code, ErrorCode::Cuda | ErrorCode::DeviceLost | ErrorCode::NoCuda), "{err:?}");
    let err = DeviceBuffer::<u8>::new(9999, 16).err().expect("device 9999 does not exist");
    assert!(!err.message.is_empty(), "{err:?}");
}

#[test]
fn gpu_locks_exclude_and_release() {
    if !cuzk_sys::AVAILABLE {
        cuzk_sys::test_skip("cuzk-sys built without CUDA (gpu_locks_exclude_and_release)");
        return;
    }
    let locks = Arc::new(GpuLocks::new(0).unwrap());
    assert_eq!(locks.ordinal(), 0);
    let inside = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (locks, inside) = (locks.clone(), inside.clone());
            std::thread::spawn(move || {
                for _ in 0..1000 {
                    let _g = locks.lock_compute().unwrap();
                    assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders of compute");
                    inside.fetch_sub(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    // mem is independent of compute: holdable while another thread computes.
    let m = locks.lock_mem().unwrap();
    for t in threads {
        t.join().unwrap();
    }
    drop(m);
    let _m = locks.lock_mem().unwrap();
    let _c = locks.lock_compute().unwrap();
}

/// Page-locking existing host memory (HostRegistration): uploads from it
/// arrive intact, the same range cannot be registered twice while held, and
/// dropping the registration releases it (it can be registered again).
#[test]
fn host_registration_pins_and_releases() {
    let Some(dev) = cuzk_sys::test_device("host_registration_pins_and_releases") else { return };
    let n = (96 << 20) / 8 + 3; // over 96 MiB, not a whole number of pages
    let data: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    let reg = unsafe { cuzk_sys::HostRegistration::new(&data) }.unwrap();
    assert_eq!(reg.bytes(), n * 8);
    assert!(unsafe { cuzk_sys::HostRegistration::new(&data) }.is_err(), "registered twice");
    let stream = cuzk_sys::Stream::new(dev).unwrap();
    let mut buf = DeviceBuffer::<u64>::new(dev, n).unwrap();
    buf.copy_from_host(&stream, 0, &data).unwrap();
    let mut back = vec![0u64; n];
    buf.copy_to_host(&stream, 0, &mut back).unwrap();
    stream.synchronize().unwrap();
    assert!(back == data, "upload from registered memory differs");
    drop(reg);
    let again = unsafe { cuzk_sys::HostRegistration::new(&data) }.unwrap();
    drop(again);
    // Nothing to pin in an empty slice.
    assert_eq!(unsafe { cuzk_sys::HostRegistration::new::<u64>(&[]) }.unwrap().bytes(), 0);
}

/// Urgent streams are the calling thread's setting: nested guards restore
/// what was before them, another thread starts with it off, and (on a GPU)
/// a stream created under the guard has the device's greatest priority,
/// one created after it the default.
#[test]
fn urgent_streams_are_the_threads_setting() {
    use cuzk_sys::{Stream, UrgentStreams};
    assert!(!UrgentStreams::current(), "a thread starts with default streams");
    {
        let _on = UrgentStreams::set(true);
        assert!(UrgentStreams::current());
        std::thread::spawn(|| assert!(!UrgentStreams::current(), "another thread keeps its own setting")).join().unwrap();
        {
            let _off = UrgentStreams::set(false);
            assert!(!UrgentStreams::current());
        }
        assert!(UrgentStreams::current(), "the inner guard restored the outer setting");
    }
    assert!(!UrgentStreams::current(), "the outer guard restored the default");

    let Some(dev) = cuzk_sys::test_device("urgent_streams_are_the_threads_setting (stream priorities)") else { return };
    let urgent = {
        let _on = UrgentStreams::set(true);
        Stream::new(dev).unwrap()
    };
    let normal = Stream::new(dev).unwrap();
    let (own, greatest) = urgent.priority().unwrap();
    assert_eq!(own, greatest, "a stream created under the guard is at the greatest priority");
    let (own, _) = normal.priority().unwrap();
    assert_eq!(own, 0, "a stream created after it has the default");
    assert!(greatest < 0, "the device has priorities above the default: {greatest}");
}
