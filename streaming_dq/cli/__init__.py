"""The ``streaming-dq`` command line: ``run``, ``validate``, ``check``, ``schema`` and ``metrics``."""
