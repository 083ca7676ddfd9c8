"""A second, independent MCP client (the Python `mcp` package) driving
`portcullis mcp-bridge`. Used by crates/cli/tests/mcp_bridge.rs.

    python3 python_client.py INSIDE OUTSIDE -- BRIDGE-COMMAND ARGS...

Lists the tools, reads INSIDE and OUTSIDE with `read_text_file`, and prints
one JSON object: the tool names and, per call, whether it was an error, its
text and its `_meta`.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def attr(obj, *names):
    """The first attribute that exists (the SDK renamed camelCase fields in 2.x)."""
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    raise AttributeError(f"{type(obj).__name__} has none of {names}")


async def main() -> None:
    split = sys.argv.index("--")
    inside, outside = sys.argv[1:split]
    command = sys.argv[split + 1 :]
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    out = {"calls": []}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = attr(init, "server_info", "serverInfo").name
            tools = await session.list_tools()
            out["tools"] = sorted(t.name for t in tools.tools)
            for path in (inside, outside):
                r = await session.call_tool("read_text_file", {"path": path})
                out["calls"].append(
                    {
                        "path": path,
                        "is_error": bool(attr(r, "is_error", "isError")),
                        "text": " ".join(getattr(c, "text", "") for c in r.content),
                        "meta": attr(r, "meta", "_meta"),
                    }
                )
    print(json.dumps(out))


asyncio.run(main())
