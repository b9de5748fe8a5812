pub mod bench;
pub mod demo;
#[cfg(feature = "filecoin")]
pub mod filecoin_setup;
pub mod prove;
pub mod setup;
pub mod timeline;
pub mod verify;
