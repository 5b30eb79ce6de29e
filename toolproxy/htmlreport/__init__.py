"""`toolproxy report --html`: one self-contained page with the report's tables, charts drawn
by plotly.js (embedded) and the failure gallery."""
