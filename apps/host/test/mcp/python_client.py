"""Drives `klbr mcp` over stdio with the Python MCP SDK's ClientSession, as a Python agent would.

argv[1] is a JSON array: the command that starts the server. Prints one JSON object: what each
step saw, for the TypeScript test to check (the assertions live there).
"""

import json
import sys
import time

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


async def main() -> None:
    command = json.loads(sys.argv[1])
    params = StdioServerParameters(command=command[0], args=command[1:])
    seen: dict = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            seen["protocol_version"] = init.protocol_version
            seen["server"] = init.server_info.name
            tools = await session.list_tools()
            seen["tools"] = [t.name for t in tools.tools]
            seen["python_schema"] = next(t.input_schema for t in tools.tools if t.name == "python")

            first = await session.call_tool("python", {"code": "x = 41"})
            second = await session.call_tool("python", {"code": "x + 1"})
            seen["x_plus_1"] = {"text": text_of(second), "is_error": second.is_error, "first_is_error": first.is_error}

            failed = await session.call_tool("python", {"code": "1 / 0"})
            seen["failed"] = {"text": text_of(failed), "is_error": failed.is_error}

            progress: list = []
            started = time.monotonic()

            async def on_progress(value, total, message):
                progress.append({"progress": value, "message": message, "at": time.monotonic() - started})

            printed = await session.call_tool(
                "python",
                {"code": "import time\nprint('first', flush=True)\ntime.sleep(0.5)\nprint('second', flush=True)"},
                progress_callback=on_progress,
            )
            seen["progress"] = {"notes": progress, "result_at": time.monotonic() - started, "text": text_of(printed)}

            errors = {}
            for name, tool, args in [
                ("unknown_tool", "no_such_tool", {}),
                ("missing_code", "python", {}),
                ("oversized", "python", {"code": "#" * 300_000}),
            ]:
                try:
                    await session.call_tool(tool, args)
                    errors[name] = None
                except MCPError as error:
                    errors[name] = {"code": error.code, "message": error.error.message}
            seen["errors"] = errors

            # A cancelled call: the cancel scope ends the request, the SDK sends notifications/cancelled.
            with anyio.move_on_after(1.5):
                await session.call_tool("python", {"code": "while True: pass"})
            after = await session.call_tool("python", {"code": "x"})
            seen["after_cancel"] = {"text": text_of(after), "is_error": after.is_error}

            log = await session.call_tool("session_log", {"page_size": 200})
            seen["log"] = json.loads(text_of(log))
    print(json.dumps(seen))


anyio.run(main)
