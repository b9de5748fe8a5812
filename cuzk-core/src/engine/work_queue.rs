//! A bounded, closeable priority queue between pipeline stages: pop gives
//! the smallest item (the pipeline orders by priority, then job age, then
//! partition), push blocks while full, and after close the consumers
//! drain what is left and then see None.

use std::collections::BinaryHeap;
use std::cmp::Reverse;
use std::sync::{Condvar, Mutex};

struct State<T> {
    heap: BinaryHeap<Reverse<T>>,
    closed: bool,
}

pub struct WorkQueue<T: Ord> {
    state: Mutex<State<T>>,
    not_empty: Condvar,
    not_full: Condvar,
    capacity: usize,
}

impl<T: Ord> WorkQueue<T> {
    /// `capacity` = 0 means unbounded.
    pub fn new(capacity: usize) -> Self {
        Self {
            state: Mutex::new(State { heap: BinaryHeap::new(), closed: false }),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
            capacity: if capacity == 0 { usize::MAX } else { capacity },
        }
    }

    /// Blocks while full. After close the item is handed back.
    pub fn push(&self, item: T) -> Result<(), T> {
        let mut st = self.state.lock().unwrap();
        while st.heap.len() >= self.capacity && !st.closed {
            st = self.not_full.wait(st).unwrap();
        }
        if st.closed {
            return Err(item);
        }
        st.heap.push(Reverse(item));
        self.not_empty.notify_one();
        Ok(())
    }

    /// Blocks for the smallest item; None once closed and drained.
    pub fn pop(&self) -> Option<T> {
        let mut st = self.state.lock().unwrap();
        loop {
            if let Some(Reverse(item)) = st.heap.pop() {
                self.not_full.notify_one();
                return Some(item);
            }
            if st.closed {
                return None;
            }
            st = self.not_empty.wait(st).unwrap();
        }
    }

    pub fn close(&self) {
        self.state.lock().unwrap().closed = true;
        self.not_empty.notify_all();
        self.not_full.notify_all();
    }

    pub fn len(&self) -> usize {
        self.state.lock().unwrap().heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn pops_in_order_and_drains_after_close() {
        let q = WorkQueue::new(0);
        for x in [5, 1, 3] {
            q.push(x).unwrap();
        }
        q.close();
        assert_eq!(q.push(9), Err(9));
        assert_eq!((q.pop(), q.pop(), q.pop(), q.pop()), (Some(1), Some(3), Some(5), None));
    }

    #[test]
    fn push_blocks_while_full() {
        let q = Arc::new(WorkQueue::new(1));
        q.push(1).unwrap();
        let q2 = q.clone();
        let t = std::thread::spawn(move || q2.push(2));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop(), Some(1));
        t.join().unwrap().unwrap();
        assert_eq!(q.pop(), Some(2));
    }
}
