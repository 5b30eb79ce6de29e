"""The store's SQL, by what it reads: each function takes a `Reader` (one read batch) and
returns typed rows (`toolproxy.store.rows`). No SQL text exists outside `toolproxy.store`:
the rest of the code reads the capture through these functions.

``exchanges`` sessions, exchanges and one exchange in full, paged and filtered;
``turns`` model turns and their calls, tools and results (labeling, replay planning,
grading); ``grades`` runs, latest grades, verdicts, the judge's cache; ``replays`` replay
cells and diffs; ``mcp`` pulled MCP tools and what drift, budget and `mcp check` read.
"""
