"""CuTeGen: an editor assistant for CuTe GPU kernels (engine + LSP and CLI adapters)."""

__version__ = "0.1.0"
