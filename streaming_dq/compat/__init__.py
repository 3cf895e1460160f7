"""The Spark versions the package runs on, and every difference between them, in one room.

:mod:`streaming_dq.compat.versions` holds the supported range (declared once, in pyproject.toml's ``spark``
extra) and the named features that some versions lack; :mod:`streaming_dq.compat.spark` adapts pyspark's APIs
so that the rest of the package calls one function whatever the version. The bottom layer: it imports only
:mod:`streaming_dq.exceptions` and pyspark.
"""
