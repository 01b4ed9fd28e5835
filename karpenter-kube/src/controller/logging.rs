//! The controller's logs: [`tracing`] events written as text or as JSON
//! lines on standard error, filtered `RUST_LOG`-style.

use tracing::Subscriber;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::ParseError;
use tracing_subscriber::fmt::MakeWriter;

/// The filter when neither the command line nor `RUST_LOG` gives one.
pub const DEFAULT_FILTER: &str = "info";

/// The environment variable read when no filter is given explicitly.
pub const FILTER_ENV: &str = "RUST_LOG";

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One human-readable line per event.
    #[default]
    Text,
    /// One JSON object per line, the event's fields at the top level.
    Json,
}

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    /// The filter is not `RUST_LOG` syntax.
    #[error("invalid log filter {directives:?}")]
    Filter {
        /// The filter as given.
        directives: String,
        /// What is wrong with it.
        #[source]
        source: ParseError,
    },
    /// A global subscriber was installed already.
    #[error("a log subscriber is already installed")]
    AlreadyInstalled(#[source] tracing::subscriber::SetGlobalDefaultError),
}

/// Installs the process's log subscriber, writing `format` lines on standard
/// error. `filter` (`RUST_LOG` syntax, for instance `info,karpenter=debug`)
/// wins; without it, `RUST_LOG` when set and not empty; else `info`.
pub fn init(format: LogFormat, filter: Option<&str>) -> Result<(), LoggingError> {
    let env = std::env::var(FILTER_ENV).ok();
    let filter = parse_filter(directives(filter, env.as_deref()))?;
    tracing::subscriber::set_global_default(subscriber(format, filter, std::io::stderr))
        .map_err(LoggingError::AlreadyInstalled)
}

/// The filter directives in force: `explicit`, else `env` when not blank,
/// else [`DEFAULT_FILTER`].
fn directives<'a>(explicit: Option<&'a str>, env: Option<&'a str>) -> &'a str {
    explicit
        .or(env.filter(|env| !env.trim().is_empty()))
        .unwrap_or(DEFAULT_FILTER)
}

/// Parses `RUST_LOG`-style directives.
fn parse_filter(directives: &str) -> Result<EnvFilter, LoggingError> {
    EnvFilter::builder()
        .parse(directives)
        .map_err(|source| LoggingError::Filter {
            directives: directives.to_owned(),
            source,
        })
}

/// A subscriber writing `format` lines through `writer`.
fn subscriber<W>(
    format: LogFormat,
    filter: EnvFilter,
    writer: W,
) -> Box<dyn Subscriber + Send + Sync>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    match format {
        LogFormat::Text => Box::new(builder.finish()),
        LogFormat::Json => Box::new(builder.json().flatten_event(true).finish()),
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::sync::{Arc, Mutex};

    use clap::ValueEnum;

    use super::*;

    #[test]
    fn the_explicit_filter_wins_then_the_environment_then_info() {
        assert_eq!(directives(Some("debug"), Some("warn")), "debug");
        assert_eq!(directives(None, Some("warn")), "warn");
        assert_eq!(directives(None, Some("  ")), "info");
        assert_eq!(directives(None, None), "info");
    }

    #[test]
    fn a_bad_filter_is_an_error_naming_it() {
        let Err(error) = parse_filter("karpenter=loud") else {
            panic!("parsed a bad filter");
        };
        assert_eq!(error.to_string(), "invalid log filter \"karpenter=loud\"");
        assert!(std::error::Error::source(&error).is_some());
        assert!(parse_filter("info,karpenter_kube=debug").is_ok());
    }

    #[test]
    fn formats_are_named_for_the_command_line() {
        assert_eq!(LogFormat::from_str("text", false), Ok(LogFormat::Text));
        assert_eq!(LogFormat::from_str("json", false), Ok(LogFormat::Json));
        assert!(LogFormat::from_str("yaml", false).is_err());
        assert_eq!(LogFormat::default(), LogFormat::Text);
    }

    /// The lines `format` writes for one event at each of info and debug,
    /// under the filter `info`.
    fn written(format: LogFormat) -> String {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let sink = buffer.clone();
        let make_writer = move || Sink(sink.clone());
        let filter = parse_filter("info").unwrap();
        tracing::subscriber::with_default(subscriber(format, filter, make_writer), || {
            tracing::info!(nodepool = "default", "claim created");
            tracing::debug!("not written");
        });
        String::from_utf8(buffer.lock().unwrap().clone()).unwrap()
    }

    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Sink {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn text_lines_carry_level_message_and_fields() {
        let text = written(LogFormat::Text);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains(" INFO "), "{text}");
        assert!(
            text.contains("claim created nodepool=\"default\""),
            "{text}"
        );
    }

    #[test]
    fn json_lines_are_objects_with_flattened_fields() {
        let text = written(LogFormat::Json);
        assert_eq!(text.lines().count(), 1, "{text}");
        let line: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(line["level"], "INFO");
        assert_eq!(line["message"], "claim created");
        assert_eq!(line["nodepool"], "default");
        assert!(line["timestamp"].is_string());
    }
}
