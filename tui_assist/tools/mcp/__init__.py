"""Tools from MCP servers, through the official `mcp` SDK's client.

Servers are declared in config.toml in the `mcpServers` shape other tools use (`command`/`args`/
`env` for a stdio server, `url` for streamable HTTP), plus `trusted` and `timeout`:

```toml
[mcpServers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
trusted = true          # its calls skip the approval prompt
timeout = 30            # seconds per tool call

[mcpServers.search]
url = "http://localhost:9000/mcp"
headers = { Authorization = "Bearer ..." }
```

Design:

- **One `McpManager` per session.** It owns every server connection; toolboxes come and go per
  turn and per refine round, so the tools they hold are thin handles on the manager's servers and
  have no `aclose()` of their own (a round's `Toolset.aclose()` must not stop a shared server).
- **Lazy start, explicit and once.** Nothing is spawned when the manager is built. The model must
  see a server's tools before it can call them, and `Toolbox.tools` is synchronous, so the host
  awaits `manager.start()` once before the first turn that needs tools (it is idempotent and
  cheap afterwards). Servers start concurrently, each bounded by its `startup_timeout`; a server
  that cannot start is marked `failed` with a one-line reason and offers no tools. `start()`
  never raises.
- **Each connection lives in a task of its own.** The SDK's client is an anyio context manager
  that must be entered and left in the same task, while calls come from whichever task runs the
  turn; so a supervisor task holds `async with Client(...)` open and tools call through it.
- **Crashes.** A wrapper on the transport's read stream notices when the server goes away
  (stdout closed, process dead). The call in flight gets an error result; the server is restarted
  once, on its next use (`max_restarts`). After that its tools stay offered but every call
  returns "unavailable" with the reason, so the model can carry on without it.
- **Timeouts.** Each call is bounded by the server's `timeout`; a timed-out call becomes an error
  result and the server stays up.
- **Names and approval.** Tools are offered as `server__tool`, sanitized to the names every API
  accepts (`^[a-zA-Z0-9_-]{1,64}$`). They are side-effecting, so they pass the approval policy
  (rules use the qualified name), unless the server is `trusted`; tool annotations such as
  `readOnlyHint` come from the server and are not trusted.

Importing this package does not import the `mcp` SDK (it costs most of a second); the first
`start()` does.

Modules: `config` (the `mcpServers` entries, status lines, tool names), `manager` (`McpManager`),
`server` (one server's connection task, state and calls), `tool` (`McpTool`, a handle on a
server's tool) and `sdk` (glue to the SDK's client: transports, tool lists, results).
"""

from __future__ import annotations

from tui_assist.tools.mcp.config import (
    McpServerConfig,
    McpServerStatus,
    ServerState,
    format_status,
    qualified_name,
)
from tui_assist.tools.mcp.manager import McpManager
from tui_assist.tools.mcp.tool import McpTool

__all__ = [
    "McpManager",
    "McpServerConfig",
    "McpServerStatus",
    "McpTool",
    "ServerState",
    "format_status",
    "qualified_name",
]
