//! Prometheus text metrics: decisions by verdict, decision latency, pending
//! requests. Lock-free counters: the decide path must not wait for them.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Histogram bucket bounds, seconds.
const BUCKETS: [f64; 10] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.1,
];

#[derive(Default)]
pub struct Metrics {
    allow: AtomicU64,
    ask: AtomicU64,
    deny: AtomicU64,
    errors: AtomicU64,
    /// Cumulative counts per bucket (`le`), then +Inf.
    buckets: [AtomicU64; BUCKETS.len() + 1],
    sum_micros: AtomicU64,
    pub pending: AtomicU64,
}

impl Metrics {
    pub fn record(&self, verdict: Option<portcullis_policy::Verdict>, took: Duration) {
        use portcullis_policy::Verdict;
        match verdict {
            Some(Verdict::Allow) => &self.allow,
            Some(Verdict::Ask) => &self.ask,
            Some(Verdict::Deny) => &self.deny,
            None => &self.errors,
        }
        .fetch_add(1, Relaxed);
        let secs = took.as_secs_f64();
        let i = BUCKETS
            .iter()
            .position(|b| secs <= *b)
            .unwrap_or(BUCKETS.len());
        if let Some(bucket) = self.buckets.get(i) {
            bucket.fetch_add(1, Relaxed);
        }
        self.sum_micros
            .fetch_add(took.as_micros().min(u64::MAX as u128) as u64, Relaxed);
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        s.push_str("# HELP portcullis_decisions_total Decisions made, by verdict (error: none could be made).\n");
        s.push_str("# TYPE portcullis_decisions_total counter\n");
        for (v, c) in [
            ("allow", &self.allow),
            ("ask", &self.ask),
            ("deny", &self.deny),
            ("error", &self.errors),
        ] {
            let _ = writeln!(
                s,
                "portcullis_decisions_total{{verdict=\"{v}\"}} {}",
                c.load(Relaxed)
            );
        }
        s.push_str("# HELP portcullis_decision_seconds Time to decide one call over HTTP.\n");
        s.push_str("# TYPE portcullis_decision_seconds histogram\n");
        let mut cumulative = 0;
        for (b, count) in BUCKETS.iter().zip(self.buckets.iter()) {
            cumulative += count.load(Relaxed);
            let _ = writeln!(
                s,
                "portcullis_decision_seconds_bucket{{le=\"{b}\"}} {cumulative}"
            );
        }
        cumulative += self
            .buckets
            .get(BUCKETS.len())
            .map_or(0, |c| c.load(Relaxed));
        let _ = writeln!(
            s,
            "portcullis_decision_seconds_bucket{{le=\"+Inf\"}} {cumulative}"
        );
        let _ = writeln!(
            s,
            "portcullis_decision_seconds_sum {}",
            self.sum_micros.load(Relaxed) as f64 / 1e6
        );
        let _ = writeln!(s, "portcullis_decision_seconds_count {cumulative}");
        s.push_str(
            "# HELP portcullis_pending_requests Permission requests waiting for a person.\n",
        );
        s.push_str("# TYPE portcullis_pending_requests gauge\n");
        let _ = writeln!(
            s,
            "portcullis_pending_requests {}",
            self.pending.load(Relaxed)
        );
        s
    }
}
