"""Running gates: the Spark session and its JVM artifacts (jvm), and a job built from a config (job)."""
