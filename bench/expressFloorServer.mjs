// Attribution server of bench/run.ts (not the floor): express 5 configured like the real HTTP adapter
// (x-powered-by off, etag off, express.json with the same limit) answering every POST /tools/:name with
// the exact list_codes response bytes read once from argv[2]. real minus this = pipeline + tool + store
// cost; this minus the raw floor = what express costs. Prints "express-floor at http://127.0.0.1:PORT".
import * as fs from 'node:fs';
import * as http from 'node:http';
import express from 'express';

const body = fs.readFileSync(process.argv[2]);
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.post('/tools/:name', express.json({ limit: '64mb', strict: false }), (_req, res) => {
  res.status(200).type('application/json').send(body);
});
const server = http.createServer(app);
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`express-floor at http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
