//! The log filter as a value `cairn serve`'s `/logLevel` page can read and replace: the
//! reload handle of the subscriber `main` installs, behind two closures (the handle's type
//! names the whole formatter stack).

use cairn_server::server::{LogLevel, LogLevelError};

type Get = Box<dyn Fn() -> String + Send + Sync>;
type Set = Box<dyn Fn(tracing_subscriber::EnvFilter) -> Result<(), String> + Send + Sync>;

/// The installed subscriber's filter.
pub struct LogControl {
    get: Get,
    set: Set,
}

impl std::fmt::Debug for LogControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogControl")
            .field("filter", &(self.get)())
            .finish()
    }
}

impl LogControl {
    /// Over a subscriber's reload handle.
    pub fn new<S: 'static>(
        handle: tracing_subscriber::reload::Handle<tracing_subscriber::EnvFilter, S>,
    ) -> LogControl {
        let h = handle.clone();
        LogControl {
            get: Box::new(move || h.with_current(|f| f.to_string()).unwrap_or_default()),
            set: Box::new(move |f| handle.reload(f).map_err(|e| e.to_string())),
        }
    }
}

impl LogLevel for LogControl {
    fn filter(&self) -> String {
        (self.get)()
    }

    fn set_filter(&self, directives: &str) -> Result<String, LogLevelError> {
        let refused = |e: String| LogLevelError::Refused(directives.to_string(), e);
        let f = tracing_subscriber::EnvFilter::try_new(directives)
            .map_err(|e| refused(e.to_string()))?;
        (self.set)(f).map_err(refused)?;
        Ok(self.filter())
    }
}
