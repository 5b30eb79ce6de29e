"""OpenTelemetry out: captured sessions as OTLP traces (`toolproxy export --otlp`)."""
