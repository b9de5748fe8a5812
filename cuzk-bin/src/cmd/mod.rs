pub mod batch;
pub mod bench;
mod bench_spmv;
pub mod daemon_info;
pub mod demo;
#[cfg(feature = "filecoin")]
pub mod filecoin_setup;
#[cfg(feature = "filecoin")]
pub mod filecoin_workload;
pub mod pce;
pub mod proof_request;
pub mod prove;
pub mod setup;
pub mod single;
pub mod timeline;
pub mod verify;
