"""MCP awareness: the servers' real tool schemas and what the capture says about them.

``config`` reads the agents' MCP configs, ``adhoc`` a server named on the command line,
``client`` talks to servers (the only module that imports the ``mcp`` SDK), ``pull`` stores
their tools, ``snapshot`` and ``schemadiff`` compare versions; ``drift``, ``budget`` and
``check`` are the ``toolproxy mcp`` reports over a capture.
"""
