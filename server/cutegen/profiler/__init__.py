"""Nsight Compute profiles of verified kernels: curated metrics, Speed-of-Light and roofline classification, signals."""

from cutegen.profiler.profile import profile_kernel

__all__ = ["profile_kernel"]
