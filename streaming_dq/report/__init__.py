"""``streaming-dq report``: one self-contained HTML file (and its ``--json`` twin) of how gates did, read
from their tables (:mod:`.model`), drawn as inline SVG (:mod:`.svg`, :mod:`.html`)."""

from streaming_dq.report.data import GateReport, ReportOptions, report_json
from streaming_dq.report.html import render
from streaming_dq.report.reading import gate_report
from streaming_dq.report.redact import redacted_config

__all__ = ["GateReport", "ReportOptions", "gate_report", "redacted_config", "render", "report_json"]
