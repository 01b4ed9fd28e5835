//! Metric families: counters, gauges and histograms, each a set of series
//! told apart by their label values.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::text;

/// The type a family declares on its `# TYPE` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricType {
    /// A value that only goes up (and back to zero when the process restarts).
    Counter,
    /// A value that goes up and down.
    Gauge,
    /// Observations counted into cumulative buckets, with their sum and count.
    Histogram,
}

impl MetricType {
    /// The name the text format gives the type.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Counter => "counter",
            Self::Gauge => "gauge",
            Self::Histogram => "histogram",
        }
    }
}

/// A family the [`Registry`](super::Registry) renders.
pub trait Collector: Send + Sync {
    /// The family's metric name.
    fn name(&self) -> &'static str;
    /// The family's type.
    fn metric_type(&self) -> MetricType;
    /// The names of the family's labels, in the order its samples write them.
    fn label_names(&self) -> &[&'static str];
    /// Appends the family in the text format: `# HELP`, `# TYPE`, then its
    /// series ordered by label values.
    fn encode(&self, out: &mut String);
}

/// Locks `mutex`, carrying on past a panic in another holder: every update
/// leaves the series consistent, so a poisoned lock holds usable values.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn key<const N: usize>(values: [&str; N]) -> [String; N] {
    values.map(str::to_owned)
}

fn pairs<'a, const N: usize>(
    names: &'a [&'static str; N],
    values: &'a [String; N],
) -> [(&'a str, &'a str); N] {
    std::array::from_fn(|i| (names[i], values[i].as_str()))
}

/// Series with one number each: what counters and gauges share.
struct Scalars<const N: usize> {
    name: &'static str,
    help: &'static str,
    labels: [&'static str; N],
    series: Mutex<BTreeMap<[String; N], f64>>,
}

impl<const N: usize> Scalars<N> {
    fn new(name: &'static str, help: &'static str, labels: [&'static str; N]) -> Self {
        Self {
            name,
            help,
            labels,
            series: Mutex::new(BTreeMap::new()),
        }
    }

    fn update(&self, values: [&str; N], f: impl FnOnce(&mut f64)) {
        f(lock(&self.series).entry(key(values)).or_insert(0.0));
    }

    fn get(&self, values: [&str; N]) -> f64 {
        lock(&self.series).get(&key(values)).copied().unwrap_or(0.0)
    }

    fn encode(&self, out: &mut String, kind: MetricType) {
        text::push_header(out, self.name, self.help, kind.as_str());
        for (values, value) in lock(&self.series).iter() {
            text::push_sample(out, self.name, &pairs(&self.labels, values), None, *value);
        }
    }
}

/// A counter family with `N` labels.
pub struct CounterVec<const N: usize>(Scalars<N>);

impl<const N: usize> CounterVec<N> {
    /// A family with no series yet.
    pub fn new(name: &'static str, help: &'static str, labels: [&'static str; N]) -> Self {
        Self(Scalars::new(name, help, labels))
    }

    /// Adds one to the series with these label values.
    pub fn inc(&self, values: [&str; N]) {
        self.inc_by(values, 1.0);
    }

    /// Adds `delta` to the series with these label values; a negative or
    /// NaN `delta` is ignored, as a counter never goes down.
    pub fn inc_by(&self, values: [&str; N], delta: f64) {
        if delta >= 0.0 {
            self.0.update(values, |v| *v += delta);
        }
    }

    /// The series' value (0 for a series never touched).
    pub fn get(&self, values: [&str; N]) -> f64 {
        self.0.get(values)
    }
}

impl<const N: usize> Collector for CounterVec<N> {
    fn name(&self) -> &'static str {
        self.0.name
    }
    fn metric_type(&self) -> MetricType {
        MetricType::Counter
    }
    fn label_names(&self) -> &[&'static str] {
        &self.0.labels
    }
    fn encode(&self, out: &mut String) {
        self.0.encode(out, MetricType::Counter);
    }
}

/// A gauge family with `N` labels.
pub struct GaugeVec<const N: usize>(Scalars<N>);

impl<const N: usize> GaugeVec<N> {
    /// A family with no series yet.
    pub fn new(name: &'static str, help: &'static str, labels: [&'static str; N]) -> Self {
        Self(Scalars::new(name, help, labels))
    }

    /// Sets the series with these label values.
    pub fn set(&self, values: [&str; N], value: f64) {
        self.0.update(values, |v| *v = value);
    }

    /// Adds `delta` (negative to subtract) to the series.
    pub fn add(&self, values: [&str; N], delta: f64) {
        self.0.update(values, |v| *v += delta);
    }

    /// The series' value (0 for a series never touched).
    pub fn get(&self, values: [&str; N]) -> f64 {
        self.0.get(values)
    }
}

impl<const N: usize> Collector for GaugeVec<N> {
    fn name(&self) -> &'static str {
        self.0.name
    }
    fn metric_type(&self) -> MetricType {
        MetricType::Gauge
    }
    fn label_names(&self) -> &[&'static str] {
        &self.0.labels
    }
    fn encode(&self, out: &mut String) {
        self.0.encode(out, MetricType::Gauge);
    }
}

/// One histogram series: observations per bucket (not cumulative; those
/// above the last bound only in `count`), their sum and their count.
#[derive(Clone, Debug)]
struct HistogramSeries {
    buckets: Vec<u64>,
    sum: f64,
    count: u64,
}

/// A histogram family with `N` labels.
pub struct HistogramVec<const N: usize> {
    name: &'static str,
    help: &'static str,
    labels: [&'static str; N],
    bounds: Vec<f64>,
    series: Mutex<BTreeMap<[String; N], HistogramSeries>>,
}

impl<const N: usize> HistogramVec<N> {
    /// A family with no series yet, counting into buckets with these upper
    /// bounds. The bounds are sorted and deduplicated, infinities and NaN
    /// dropped: the `+Inf` bucket is always there.
    pub fn new(
        name: &'static str,
        help: &'static str,
        labels: [&'static str; N],
        bounds: &[f64],
    ) -> Self {
        let mut bounds: Vec<f64> = bounds.iter().copied().filter(|b| b.is_finite()).collect();
        bounds.sort_by(f64::total_cmp);
        bounds.dedup();
        Self {
            name,
            help,
            labels,
            bounds,
            series: Mutex::new(BTreeMap::new()),
        }
    }

    /// Records one observation in the series with these label values.
    pub fn observe(&self, values: [&str; N], value: f64) {
        let mut series = lock(&self.series);
        let series = series
            .entry(key(values))
            .or_insert_with(|| HistogramSeries {
                buckets: vec![0; self.bounds.len()],
                sum: 0.0,
                count: 0,
            });
        if let Some(i) = self.bounds.iter().position(|bound| value <= *bound)
            && let Some(bucket) = series.buckets.get_mut(i)
        {
            *bucket += 1;
        }
        series.sum += value;
        series.count += 1;
    }

    /// The series' observation count and sum (zeros for a series never
    /// touched).
    pub fn get(&self, values: [&str; N]) -> (u64, f64) {
        lock(&self.series)
            .get(&key(values))
            .map_or((0, 0.0), |s| (s.count, s.sum))
    }
}

impl<const N: usize> Collector for HistogramVec<N> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
    fn label_names(&self) -> &[&'static str] {
        &self.labels
    }
    fn encode(&self, out: &mut String) {
        text::push_header(out, self.name, self.help, MetricType::Histogram.as_str());
        let bucket_name = format!("{}_bucket", self.name);
        let sum_name = format!("{}_sum", self.name);
        let count_name = format!("{}_count", self.name);
        for (values, series) in lock(&self.series).iter() {
            let labels = pairs(&self.labels, values);
            let mut cumulative = 0;
            for (bound, count) in self.bounds.iter().zip(&series.buckets) {
                cumulative += count;
                let mut le = String::new();
                text::push_number(&mut le, *bound);
                text::push_sample(
                    out,
                    &bucket_name,
                    &labels,
                    Some(("le", &le)),
                    cumulative as f64,
                );
            }
            text::push_sample(
                out,
                &bucket_name,
                &labels,
                Some(("le", "+Inf")),
                series.count as f64,
            );
            text::push_sample(out, &sum_name, &labels, None, series.sum);
            text::push_sample(out, &count_name, &labels, None, series.count as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(collector: &dyn Collector) -> String {
        let mut out = String::new();
        collector.encode(&mut out);
        out
    }

    #[test]
    fn counters_order_series_by_label_values_and_never_go_down() {
        let counter = CounterVec::new("jobs_total", "Jobs.", ["pool", "reason"]);
        counter.inc(["b", "x"]);
        counter.inc(["a", "y"]);
        counter.inc_by(["a", "y"], 2.5);
        counter.inc_by(["a", "y"], -1.0);
        counter.inc_by(["a", "y"], f64::NAN);
        assert_eq!(counter.get(["a", "y"]), 3.5);
        assert_eq!(counter.get(["c", "z"]), 0.0);
        assert_eq!(
            encoded(&counter),
            "# HELP jobs_total Jobs.\n\
             # TYPE jobs_total counter\n\
             jobs_total{pool=\"a\",reason=\"y\"} 3.5\n\
             jobs_total{pool=\"b\",reason=\"x\"} 1\n"
        );
    }

    #[test]
    fn a_family_without_series_writes_its_header() {
        let gauge = GaugeVec::new("depth", "Depth.", []);
        assert_eq!(encoded(&gauge), "# HELP depth Depth.\n# TYPE depth gauge\n");
    }

    #[test]
    fn gauges_set_and_add() {
        let gauge = GaugeVec::new("depth", "Queue\\depth\nnow.", []);
        gauge.set([], 7.0);
        gauge.add([], -2.0);
        assert_eq!(gauge.get([]), 5.0);
        assert_eq!(
            encoded(&gauge),
            "# HELP depth Queue\\\\depth\\nnow.\n# TYPE depth gauge\ndepth 5\n"
        );
    }

    #[test]
    fn label_values_are_escaped_in_samples() {
        let gauge = GaugeVec::new("g", "G.", ["name"]);
        gauge.set(["a\"b\\c\nd"], 1.0);
        assert!(encoded(&gauge).ends_with("g{name=\"a\\\"b\\\\c\\nd\"} 1\n"));
    }

    #[test]
    fn histograms_write_cumulative_buckets_sum_and_count() {
        let histogram = HistogramVec::new(
            "latency_seconds",
            "Latency.",
            ["method"],
            &[1.0, 0.5, f64::INFINITY, 0.5, f64::NAN],
        );
        for value in [0.25, 0.5, 0.75, 3.0] {
            histogram.observe(["get"], value);
        }
        assert_eq!(histogram.get(["get"]), (4, 4.5));
        assert_eq!(
            encoded(&histogram),
            "# HELP latency_seconds Latency.\n\
             # TYPE latency_seconds histogram\n\
             latency_seconds_bucket{method=\"get\",le=\"0.5\"} 2\n\
             latency_seconds_bucket{method=\"get\",le=\"1\"} 3\n\
             latency_seconds_bucket{method=\"get\",le=\"+Inf\"} 4\n\
             latency_seconds_sum{method=\"get\"} 4.5\n\
             latency_seconds_count{method=\"get\"} 4\n"
        );
    }

    #[test]
    fn histograms_take_any_observation() {
        let histogram = HistogramVec::new("h", "H.", [], &[]);
        histogram.observe([], f64::NAN);
        histogram.observe([], f64::INFINITY);
        histogram.observe([], -1.0);
        let text = encoded(&histogram);
        assert!(text.contains("h_bucket{le=\"+Inf\"} 3\n"), "{text}");
        assert!(text.contains("h_count 3\n"), "{text}");
    }
}
