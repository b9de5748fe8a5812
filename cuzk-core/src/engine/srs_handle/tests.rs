use super::*;
use crate::circuits::CircuitSpec;
use crate::srs::ReadOptions;
use std::path::{Path, PathBuf};

/// A small SRS written to `dir`, and a re-read of that file.
fn small_params(dir: &Path) -> (Parameters, PathBuf, Reread) {
    let spec: CircuitSpec = "synthetic:64:2".parse().unwrap();
    let params = crate::groth16::generate_random_parameters(spec.blank(), &mut rand::thread_rng()).unwrap();
    let path = dir.join("c.params");
    params.write_file(&path).unwrap();
    let file = path.clone();
    let reread: Reread =
        Arc::new(move || Parameters::read_file(&file, ReadOptions::default()).map_err(|e| CircuitError::bad_params(e.to_string())));
    (params, path, reread)
}

/// The handle's points loaded under `budget`, as the SRS manager loads them.
fn handle(budget: &Arc<MemoryBudget>, params: Parameters, reread: Option<Reread>) -> Arc<SrsHandle> {
    let memory = budget.try_reserve(params.size_bytes() as u64, Purpose::Srs).unwrap();
    SrsHandle::new("c", params, Some(memory), reread)
}

#[test]
fn released_points_are_read_again_from_their_file_under_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let (params, _, reread) = small_params(dir.path());
    let bytes = params.size_bytes() as u64;
    let budget = MemoryBudget::new(4 * bytes);
    let h = handle(&budget, params.clone(), Some(reread));
    assert_eq!((h.bytes(), h.host_bytes(), budget.usage().srs_bytes), (bytes, bytes, bytes));
    // The shape stays with the points gone.
    assert_eq!((h.vk(), h.counts()), (&params.vk, params.counts()));

    assert!(h.release_host_points());
    assert!(!h.release_host_points(), "released once");
    assert_eq!((h.host_bytes(), budget.usage().srs_bytes), (0, 0));
    assert!(h.host_points_now().is_none());
    let st = h.state();
    assert!(!st.in_memory && !st.kept);

    let again = h.host_points().unwrap();
    assert_eq!(**again, params, "the same points, read from the file");
    assert_eq!((h.host_bytes(), budget.usage().srs_bytes), (bytes, bytes));
    let st = h.state();
    assert!(st.in_memory && st.kept);
    assert_eq!((st.releases, st.rereads), (1, 1));
    // Kept from then on: another caller gets the same copy.
    assert!(Arc::ptr_eq(&again, &h.host_points().unwrap()));
    assert_eq!(h.state().rereads, 1);
}

#[test]
fn points_in_use_when_released_keep_their_reservation_until_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let (params, _, reread) = small_params(dir.path());
    let bytes = params.size_bytes() as u64;
    let budget = MemoryBudget::new(4 * bytes);
    let h = handle(&budget, params, Some(reread));
    let in_use = h.host_points().unwrap();
    assert!(h.release_host_points());
    // Still in memory, and counted, while the caller holds them.
    assert_eq!((h.host_bytes(), budget.usage().srs_bytes), (bytes, bytes));
    assert!(!h.state().kept);
    // A caller now gets that copy back, not a second one.
    let back = h.host_points().unwrap();
    assert!(Arc::ptr_eq(&in_use, &back));
    assert_eq!(h.state().rereads, 0);
    assert!(h.state().kept);
    assert!(h.release_host_points());
    drop((in_use, back));
    assert_eq!((h.host_bytes(), budget.usage().srs_bytes), (0, 0));
}

#[test]
fn a_reread_without_room_in_the_budget_is_refused_not_allocated() {
    let dir = tempfile::tempdir().unwrap();
    let (params, _, reread) = small_params(dir.path());
    let bytes = params.size_bytes() as u64;
    let budget = MemoryBudget::new(bytes + bytes / 2);
    let h = handle(&budget, params, Some(reread));
    assert!(h.release_host_points());
    let other = budget.try_reserve(bytes, Purpose::Partition).unwrap();
    let e = h.host_points().err().unwrap();
    assert_eq!(e, HostPointsError::NoRoom { circuit_id: "c".into(), bytes });
    assert!(e.to_string().contains("beyond the memory budget"), "{e}");
    assert_eq!(e.kind(), ErrorKind::ResourceExhausted);
    assert_eq!((h.host_bytes(), budget.usage().used_bytes), (0, bytes));
    drop(other);
    assert!(h.host_points().is_ok());
    assert_eq!(budget.usage().srs_bytes, bytes);
}

#[test]
fn a_file_that_now_holds_another_key_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (params, path, reread) = small_params(dir.path());
    let budget = MemoryBudget::new(1 << 30);
    let h = handle(&budget, params, Some(reread));
    assert!(h.release_host_points());
    // Another setup of the same circuit written over the file.
    let spec: CircuitSpec = "synthetic:64:2".parse().unwrap();
    crate::groth16::generate_random_parameters(spec.blank(), &mut rand::thread_rng()).unwrap().write_file(&path).unwrap();
    let e = h.host_points().err().unwrap();
    assert_eq!(e.to_string(), "cannot read the SRS c again: its file now holds another key than the one loaded");
    assert_eq!(e.kind(), ErrorKind::BadParams);
    // Nothing stays reserved for the refused copy.
    assert_eq!(budget.usage().srs_bytes, 0);
    std::fs::remove_file(&path).unwrap();
    let e = h.host_points().err().unwrap();
    assert!(matches!(e, HostPointsError::Reread { .. }), "{e}");
    assert_eq!(e.kind(), ErrorKind::BadParams, "{e}");
}

#[test]
fn points_that_cannot_be_read_again_are_never_released() {
    let dir = tempfile::tempdir().unwrap();
    let (params, _, _) = small_params(dir.path());
    let budget = MemoryBudget::new(1 << 30);
    let h = handle(&budget, params, None);
    assert!(!h.releasable());
    assert!(!h.release_host_points());
    assert!(h.host_points_now().is_some());
    assert_eq!(h.host_bytes(), h.bytes());
}
