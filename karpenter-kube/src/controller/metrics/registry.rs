//! The registry: the families `/metrics` renders, in name order.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::family::{Collector, MetricType};
use super::text;

/// Why a family was not registered.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RegistryError {
    /// The metric name is not `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    #[error("{0:?} is not a valid metric name")]
    InvalidName(String),
    /// A label name is not `[a-zA-Z_][a-zA-Z0-9_]*`, starts with `__`, is
    /// repeated, or is a histogram's `le`.
    #[error("{label:?} is not a valid label name for metric {metric}")]
    InvalidLabel {
        /// The family's name.
        metric: String,
        /// The offending label name.
        label: String,
    },
    /// A family with that name is already registered.
    #[error("metric {0} is already registered")]
    Duplicate(String),
}

/// The families of one `/metrics` page. Renders them ordered by name, each
/// family's series ordered by label values: the same state always reads the
/// same.
#[derive(Default)]
pub struct Registry {
    families: BTreeMap<&'static str, Arc<dyn Collector>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a family, after checking its metric and label names.
    pub fn register(&mut self, family: Arc<dyn Collector>) -> Result<(), RegistryError> {
        let name = family.name();
        if !text::is_metric_name(name) {
            return Err(RegistryError::InvalidName(name.to_owned()));
        }
        let labels = family.label_names();
        for (i, label) in labels.iter().enumerate() {
            let reserved = family.metric_type() == MetricType::Histogram && *label == "le";
            if !text::is_label_name(label) || reserved || labels[..i].contains(label) {
                return Err(RegistryError::InvalidLabel {
                    metric: name.to_owned(),
                    label: (*label).to_owned(),
                });
            }
        }
        if self.families.contains_key(name) {
            return Err(RegistryError::Duplicate(name.to_owned()));
        }
        self.families.insert(name, family);
        Ok(())
    }

    /// Every family in the text exposition format, version 0.0.4.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for family in self.families.values() {
            family.encode(&mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CounterVec, GaugeVec, HistogramVec};
    use super::*;

    #[test]
    fn families_render_in_name_order() {
        let mut registry = Registry::new();
        let b = Arc::new(GaugeVec::new("b", "B.", []));
        let a = Arc::new(CounterVec::new("a_total", "A.", []));
        registry.register(b.clone()).unwrap();
        registry.register(a.clone()).unwrap();
        a.inc([]);
        b.set([], 2.0);
        assert_eq!(
            registry.render(),
            "# HELP a_total A.\n# TYPE a_total counter\na_total 1\n\
             # HELP b B.\n# TYPE b gauge\nb 2\n"
        );
    }

    #[test]
    fn bad_names_and_duplicates_are_refused() {
        let mut registry = Registry::new();
        assert_eq!(
            registry.register(Arc::new(GaugeVec::new("a-b", "", []))),
            Err(RegistryError::InvalidName("a-b".into()))
        );
        assert!(matches!(
            registry.register(Arc::new(GaugeVec::new("g", "", ["x", "x"]))),
            Err(RegistryError::InvalidLabel { .. })
        ));
        assert!(matches!(
            registry.register(Arc::new(GaugeVec::new("g", "", ["__x"]))),
            Err(RegistryError::InvalidLabel { .. })
        ));
        assert!(matches!(
            registry.register(Arc::new(HistogramVec::new("h", "", ["le"], &[]))),
            Err(RegistryError::InvalidLabel { .. })
        ));
        registry
            .register(Arc::new(GaugeVec::new("g", "", ["le"])))
            .unwrap();
        assert_eq!(
            registry.register(Arc::new(CounterVec::new("g", "", []))),
            Err(RegistryError::Duplicate("g".into()))
        );
    }
}
