"""Nsight Compute profiles of verified kernels: curated metrics, Speed-of-Light and roofline classification, signals."""

__all__ = ["profile_kernel"]


def __getattr__(name: str):
    # Lazy: `cutegen.profiler.signals` is imported by the knowledge base, which must not pull in the builder.
    if name == "profile_kernel":
        from cutegen.profiler.profile import profile_kernel

        return profile_kernel
    raise AttributeError(name)
