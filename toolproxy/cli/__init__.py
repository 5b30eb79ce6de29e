"""The command line: argument parsing, printing and exit codes for every command.

``main`` holds the parser and the capture commands; ``grade``, ``mcp`` and ``replay`` add
their subcommands; ``demo`` runs the whole loop on embedded defaults.
"""

from toolproxy.cli.main import main

__all__ = ["main"]
