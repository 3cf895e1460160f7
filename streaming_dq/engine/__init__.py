"""The two-phase validation engine: lazy row flags, one aggregation pass, results and reports."""
