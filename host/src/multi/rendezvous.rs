//! The host's own barrier between the threads that drive several GPUs, one
//! thread each ([`Rendezvous`]): it never hangs, and it names the GPUs that
//! never came.

use crate::error::{Error, Result};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A barrier for the host threads of `ranks` devices (one thread each) that
/// never hangs: a thread that fails calls [`abandon`](Self::abandon), and
/// every wait then fails at once; a wait longer than the timeout fails
/// naming the ranks that never came.
pub struct Rendezvous {
    ranks: u32,
    timeout: Duration,
    state: Mutex<Meeting>,
    changed: Condvar,
}

struct Meeting {
    arrived: Vec<bool>,
    round: u64,
    abandoned_by: Option<u32>,
}

impl Rendezvous {
    /// A meeting point for `ranks` host threads; a wait gives up after `timeout`.
    pub fn new(ranks: u32, timeout: Duration) -> Rendezvous {
        let state = Meeting { arrived: vec![false; ranks as usize], round: 0, abandoned_by: None };
        Rendezvous { ranks, timeout, state: Mutex::new(state), changed: Condvar::new() }
    }

    /// How many ranks meet.
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    /// Waits until every rank has reached `step`.
    pub fn wait(&self, rank: u32, step: &'static str) -> Result<()> {
        let mut m = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(rank) = m.abandoned_by {
            return Err(Error::PeerStopped { rank });
        }
        m.arrived[rank as usize] = true;
        if m.arrived.iter().all(|&a| a) {
            m.arrived.fill(false);
            m.round += 1;
            self.changed.notify_all();
            return Ok(());
        }
        let (round, start) = (m.round, Instant::now());
        loop {
            let left = self.timeout.saturating_sub(start.elapsed());
            m = self.changed.wait_timeout(m, left).unwrap_or_else(|e| e.into_inner()).0;
            if m.round != round {
                return Ok(());
            }
            if let Some(rank) = m.abandoned_by {
                return Err(Error::PeerStopped { rank });
            }
            if start.elapsed() >= self.timeout {
                let missing = m.arrived.iter().enumerate().filter(|(_, a)| !**a).map(|(r, _)| r as u32).collect();
                m.abandoned_by = Some(rank);
                self.changed.notify_all();
                return Err(Error::RanksDidNotArrive { step, missing, seconds: self.timeout.as_secs_f64() });
            }
        }
    }

    /// Rank `rank` stops: every wait, now and later, fails.
    pub fn abandon(&self, rank: u32) {
        let mut m = self.state.lock().unwrap_or_else(|e| e.into_inner());
        m.abandoned_by.get_or_insert(rank);
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendezvous_meets_abandons_and_names_who_never_came() {
        let r = Rendezvous::new(3, Duration::from_millis(200));
        std::thread::scope(|s| {
            for rank in 0..3 {
                let r = &r;
                s.spawn(move || r.wait(rank, "a").unwrap());
            }
        });
        let r = Rendezvous::new(3, Duration::from_millis(100));
        let (first, second) = std::thread::scope(|s| {
            let zero = s.spawn(|| r.wait(0, "b"));
            let two = r.wait(2, "b");
            (zero.join().unwrap(), two)
        });
        // Whichever waiter times out first names the missing GPU; the other
        // may instead hear that it stopped (on a loaded machine, either).
        let texts = [first.unwrap_err().to_string(), second.unwrap_err().to_string()];
        assert!(texts.iter().any(|t| t.contains("GPU 1 did not reach b within 0.1 s")), "{texts:?}");
        let r = Rendezvous::new(2, Duration::from_secs(60));
        r.abandon(1);
        assert!(matches!(r.wait(0, "c"), Err(Error::PeerStopped { rank: 1 })));
    }
}
