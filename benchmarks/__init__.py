"""Performance harness for streaming_dq: ``python -m benchmarks.run [--quick] [--peers]``.

Numbers live here and in ``docs/performance.md``, never in timed tests.
"""
