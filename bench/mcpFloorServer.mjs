// The MCP floor of bench/mcp.ts: the SDK's own serving path with one trivial tool, on the same transport
// as the real server (express 5, `createMcpHandler` with `legacy: 'stateless'`, `toNodeHandler`, mounted at
// ALL /mcp; a fresh McpServer from the factory per request, as the SDK's stateless pattern has it). The
// tool `list_codes` takes no arguments and returns the real server's list_codes result read once from
// argv[2] (the same bytes go back), so real minus this is what Marginalia adds: its guards, the agent
// layer, ~90 tools / resources / prompts, and the tool's own work. Prints "mcp-floor at http://127.0.0.1:PORT".
import * as fs from 'node:fs';
import * as http from 'node:http';
import express from 'express';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';

const result = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const handler = createMcpHandler(
  () => {
    const server = new McpServer({ name: 'floor', version: '1.0.0' }, { capabilities: { tools: { listChanged: false } } });
    server.registerTool('list_codes', { description: 'trivial: a fixed result' }, () => result);
    return server;
  },
  { legacy: 'stateless' },
);
const node = toNodeHandler(handler);
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.all('/mcp', (req, res, next) => {
  node(req, res).catch(next);
});
const server = http.createServer(app);
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`mcp-floor at http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
