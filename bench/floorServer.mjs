// The HTTP floor of bench/run.ts: a raw node:http server that answers every POST with the exact
// response bytes of the real `list_codes` call, read once from the file named by argv[2]. It reads and
// JSON-parses the request body like a real handler would, sets the same Content-Type and keep-alive
// timeout as the real server, and prints "floor at http://127.0.0.1:PORT" once listening.
// Plain JavaScript, run with `node` (no loader), so it starts and runs like the bundled CLI.
import * as fs from 'node:fs';
import * as http from 'node:http';

const body = fs.readFileSync(process.argv[2]);
const headers = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(body.length) };

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      res.writeHead(400, { 'Content-Type': 'application/json; charset=utf-8' });
      res.end('{"success":false,"error":"bad json","error_code":"INVALID_JSON"}');
      return;
    }
    res.writeHead(200, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`floor at http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
