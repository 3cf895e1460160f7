"""Mergeable metric states, their Spark specs, and (later) accumulators and the metrics store."""
