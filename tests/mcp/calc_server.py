"""A small MCP server for the tests, written with the SDK's MCPServer (FastMCP in mcp 1.x).

Run as ``python calc_server.py`` for stdio, or ``python calc_server.py http PORT`` for
streamable HTTP on 127.0.0.1. When MCP_PID_FILE is set it writes its process id there,
so a test can check that the process is gone after the client disconnects.
"""

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import Image, MCPServer

server = MCPServer("calc")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def write_note(text: str) -> str:
    """Write note.txt in the current directory."""
    Path("note.txt").write_text(text, encoding="utf-8")
    return "written"


@server.tool()
def picture() -> list:
    """A caption and a 4-byte PNG."""
    return ["a tiny picture", Image(data=b"\x89PNG", format="png")]


@server.tool()
def crash() -> str:
    """End the server process at once."""
    os._exit(3)


if __name__ == "__main__":
    if pid_file := os.environ.get("MCP_PID_FILE"):
        Path(pid_file).write_text(str(os.getpid()))
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
