"""Where the tests' files are, wherever a test module sits in the tree."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"
MCP_SERVERS = TESTS / "mcp_servers"
