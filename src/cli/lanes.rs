//! `ingest`'s events in hand, in one lane per service: an event is applied once its pack
//! is fetched and every earlier event of its service is applied, so one slow pack URL
//! holds up only its own service. An event of no service (`gateway.online`, which pulls
//! every pack) waits for every earlier event and holds up every later one.
//!
//! Fetches start in the order events arrived, at most `fetches` at a time and one per
//! service (a service's next pack is fetched once the one before it is applied, so a slow
//! service never holds more than one slot), and a fetched pack keeps its slot until its
//! event is applied: at most `fetches` packs are held in memory. The earliest event not
//! applied always gets a slot when one frees (the slot of the event before it in its
//! service, or the oldest free one), so the lanes never deadlock.

use std::collections::{BTreeMap, VecDeque};

/// Which events an event must wait for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lane {
    /// The earlier events of this service (repository code).
    Service(String),
    /// Every earlier event (and every later one waits for it).
    All,
}

struct Item<T> {
    lane: Lane,
    /// Needs a fetch before it can be applied.
    needs_fetch: bool,
    /// Holds a fetch slot (fetching or fetched).
    slot: bool,
    /// Fetched (or needs no fetch): may be applied when its turn comes.
    ready: bool,
    value: T,
}

/// Events in hand, keyed by arrival number.
pub struct Lanes<T> {
    items: BTreeMap<u64, Item<T>>,
    /// Arrival numbers waiting for a fetch slot, oldest first.
    waiting: VecDeque<u64>,
    next: u64,
    /// Slots in use.
    busy: usize,
    /// Most slots at once (at least 1).
    fetches: usize,
}

impl<T> Lanes<T> {
    /// No event in hand; at most `fetches` packs fetched (or fetching) at once.
    pub fn new(fetches: usize) -> Self {
        Lanes {
            items: BTreeMap::new(),
            waiting: VecDeque::new(),
            next: 0,
            busy: 0,
            fetches: fetches.max(1),
        }
    }

    /// Takes an event in hand; returns its arrival number.
    pub fn push(&mut self, lane: Lane, needs_fetch: bool, value: T) -> u64 {
        let id = self.next;
        self.next += 1;
        if needs_fetch {
            self.waiting.push_back(id);
        }
        let item = Item {
            lane,
            needs_fetch,
            slot: false,
            ready: !needs_fetch,
            value,
        };
        self.items.insert(id, item);
        id
    }

    /// Events whose fetch may start now (each takes a slot), oldest first: while a slot
    /// is free, the oldest waiting event whose service has no earlier event holding or
    /// waiting for a slot.
    pub fn start_fetches(&mut self) -> Vec<u64> {
        let mut taken: Vec<&Lane> = self
            .items
            .values()
            .filter(|i| i.slot)
            .map(|i| &i.lane)
            .collect();
        let mut started = Vec::new();
        let mut still = VecDeque::new();
        for id in std::mem::take(&mut self.waiting) {
            let Some(item) = self.items.get(&id) else {
                continue;
            };
            if self.busy + started.len() < self.fetches && !taken.contains(&&item.lane) {
                started.push(id);
            } else {
                still.push_back(id);
            }
            taken.push(&item.lane);
        }
        self.waiting = still;
        for id in &started {
            if let Some(item) = self.items.get_mut(id) {
                item.slot = true;
                self.busy += 1;
            }
        }
        started
    }

    /// The event `id`, when it is in hand.
    pub fn get(&self, id: u64) -> Option<&T> {
        self.items.get(&id).map(|i| &i.value)
    }

    /// The event `id`, to store what its fetch brought; `None` when it is not in hand.
    pub fn fetched(&mut self, id: u64) -> Option<&mut T> {
        let item = self.items.get_mut(&id)?;
        item.ready = true;
        Some(&mut item.value)
    }

    /// Takes out the oldest event that may be applied now: fetched, and no earlier event
    /// of its lane (nor of [`Lane::All`]) in hand; for [`Lane::All`], no earlier event at
    /// all. Its slot is freed.
    pub fn take_ready(&mut self) -> Option<(u64, T)> {
        let mut blocked: Vec<&str> = Vec::new();
        let mut id = None;
        for (&at, item) in &self.items {
            let clear = match &item.lane {
                Lane::All => at == *self.items.keys().next()?,
                Lane::Service(s) => !blocked.contains(&s.as_str()),
            };
            if clear && item.ready {
                id = Some(at);
                break;
            }
            match &item.lane {
                Lane::All => break,
                Lane::Service(s) => blocked.push(s),
            }
        }
        let id = id?;
        let item = self.items.remove(&id)?;
        if item.slot {
            self.busy -= 1;
        }
        debug_assert!(item.ready || !item.needs_fetch);
        Some((id, item.value))
    }

    /// Takes out every event in hand, oldest first (to hand them back on a stop).
    pub fn drain(&mut self) -> Vec<T> {
        self.waiting.clear();
        self.busy = 0;
        std::mem::take(&mut self.items)
            .into_values()
            .map(|i| i.value)
            .collect()
    }

    /// Events in hand.
    pub fn len(&self) -> usize {
        self.items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svc(s: &str) -> Lane {
        Lane::Service(s.to_string())
    }

    fn ready(l: &mut Lanes<&'static str>) -> Vec<&'static str> {
        std::iter::from_fn(|| l.take_ready().map(|(_, v)| v)).collect()
    }

    #[test]
    fn a_slow_fetch_holds_up_only_its_own_service() {
        let mut l = Lanes::new(4);
        let a1 = l.push(svc("a"), true, "a1");
        let b1 = l.push(svc("b"), true, "b1");
        let a2 = l.push(svc("a"), true, "a2");
        // a2 is fetched once a1 is applied
        assert_eq!(l.start_fetches(), vec![a1, b1]);
        // b1 is fetched; a1 is slow
        l.fetched(b1);
        assert_eq!(ready(&mut l), ["b1"]);
        assert!(l.start_fetches().is_empty());
        l.fetched(a1);
        assert_eq!(ready(&mut l), ["a1"]);
        assert_eq!(l.start_fetches(), vec![a2]);
        l.fetched(a2);
        assert_eq!(ready(&mut l), ["a2"]);
        assert_eq!(l.len(), 0);
    }

    #[test]
    fn an_event_of_every_service_waits_for_all_before_it_and_holds_up_all_after_it() {
        let mut l = Lanes::new(4);
        let a1 = l.push(svc("a"), true, "a1");
        l.push(Lane::All, false, "online");
        let b1 = l.push(svc("b"), true, "b1");
        l.push(svc("c"), false, "c-leaves");
        l.start_fetches();
        l.fetched(b1);
        assert_eq!(ready(&mut l), Vec::<&str>::new());
        l.fetched(a1);
        assert_eq!(ready(&mut l), ["a1", "online", "b1", "c-leaves"]);
    }

    #[test]
    fn fetches_are_bounded_one_per_service_and_a_slot_is_freed_when_applied() {
        let mut l = Lanes::new(2);
        let a: Vec<u64> = (0..3).map(|_| l.push(svc("a"), true, "a")).collect();
        let b = l.push(svc("b"), true, "b");
        let c = l.push(svc("c"), true, "c");
        // a slow service holds one slot: the other goes to b
        assert_eq!(l.start_fetches(), [a[0], b]);
        assert!(l.start_fetches().is_empty());
        l.fetched(b);
        assert_eq!(l.take_ready().map(|(i, _)| i), Some(b));
        // a's next waits for a's first; c is next
        assert_eq!(l.start_fetches(), [c]);
        l.fetched(a[0]);
        assert_eq!(l.take_ready().map(|(i, _)| i), Some(a[0]));
        assert_eq!(l.start_fetches(), [a[1]]);
        l.fetched(a[1]);
        assert_eq!(l.take_ready().map(|(i, _)| i), Some(a[1]));
        assert_eq!(l.start_fetches(), [a[2]]);
    }

    #[test]
    fn an_event_behind_a_barrier_never_takes_the_slot_of_one_before_it() {
        // a leaves (no fetch) then registers again; every later service waits behind
        // `gateway.online`: a's register must still get a slot
        let mut l = Lanes::new(1);
        l.push(svc("a"), false, "a-leaves");
        let a2 = l.push(svc("a"), true, "a2");
        l.push(Lane::All, false, "online");
        let c = l.push(svc("c"), true, "c");
        assert_eq!(l.start_fetches(), [a2]);
        assert_eq!(ready(&mut l), ["a-leaves"]);
        l.fetched(a2);
        assert_eq!(ready(&mut l), ["a2", "online"]);
        assert_eq!(l.start_fetches(), [c]);
        l.fetched(c);
        assert_eq!(ready(&mut l), ["c"]);
    }

    #[test]
    fn drain_hands_back_every_event_oldest_first() {
        let mut l = Lanes::new(1);
        l.push(svc("a"), true, "a1");
        l.push(svc("b"), false, "b1");
        l.start_fetches();
        assert_eq!(l.drain(), ["a1", "b1"]);
        assert_eq!(l.len(), 0);
        assert!(l.start_fetches().is_empty());
    }
}
