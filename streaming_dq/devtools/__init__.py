"""Helpers for demos and tests, never imported by the library's layers below the CLI: a local Kafka broker
(local_kafka) and landing files (landing)."""
