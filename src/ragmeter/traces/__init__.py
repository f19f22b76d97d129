"""Production traces: OpenTelemetry spans (OTLP) with OpenInference or GenAI attributes, read into
samples (one per trace that retrieved), and ``ragmeter collect``, the OTLP/HTTP receiver that
writes them to a file. See docs/traces.md.

- :mod:`~ragmeter.traces.otlp`: OTLP JSON <-> the opentelemetry-proto messages;
- :mod:`~ragmeter.traces.spans`: spans as plain values;
- :mod:`~ragmeter.traces.conventions`: what a span says under OpenInference and GenAI;
- :mod:`~ragmeter.traces.samples`: a complete trace -> a sample record;
- :mod:`~ragmeter.traces.reader`: the trace file reader (two passes, bounded memory);
- :mod:`~ragmeter.traces.collect`: the receiver.
"""
