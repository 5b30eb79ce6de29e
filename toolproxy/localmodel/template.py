"""The chat template the local model is served with (`tool_template.jinja`, beside this).

SmolLM2's own template has no place for tools: llama.cpp then drops them silently and the
model never calls one. This is a Qwen2.5-style ChatML template: the tools go into the system
turn, calls are written as `<tool_call>{"name": ..., "arguments": ...}</tool_call>` (which
llama.cpp recognises: its grammar then holds the name to the offered tools and the arguments
to their schema), results come back as `<tool_response>` in a user turn, and two short
worked examples (with tools the request does not offer, so they can never be called) show
the format; without tools it is plain ChatML. A `}}` inside a string would end the Jinja
expression in llama.cpp's parser, hence `} }` in the examples' JSON.
"""

from importlib.resources import files


def tool_template() -> str:
    """The template's text."""
    return files("toolproxy.localmodel").joinpath("tool_template.jinja").read_text("utf-8")
