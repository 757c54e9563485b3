/**
 * End-to-end (issue #15, item 8) over real HTTP against the built CLI (`bin/marginalia.js serve`; run
 * `npm run build` first), and over MCP with the official client: the schemas and errors say what the server
 * enforces.
 * - create_code: the maxLength `GET /tools` and MCP `tools/list` advertise for name is the limit that runs:
 *   that many characters are accepted (also as astral characters), one more is refused with a message
 *   naming the limit;
 * - apply_code: the listed schema says which positions are required (under either name), and a call without
 *   them is refused naming them;
 * - update_code_memo without memo is refused and keeps the memo; memo null clears it;
 * - code_id -1: "code_id must be a positive integer", on HTTP and on MCP;
 * - import_data with analytics_json and a missing file answers ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND, with the
 *   HTTP status import_analytics gives it.
 * Expected limits are written here from the spec (code names 1 to 100 characters), not read from the code.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { AGENT_TOKEN, callTool, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

/** The agent-context spec's create_code: name length 1 to 100. */
const CODE_NAME_MAX = 100;

describe('schemas and errors say what the server enforces (HTTP and MCP, real CLI)', function () {
  this.timeout(120_000);
  let dir = '';
  let server: ServerProcess | undefined;
  let base = '';
  const t = toolClient(() => base);
  let tools: { name: string; inputSchema: any }[] = [];

  before(async () => {
    dir = tmpDir('marginalia-schema-e2e-');
    server = await startServer(path.join(dir, 'study.qda'));
    base = server.base;
    const r = await request(base, 'GET', '/tools');
    assert.equal(r.status, 200);
    tools = r.body.tools;
  });
  after(async () => {
    if (server) await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const schemaOf = (name: string) => {
    const tool = tools.find((x) => x.name === name);
    assert.ok(tool, `GET /tools lists ${name}`);
    return tool.inputSchema;
  };

  it('create_code: the advertised name.maxLength is the enforced limit (100 accepted, 101 refused naming it)', async () => {
    const name = schemaOf('create_code').properties.name;
    assert.equal(name.maxLength, CODE_NAME_MAX);
    assert.equal(name.minLength, 1);
    assert.ok(schemaOf('create_code').required.includes('name'));
    const ok = await t.ok('create_code', { name: 'a'.repeat(CODE_NAME_MAX), color: '#4E79A7' });
    assert.equal(ok.name.length, CODE_NAME_MAX);
    // characters are code points, as JSON Schema counts them: 100 emoji are 200 UTF-16 units
    const astral = await t.ok('create_code', { name: '🌱'.repeat(CODE_NAME_MAX), color: '#4E79A7' });
    assert.equal([...astral.name].length, CODE_NAME_MAX);
    const before = await t.ok('list_codes');
    const refused = await t.fails('create_code', { name: 'b'.repeat(CODE_NAME_MAX + 1), color: '#4E79A7' }, 'INVALID_ARGUMENTS');
    assert.match(refused.error, /name must be at most 100 characters \(got 101\)/);
    assert.deepEqual(await t.ok('list_codes'), before, 'nothing was written');
    // the same limit for rename_code and create_category
    assert.equal(schemaOf('rename_code').properties.new_name.maxLength, CODE_NAME_MAX);
    assert.equal(schemaOf('create_category').properties.name.maxLength, CODE_NAME_MAX);
    assert.match(
      (await t.fails('rename_code', { code_id: ok.code_id, new_name: 'c'.repeat(CODE_NAME_MAX + 1) }, 'INVALID_ARGUMENTS')).error,
      /new_name must be at most 100 characters/,
    );
  });

  it('apply_code: the schema says which positions are required, and their absence is refused naming them', async () => {
    const schema = schemaOf('apply_code');
    for (const k of ['anyOf', 'allOf', 'oneOf']) assert.ok(!(k in schema), `no top-level ${k}`);
    assert.deepEqual(schema.required.sort(), ['code_id', 'source_id']);
    // "each pair is given under one of its names", as a root `not` of "some pair is missing"
    const pairs = (schema.not.anyOf as any[]).map((g) => g.not.anyOf.map((a: any) => a.required[0]));
    assert.deepEqual(pairs, [
      ['start_position', 'start_pos'],
      ['end_position', 'end_pos'],
    ]);
    const src = await t.ok('add_text_source', { name: 'Interview', content: 'The water rota worked.' });
    const code = await t.ok('create_code', { name: 'Water', color: '#4E79A7' });
    const missing = await t.fails('apply_code', { code_id: code.code_id, source_id: src.source_id }, 'INVALID_ARGUMENTS');
    assert.match(missing.error, /start_position is required \(or its alias start_pos\)/);
    assert.match(missing.error, /end_position is required \(or its alias end_pos\)/);
    assert.deepEqual(
      missing.details.issues.map((i: any) => i.path),
      ['start_position', 'end_position'],
    );
    const endMissing = await t.fails('apply_code', { code_id: code.code_id, source_id: src.source_id, start_pos: 4 }, 'INVALID_ARGUMENTS');
    assert.match(endMissing.error, /end_position is required/);
    assert.doesNotMatch(endMissing.error, /start_position/);
    // existing callers: either name works
    assert.equal((await t.ok('apply_code', { code_id: code.code_id, source_id: src.source_id, start_pos: 4, end_pos: 9 })).text, 'water');
    assert.equal((await t.ok('apply_code', { code_id: code.code_id, source_id: src.source_id, start_position: 10, end_position: 14 })).text, 'rota');
  });

  it('update_code_memo: without memo an error that keeps the memo; memo null clears it', async () => {
    const schema = schemaOf('update_code_memo');
    assert.deepEqual(schema.required.sort(), ['code_id', 'memo']);
    const code = await t.ok('create_code', { name: 'Memo', color: '#4E79A7', memo: 'what it means' });
    const refused = await t.fails('update_code_memo', { code_id: code.code_id }, 'INVALID_ARGUMENTS');
    assert.match(refused.error, /memo is required/);
    assert.equal((await t.ok('get_code', { code_id: code.code_id })).memo, 'what it means');
    const cleared = await t.ok('update_code_memo', { code_id: code.code_id, memo: null });
    assert.deepEqual(cleared, { code_id: code.code_id, old_memo: 'what it means', new_memo: null });
    assert.equal((await t.ok('get_code', { code_id: code.code_id })).memo, null);
  });

  it('code_id -1: "code_id must be a positive integer"', async () => {
    for (const bad of [-1, 0, 'x']) {
      const r = await t.fails('get_code', { code_id: bad }, 'INVALID_ARGUMENTS');
      assert.equal(r.error, 'Invalid arguments for get_code: code_id must be a positive integer');
    }
  });

  it('MCP: tools/list advertises the same limits and a call answers the same messages', async () => {
    const client = new Client({ name: 'schema-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${AGENT_TOKEN}` } } }));
    try {
      const listed = await client.listTools();
      const create = listed.tools.find((x) => x.name === 'create_code');
      assert.equal((create?.inputSchema.properties as any).name.maxLength, CODE_NAME_MAX);
      for (const tool of listed.tools) for (const k of ['anyOf', 'allOf', 'oneOf']) assert.ok(!(k in tool.inputSchema), `${tool.name}: no top-level ${k}`);
      const r = await client.callTool({ name: 'get_code', arguments: { code_id: -1 } });
      assert.equal(r.isError, true);
      assert.deepEqual(
        { code: (r.structuredContent as any).error_code, error: (r.structuredContent as any).error },
        { code: 'INVALID_ARGUMENTS', error: 'Invalid arguments for get_code: code_id must be a positive integer' },
      );
      const long = await client.callTool({ name: 'create_code', arguments: { name: 'z'.repeat(CODE_NAME_MAX + 1), color: '#4E79A7' } });
      assert.equal(long.isError, true);
      assert.match((long.structuredContent as any).error, /name must be at most 100 characters \(got 101\)/);
    } finally {
      await client.close();
    }
  });

  it('import_data analytics_json with a missing file answers ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND, as import_analytics does', async () => {
    const missing = path.join(dir, 'no-such-export.ndjson');
    const viaImportData = await callTool(base, 'import_data', { format: 'analytics_json', source_path: missing });
    const viaImportAnalytics = await callTool(base, 'import_analytics', { source_path: missing });
    assert.equal(viaImportData.body.error_code, 'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND', JSON.stringify(viaImportData.body));
    assert.equal(viaImportAnalytics.body.error_code, 'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND');
    assert.equal(viaImportData.status, viaImportAnalytics.status, 'the same HTTP status');
    assert.ok(viaImportData.body.error?.includes(missing), viaImportData.body.error);
    // a relative path too, and an empty file is import_analytics' NO_PROFILES rather than IMPORT_FAILED
    assert.equal(
      (await callTool(base, 'import_data', { format: 'analytics_json', source_path: 'events.ndjson' })).body.error_code,
      'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND',
    );
    const empty = path.join(dir, 'empty.ndjson');
    fs.writeFileSync(empty, '');
    assert.equal(
      (await callTool(base, 'import_data', { format: 'analytics_json', source_path: empty })).body.error_code,
      (await callTool(base, 'import_analytics', { source_path: empty })).body.error_code,
    );
    // other formats keep IMPORT_FAILED for a missing file
    assert.equal((await callTool(base, 'import_data', { format: 'code_list', source_path: missing })).body.error_code, 'IMPORT_FAILED');
  });
});
