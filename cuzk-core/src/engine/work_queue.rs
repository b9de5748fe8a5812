//! A bounded, closeable priority queue between pipeline stages: pop gives
//! the smallest item (the pipeline orders by priority, then job age, then
//! partition), push blocks while full, and after close the consumers
//! drain what is left and then see None. A consumer may take only items
//! that pass a test ([`WorkQueue::pop_if`]: the workers kept for urgent
//! work), also one that looks beyond the queue ([`WorkQueue::pop_if_then`]:
//! a prover worker takes a unit only where its device is not busier than
//! an idle one), and urgent items may go past the capacity
//! ([`WorkQueue::push_past_capacity`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Condvar, Mutex};

struct State<T> {
    heap: BinaryHeap<Reverse<T>>,
    closed: bool,
    /// Consumers blocked in [`WorkQueue::pop_if`] and producers blocked in
    /// [`WorkQueue::push`]: tests wait for these instead of sleeping.
    blocked_pops: usize,
    blocked_pushes: usize,
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
            state: Mutex::new(State { heap: BinaryHeap::new(), closed: false, blocked_pops: 0, blocked_pushes: 0 }),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
            capacity: if capacity == 0 { usize::MAX } else { capacity },
        }
    }

    /// Blocks while full. After close the item is handed back.
    pub fn push(&self, item: T) -> Result<(), T> {
        self.push_within(item, self.capacity)
    }

    /// [`Self::push`] that does not wait for room: for urgent items, which
    /// must not queue behind a full queue of normal ones (their memory is
    /// accounted by the budget all the same).
    pub fn push_past_capacity(&self, item: T) -> Result<(), T> {
        self.push_within(item, usize::MAX)
    }

    fn push_within(&self, item: T, capacity: usize) -> Result<(), T> {
        let mut st = self.state.lock().unwrap();
        while st.heap.len() >= capacity && !st.closed {
            st.blocked_pushes += 1;
            st = self.not_full.wait(st).unwrap();
            st.blocked_pushes -= 1;
        }
        if st.closed {
            return Err(item);
        }
        st.heap.push(Reverse(item));
        // All: a consumer that takes only some items must not swallow the
        // wake-up meant for another.
        self.not_empty.notify_all();
        Ok(())
    }

    /// Blocks for the smallest item; None once closed and drained.
    pub fn pop(&self) -> Option<T> {
        self.pop_if(|_| true)
    }

    /// Blocks until the smallest item passes `wanted`, and takes it; None
    /// once closed and the smallest item left (if any) does not pass.
    pub fn pop_if(&self, wanted: impl Fn(&T) -> bool) -> Option<T> {
        self.pop_if_then(wanted, |_| {})
    }

    /// [`Self::pop_if`] for consumers whose `wanted` also looks at state
    /// beside the queue that taking an item changes (how busy each prover
    /// worker's device is): `took` records the take under the queue's lock,
    /// so the next consumer's `wanted` already sees it. Whoever changes
    /// that state otherwise calls [`Self::recheck`].
    pub fn pop_if_then(&self, wanted: impl Fn(&T) -> bool, took: impl FnOnce(&T)) -> Option<T> {
        let mut st = self.state.lock().unwrap();
        loop {
            if st.heap.peek().is_some_and(|Reverse(item)| wanted(item)) {
                let Reverse(item) = st.heap.pop().unwrap();
                took(&item);
                self.not_full.notify_one();
                if !st.heap.is_empty() {
                    // A consumer that passed over the old head may want the
                    // new one, or want it now that this take changed what
                    // its test looks at.
                    self.not_empty.notify_all();
                }
                return Some(item);
            }
            if st.closed {
                return None;
            }
            st.blocked_pops += 1;
            st = self.not_empty.wait(st).unwrap();
            st.blocked_pops -= 1;
        }
    }

    /// Wakes the blocked consumers to test the smallest item again: the
    /// state beside the queue that their `wanted` looks at has changed.
    pub fn recheck(&self) {
        // Under the lock: a consumer between its test and its wait would
        // miss the wake-up.
        let _st = self.state.lock().unwrap();
        self.not_empty.notify_all();
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

    /// Waits until `n` consumers (`pops`) or producers are blocked, having
    /// found nothing they want or no room: the point a test asserts from.
    #[cfg(test)]
    fn wait_blocked(&self, pops: bool, n: usize) {
        let t = std::time::Instant::now();
        loop {
            let st = self.state.lock().unwrap();
            if (if pops { st.blocked_pops } else { st.blocked_pushes }) >= n {
                return;
            }
            drop(st);
            assert!(t.elapsed() < std::time::Duration::from_secs(60), "never {n} blocked");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
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
    fn pop_if_waits_for_a_wanted_item_and_urgent_push_passes_capacity() {
        let q = Arc::new(WorkQueue::new(1));
        q.push(5).unwrap();
        let q2 = q.clone();
        let t = std::thread::spawn(move || q2.pop_if(|&x| x < 3));
        // Blocked: it saw 5 (pushed before it started) and did not take it.
        q.wait_blocked(true, 1);
        assert_eq!(q.len(), 1, "5 is not wanted");
        q.push_past_capacity(2).unwrap();
        assert_eq!(t.join().unwrap(), Some(2));
        assert_eq!(q.pop(), Some(5));
        q.close();
        assert_eq!(q.pop_if(|&x| x < 3), None);
    }

    #[test]
    fn recheck_wakes_a_consumer_whose_test_looks_beyond_the_queue() {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let q = Arc::new(WorkQueue::new(0));
        let (open, taken) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
        q.push(1).unwrap();
        let t = {
            let (q, open, taken) = (q.clone(), open.clone(), taken.clone());
            std::thread::spawn(move || {
                q.pop_if_then(
                    |_| open.load(Ordering::SeqCst),
                    |_| {
                        taken.fetch_add(1, Ordering::SeqCst);
                    },
                )
            })
        };
        q.wait_blocked(true, 1);
        assert_eq!((q.len(), taken.load(Ordering::SeqCst)), (1, 0), "not wanted while closed off");
        open.store(true, Ordering::SeqCst);
        q.recheck();
        assert_eq!(t.join().unwrap(), Some(1));
        assert_eq!(taken.load(Ordering::SeqCst), 1, "the take recorded");
    }

    #[test]
    fn push_blocks_while_full() {
        let q = Arc::new(WorkQueue::new(1));
        q.push(1).unwrap();
        let q2 = q.clone();
        let t = std::thread::spawn(move || q2.push(2));
        q.wait_blocked(false, 1);
        assert_eq!(q.len(), 1, "the second push waits for room");
        assert_eq!(q.pop(), Some(1));
        t.join().unwrap().unwrap();
        assert_eq!(q.pop(), Some(2));
    }
}
