"""Real MCP servers the tests run (FastMCP, official SDK)."""
