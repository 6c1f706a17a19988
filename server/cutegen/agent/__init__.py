"""The agent: LLM client, prompts, patch matcher, verification of candidates, and the loops
(diagnose, fix, optimize, generate) plus tuning, which needs no LLM.

Engine code: no pygls/lsprotocol here; the LSP and CLI adapters present its results.
"""
