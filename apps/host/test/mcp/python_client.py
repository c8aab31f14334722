"""Drives `klbr mcp` with the Python MCP SDK's ClientSession, as a Python agent would.

argv[1] is a JSON object naming the transport: {"stdio": [command, ...args]} (the SDK starts the
server) or {"http": url, "token": token} (Streamable HTTP to a running `klbr mcp --http`).
argv[2] is the data directory, whose daemon this script SIGKILLs mid-call at the end. Prints one
JSON object: what each step saw, for the TypeScript test to check (the assertions live there).
"""

import base64
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


@contextlib.asynccontextmanager
async def connect(target: dict, token: str | None):
    """A ClientSession over the transport `target` names (for HTTP, sending `token` if not None)."""
    if "stdio" in target:
        command = target["stdio"]
        async with stdio_client(StdioServerParameters(command=command[0], args=command[1:])) as (read, write):
            async with ClientSession(read, write) as session:
                yield session
        return
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(target["http"], http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                yield session


async def executions(session, own: str) -> list:
    page = json.loads(text_of(await session.call_tool("session_log", {"session": own, "page_size": 200})))
    return [r for r in page["records"] if r["kind"] == "execution"]


async def killed_mid_call(session, data_dir: str) -> dict:
    """SIGKILL the daemon while a call's cell runs: that call's result, then the next call's."""
    own = (await session.call_tool("python", {"code": "pass"})).meta["klbr/execution"]["session_id"]
    with open(os.path.join(data_dir, "klbr.lock.pid")) as f:
        pid = int(f.read().strip())
    outcome: dict = {}

    async def sleeper():
        result = await session.call_tool("python", {"code": "import time\ntime.sleep(30)"})
        outcome["during"] = {"text": text_of(result), "is_error": result.is_error}

    async with anyio.create_task_group() as tg:
        tg.start_soon(sleeper)
        # Killed while the cell runs (its record says so), not before the call reached the daemon.
        deadline = time.monotonic() + 20
        while not any("time.sleep(30)" in r.get("code", "") and r["status"] == "running" for r in await executions(session, own)):
            if time.monotonic() > deadline:
                raise RuntimeError("the sleeping cell never showed as running")
            await anyio.sleep(0.05)
        os.kill(pid, signal.SIGKILL)
    after = await session.call_tool("python", {"code": "6 * 7"})
    outcome["after"] = {"text": text_of(after), "is_error": after.is_error}
    with open(os.path.join(data_dir, "klbr.lock.pid")) as f:
        outcome["new_daemon"] = int(f.read().strip()) != pid
    return outcome


async def main() -> None:
    target = json.loads(sys.argv[1])
    data_dir = sys.argv[2]
    seen: dict = {}
    if "http" in target:
        # Without the token the server answers 401: the SDK cannot even initialize.
        try:
            with anyio.fail_after(20):
                async with connect(target, None) as session:
                    await session.initialize()
            seen["unauthorized"] = {"sdk": None}
        except BaseException as error:  # the SDK surfaces it as an MCPError inside an ExceptionGroup
            seen["unauthorized"] = {"sdk": repr(error)}
        # The SDK does not say the status; the same initialize on its HTTP client does.
        async with create_mcp_http_client() as http:
            response = await http.post(
                target["http"],
                json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "py", "version": "0"}}},
                headers={"accept": "application/json, text/event-stream"},
            )
            seen["unauthorized"].update(status=response.status_code, www_authenticate=response.headers.get("www-authenticate"))
    async with connect(target, target.get("token")) as session:
        init = await session.initialize()
        seen["protocol_version"] = init.protocol_version
        seen["server"] = init.server_info.name
        tools = await session.list_tools()
        seen["tools"] = [t.name for t in tools.tools]
        seen["python_schema"] = next(t.input_schema for t in tools.tools if t.name == "python")

        first = await session.call_tool("python", {"code": "x = 41"})
        second = await session.call_tool("python", {"code": "x + 1"})
        seen["x_plus_1"] = {"text": text_of(second), "is_error": second.is_error, "first_is_error": first.is_error}

        plot = await session.call_tool("python", {"code": "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [2, 1, 3])\nplt.show()"})
        images = [c for c in plot.content if c.type == "image"]
        seen["plot"] = {
            "is_error": plot.is_error,
            "first": plot.content[0].type,
            "images": [{"mime": c.mime_type, "magic": base64.b64decode(c.data)[1:4].decode("latin-1")} for c in images],
        }

        failed = await session.call_tool("python", {"code": "1 / 0"})
        seen["failed"] = {"text": text_of(failed), "is_error": failed.is_error}

        # The cell waits until this script saw its first print (the marker, created by the progress
        # callback): "second" says the notification arrived while the cell still ran, no clock needed.
        progress: list = []
        marker = os.path.join(tempfile.mkdtemp(prefix="klbr-mcp-py-"), "progress-seen")

        async def on_progress(value, total, message):
            progress.append({"progress": value, "message": message})
            if "first" in "".join(p["message"] or "" for p in progress):
                open(marker, "w").close()

        code = "\n".join([
            "import os, time",
            "print('first', flush=True)",
            "for _ in range(2400):",
            f"    if os.path.exists({marker!r}): break",
            "    time.sleep(0.05)",
            f"print('second' if os.path.exists({marker!r}) else 'no progress while the cell ran', flush=True)",
        ])
        printed = await session.call_tool("python", {"code": code}, progress_callback=on_progress)
        seen["progress"] = {"notes": progress, "text": text_of(printed)}
        shutil.rmtree(os.path.dirname(marker), ignore_errors=True)

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

        seen["killed"] = await killed_mid_call(session, data_dir)
    print(json.dumps(seen))


anyio.run(main)
