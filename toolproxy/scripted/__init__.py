"""A scripted model upstream: a real HTTP server that plays scripted, possibly broken replies.

It speaks OpenAI Chat Completions, OpenAI Responses and Anthropic Messages (streamed or
not) well enough for the real SDKs, and is the only model stand-in the project uses.
"""

from toolproxy.scripted.context import Context
from toolproxy.scripted.handler import RecordedRequest, route
from toolproxy.scripted.render import Plan, render
from toolproxy.scripted.script import (
    DEFAULT_KEY,
    KEY_HEADER,
    Playback,
    Reply,
    Script,
    ScriptedCall,
    ScriptedUsage,
    select_key,
)
from toolproxy.scripted.server import ScriptedUpstream, serve_forever

__all__ = [
    "DEFAULT_KEY",
    "KEY_HEADER",
    "Context",
    "Plan",
    "Playback",
    "RecordedRequest",
    "Reply",
    "Script",
    "ScriptedCall",
    "ScriptedUpstream",
    "ScriptedUsage",
    "render",
    "route",
    "select_key",
    "serve_forever",
]
