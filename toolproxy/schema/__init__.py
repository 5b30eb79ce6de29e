"""JSON Schema checking of tool arguments: ``validator`` (compiled schemas, verdicts, the
checker every stage uses), ``quick`` (a sound fast path for common tool schemas) and
``quickerrors`` (jsonschema's own errors for that path). Pure: no I/O."""
