"""toolproxy: measure agent tool calling on your own live traffic."""

__version__ = "0.1.0"
