//! A small key-value store.

use std::collections::HashMap;
use std::fmt;

/// Maximum number of entries.
pub const MAX_ENTRIES: usize = 1024;

static GREETING: &str = "grüß dich";

/// A store of values.
#[derive(Debug, Default)]
pub struct Store<T> {
    items: HashMap<String, T>,
}

impl<T: Clone> Store<T> {
    /// Creates an empty store.
    pub fn new() -> Self {
        Store { items: HashMap::new() }
    }

    pub fn get(&self, key: &str) -> Option<T> {
        fn helper() {}
        self.items.get(key).cloned()
    }
}

impl<T> fmt::Display for Store<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Store({})", self.items.len())
    }
}

impl<T> fmt::Debug for Store<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Store")
    }
}

pub trait Backend {
    fn load(&self, key: &str) -> Option<String>;

    fn name(&self) -> &'static str {
        "backend"
    }
}

pub enum Event {
    Put(String),
    Delete(String),
}

pub union Bits {
    int: u32,
    float: f32,
}

pub type Shared<T> = std::sync::Arc<T>;

macro_rules! log {
    ($msg:expr) => {
        println!("{}", $msg)
    };
}

mod tests {
    use super::*;

    #[test]
    fn new_is_empty() {
        let s: Store<u8> = Store::new();
        assert!(s.items.is_empty());
    }
}
