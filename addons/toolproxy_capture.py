"""mitmproxy entry point: `mitmdump -s addons/toolproxy_capture.py [--set toolproxy_capture=DIR]`.

All the work is in the `toolproxy` package (install it into mitmproxy's Python first).
"""

from toolproxy.capture.addon import ToolproxyAddon

addons = [ToolproxyAddon()]
