"""Concrete CuTe layouts from the real compiler: a probe build per file version, rendered in CuTe notation."""
