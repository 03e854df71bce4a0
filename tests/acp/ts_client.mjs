// An editor in miniature, on the official TypeScript SDK (@agentclientprotocol/sdk 2.x): spawn the
// agent, initialize, open a session, send one prompt, allow its permission request by kind, and
// print what was seen as one JSON object on stdout.
//
// usage: node ts_client.mjs SDK_PACKAGE_DIR CWD PROMPT -- AGENT_COMMAND...
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [sdkDir, cwd, promptText, separator, ...agentCommand] = process.argv.slice(2);
if (separator !== "--" || agentCommand.length === 0) {
  console.error("usage: node ts_client.mjs SDK_PACKAGE_DIR CWD PROMPT -- AGENT_COMMAND...");
  process.exit(2);
}
const acp = await import(pathToFileURL(path.join(sdkDir, "dist/v1/stable/acp.js")).href);

const agent = spawn(agentCommand[0], agentCommand.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

const permissions = [];
const app = acp.client({ name: "ts-test-client" }).onRequest(
  "session/request_permission",
  ({ params }) => {
    permissions.push({ title: params.toolCall.title, kinds: params.options.map((o) => o.kind) });
    const allow = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  },
);

const summary = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const session = await ctx.buildSession(cwd).start();
  const updates = [];
  const done = session.prompt(promptText);
  for (;;) {
    const message = await session.nextUpdate();
    if (message.kind === "stop") {
      await done;
      session.dispose();
      return {
        agentName: init.agentInfo?.name,
        protocolVersion: init.protocolVersion,
        sessionId: session.sessionId,
        modes: session.modes?.availableModes.map((m) => m.id),
        stopReason: message.stopReason,
        updates,
        permissions,
      };
    }
    updates.push(message.update);
  }
});
agent.stdin.end();
process.stdout.write(JSON.stringify(summary) + "\n");
await new Promise((resolve) => agent.on("exit", resolve));
