"""Compiler output → condensed, located diagnostics."""

from cutegen.diagnostics.condense import condense
from cutegen.diagnostics.nvcc_log import parse_log

__all__ = ["condense", "parse_log"]
