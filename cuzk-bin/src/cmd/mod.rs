pub mod bench;
pub mod demo;
pub mod prove;
pub mod setup;
pub mod timeline;
pub mod verify;
