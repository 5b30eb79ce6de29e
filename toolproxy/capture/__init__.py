"""Capture: the mitmproxy addon and everything between a flow and a segment line.

``addon`` (the mitmproxy addon) hands each finished flow, as a ``tap.RawExchange``, to a
``recorder`` (in-process) or a ``worker`` (a child process); ``rows`` turns it into store
rows (``redact``, ``session``, ``link`` do their part) and the segment writer appends them.
``proxy`` and ``lifeline`` run ``mitmdump`` for ``toolproxy record`` and the tests. Only this
package imports mitmproxy. ``limits`` holds the options' rules, which the addon and
``toolproxy record``'s parser both check.
"""
