//! Logs and traces of the binary: log lines on stderr as text or JSON (one object per line),
//! filtered in `RUST_LOG` syntax, and, with the `otlp` feature (on by default), spans exported
//! over OTLP/HTTP when the standard OpenTelemetry environment variables ask for it
//! (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; off when neither is
//! set, or with `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`).

use anyhow::Context;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::config::LogFormat;

/// Keeps the trace exporter alive; dropping it flushes the spans not yet sent.
#[must_use = "dropping the guard stops the trace export"]
pub struct Telemetry {
    #[cfg(feature = "otlp")]
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
}

impl Telemetry {
    /// Whether spans are exported over OTLP.
    pub fn exporting(&self) -> bool {
        #[cfg(feature = "otlp")]
        return self.provider.is_some();
        #[cfg(not(feature = "otlp"))]
        false
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        #[cfg(feature = "otlp")]
        if let Some(p) = self.provider.take() {
            if let Err(e) = p.shutdown() {
                eprintln!("earshot: flushing the trace export failed: {e}");
            }
        }
    }
}

/// Installs the process's logger (and trace export when configured). Call once.
pub fn init(format: LogFormat, filter: &str) -> anyhow::Result<Telemetry> {
    let filter = EnvFilter::try_new(filter).with_context(|| format!("invalid log filter `{filter}`"))?;
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr()) && std::env::var_os("NO_COLOR").is_none();
    let base = tracing_subscriber::registry().with(filter);
    #[cfg(feature = "otlp")]
    let (base, provider) = {
        let provider = otlp::provider()?;
        let layer = provider.as_ref().map(|p| {
            use opentelemetry::trace::TracerProvider as _;
            tracing_opentelemetry::layer().with_tracer(p.tracer("earshot"))
        });
        (base.with(layer), provider)
    };
    let fmt = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(ansi).boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .with_writer(std::io::stderr)
            .boxed(),
    };
    base.with(fmt).try_init().context("installing the logger")?;
    let telemetry = Telemetry {
        #[cfg(feature = "otlp")]
        provider,
    };
    if telemetry.exporting() {
        tracing::info!("exporting traces over OTLP");
    }
    Ok(telemetry)
}

#[cfg(feature = "otlp")]
mod otlp {
    use anyhow::Context;
    use opentelemetry_sdk::trace::SdkTracerProvider;

    fn var(name: &str) -> Option<String> {
        std::env::var(name).ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
    }

    /// Whether the standard variables ask for trace export.
    pub(super) fn wanted() -> bool {
        let endpoint =
            var("OTEL_EXPORTER_OTLP_ENDPOINT").is_some() || var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some();
        let disabled = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let none = var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"));
        endpoint && !disabled && !none
    }

    /// A tracer provider exporting in batches over OTLP/HTTP (protobuf), or `None` when the
    /// environment does not ask for it. The exporter reads the endpoint, headers and timeout
    /// from the standard variables; the resource takes `OTEL_SERVICE_NAME` (default `earshot`)
    /// and `OTEL_RESOURCE_ATTRIBUTES`.
    pub(super) fn provider() -> anyhow::Result<Option<SdkTracerProvider>> {
        if !wanted() {
            return Ok(None);
        }
        for v in ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] {
            if var(v).is_some_and(|p| p != "http/protobuf") {
                anyhow::bail!("{v}: only `http/protobuf` is built in (OTLP over HTTP)");
            }
        }
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .build()
            .context("configuring the OTLP trace exporter from OTEL_EXPORTER_OTLP_*")?;
        let mut resource = opentelemetry_sdk::Resource::builder()
            .with_attribute(opentelemetry::KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
        if var("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name("earshot");
        }
        Ok(Some(SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource.build()).build()))
    }
}
