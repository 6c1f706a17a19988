"""The verification harness: problems, the kernel ABI, isolated runs, correctness, integrity and timing."""
