"""`toolproxy tui`: the triage bench in the terminal, on the store's read API.

``app`` is the Textual application and its screens (the only module that imports textual,
with ``screens``); ``filterbar`` parses the `/` filter bar into the store's
`ExchangeFilter` (pure); ``views`` turns store rows into table cells and transcript text
(pure).
"""
