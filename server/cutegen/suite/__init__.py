"""`cutegen suite`: judge or generate kernels for a whole benchmark (KernelBench folders), one worker per GPU,
resumable JSON-lines results, and a paper-style report.

Modules: `problems` (discovery and kernel matching), `rows` (run record → result row: the ONLY place that reads
record fields), `store` (results.jsonl), `gpus` (the local backend: one process per GPU), `ray_backend` (the same
on a Ray cluster), `judge` (one problem: judge a kernel, or the agent's pipeline), `runner` (scheduling, resume,
events), `progress` (rich display), `report` (Markdown + HTML)."""
