/**
 * The MCP adapter (src/adapters/mcp) through the official SDK client (@modelcontextprotocol/client 2.4.0)
 * in both protocol eras: 2025-11-25 (the `initialize` handshake, what VS Code speaks) and 2026-07-28
 * (`server/discover`, stateless, per-request envelope).
 * - Streamable HTTP against the real HTTP server (startHttpServer on port 0, the /mcp endpoint mounted
 *   through the `extend` hook, behind the Host/Origin/bearer guards) with an AgentContext: tools/list with
 *   output schemas and annotations, tools/call (ok, isError, pending approval -> get_approval_status ->
 *   approval -> completed), sessions, audit, resources (briefing shape, codebook shape, content, segments,
 *   cases, not-found), prompts, resource update notifications on subscriptions/listen;
 * - stdio with the built CLI (`node bin/marginalia.js mcp --project P`): owning the project, and forwarding
 *   to the process that owns it (`marginalia serve`), where the researcher sees the pending request.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { AgentContext } from '../../../src/agent/agentContext';
import { ContextBuilder } from '../../../src/agent/contextBuilder';
import { toJsonSchema, type Caller, type ToolPipeline } from '../../../src/agent/pipeline';
import { startHttpServer, type RunningHttpServer } from '../../../src/adapters/http/httpServer';
import { createMcpHttpEndpoint, type McpHttpEndpoint } from '../../../src/adapters/mcp/mcpHttp';
import { annotationsOf } from '../../../src/adapters/mcp/mcpServer';
import { PROMPT_NAMES } from '../../../src/adapters/mcp/mcpPrompts';
import { REPORT_TEMPLATES, RESOURCE_TEMPLATES, STATIC_RESOURCES } from '../../../src/adapters/mcp/mcpResources';
import { resourcesTouchedBy } from '../../../src/adapters/mcp/resourceEvents';
import { ALL_TOOLS, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import { TOOLS_BY_NAME } from '../../../src/tools/registry';
import { AGENT_TOKEN, REPO_ROOT, REVIEWER_TOKEN, callTool, startServer, type ServerProcess } from '../../helpers/serverProcess';

const TOKENS = { agent: 'agent-token-mcp-unit-tests', reviewer: 'reviewer-token-mcp-unit-tests' };
/** generous limits: the tests make many calls from few sessions */
const CONFIG = [
  'agent_context:',
  '  sessions:',
  '    max_concurrent: 100',
  '  rate_limits:',
  '    requests_per_minute: 100000',
  '    mutations_per_minute: 100000',
  '',
].join('\n');
const ERAS = ['legacy', 'modern'] as const;
type Era = (typeof ERAS)[number];

const TEXT_A = 'Amara: The garden 🌱 gave me a place to belong. We share the water rota and the harvest.\nWe argue about the shed.';
const TEXT_B = 'Ben: I joined for the vegetables, but the council forms nearly made me quit.';

function clientFor(era: Era, name = `mcp-unit-${era}`): Client {
  return new Client({ name, version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: 'auto' } } : {});
}

function textOf(result: { content?: unknown }): string {
  return ((result.content as { type: string; text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('\n');
}

describe('adapters/mcp over Streamable HTTP (SDK client, both eras)', function () {
  this.timeout(30_000);
  let dir: string;
  let handle: ProjectHandle;
  let agent: AgentContext;
  let pipeline: ToolPipeline;
  let context: ContextBuilder;
  let endpoint: McpHttpEndpoint;
  let server: RunningHttpServer;
  let url: URL;
  let researcher: Caller;
  const audit: string[] = [];
  const ids = { a: 0, b: 0, trust: 0, belonging: 0, water: 0, category: 0, case1: 0, case2: 0 };
  const clients: Client[] = [];

  async function connect(era: Era, opts: { name?: string; headers?: Record<string, string> } = {}): Promise<Client> {
    const client = clientFor(era, opts.name);
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${TOKENS.agent}`, ...opts.headers } } });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  async function asResearcher(tool: string, args: Record<string, unknown>): Promise<any> {
    const out = await agent.call(researcher, tool, args);
    if (!out.envelope.success) assert.fail(`${tool}: ${out.envelope.error_code} ${out.envelope.error}`);
    return out.envelope.data;
  }

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-mcp-'));
    handle = await openProjectHandle(path.join(dir, 'p.qda'), { create: true, checkpointIdleMs: 0 });
    agent = new AgentContext({
      tools: ALL_TOOLS,
      project: () => handle,
      tokens: TOKENS,
      configText: CONFIG,
      logger: silentLogger,
      audit: { append: (l) => void audit.push(l), read: async () => audit.join('\n') },
    });
    pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, agent, embeddings: null });
    researcher = agent.openSession({ authorization: `Bearer ${TOKENS.reviewer}`, client_type: 'REST_CLIENT', client_name: 'researcher' }).caller;
    ids.a = (await asResearcher('add_text_source', { name: 'amara.txt', content: TEXT_A })).source_id;
    ids.b = (await asResearcher('add_text_source', { name: 'ben.txt', content: TEXT_B })).source_id;
    ids.category = (await asResearcher('create_category', { name: 'Belonging' })).category_id;
    ids.belonging = (
      await asResearcher('create_code', { name: 'Sense of belonging', color: '#4E79A7', memo: 'feeling at home', category_id: ids.category })
    ).code_id;
    ids.water = (await asResearcher('create_code', { name: 'Sharing resources', color: '#F28E2B' })).code_id;
    ids.trust = (await asResearcher('create_code', { name: 'Council bureaucracy', color: '#E15759' })).code_id;
    const cp = (s: string, sub: string) => [...s.slice(0, s.indexOf(sub))].length;
    await asResearcher('batch_apply_codes', {
      operations: [
        { code_id: ids.belonging, source_id: ids.a, start_position: cp(TEXT_A, 'The garden'), end_position: cp(TEXT_A, ' We share') },
        { code_id: ids.water, source_id: ids.a, start_position: cp(TEXT_A, 'gave me'), end_position: cp(TEXT_A, '\nWe argue') },
        { code_id: ids.belonging, source_id: ids.b, start_position: 0, end_position: 12 },
        { code_id: ids.trust, source_id: ids.b, start_position: cp(TEXT_B, 'the council'), end_position: [...TEXT_B].length },
      ],
    });
    ids.case1 = (await asResearcher('create_case', { name: 'Amara' })).case_id;
    ids.case2 = (await asResearcher('create_case', { name: 'Ben' })).case_id;
    await asResearcher('add_source_to_case', { case_id: ids.case1, source_id: ids.a });
    await asResearcher('add_source_to_case', { case_id: ids.case2, source_id: ids.b });
    await asResearcher('set_case_attribute', { case_id: ids.case1, attribute_name: 'age', value: 34 });
    context = new ContextBuilder({
      project: () => handle,
      hub: agent.hub,
      info: () => ({
        description: 'Community gardens and belonging',
        research_questions: ['How do gardeners come to belong?'],
        methodology: 'Grounded theory',
      }),
    });
    endpoint = createMcpHttpEndpoint({ agent, context, version: '9.9.9-test', logger: silentLogger });
    server = await startHttpServer({ pipeline, port: 0, logger: silentLogger, version: 'test', agent, extend: (app) => endpoint.mount(app) });
    url = new URL(`http://127.0.0.1:${server.port}/mcp`);
  });

  afterEach(async () => {
    while (clients.length > 0) await clients.pop()?.close();
    for (const a of agent.listApprovals('pending')) agent.reject(researcher, a.request_id, 'test cleanup');
  });

  after(async () => {
    await endpoint?.dispose();
    context?.dispose();
    await server?.close();
    agent?.dispose();
    await handle?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const era of ERAS) {
    describe(`era ${era === 'legacy' ? '2025-11-25 (initialize)' : '2026-07-28 (server/discover)'}`, () => {
      it('negotiates the era and names the server', async () => {
        const client = await connect(era);
        assert.equal(client.getProtocolEra(), era);
        assert.equal(client.getServerVersion()?.name, 'marginalia');
        assert.equal(client.getServerVersion()?.version, '9.9.9-test');
        assert.match(client.getInstructions() ?? '', /pending_approval/);
      });

      it('tools/list: every agent-facing tool of the registry, with its JSON Schema, an object output schema, title and annotations from its effect', async () => {
        const client = await connect(era);
        const { tools } = await client.listTools();
        const expected = pipeline.listTools();
        assert.deepEqual(
          tools.map((t) => t.name),
          expected.map((t) => t.name),
        );
        assert.ok(tools.some((t) => t.name === 'get_approval_status') && tools.some((t) => t.name === 'list_pending_approvals'));
        assert.ok(!tools.some((t) => t.name === 'apply_source_edits'), 'editor-only tools are not listed');
        for (const t of tools) {
          const def = TOOLS_BY_NAME.get(t.name)!;
          const { $schema: _s, ...json } = toJsonSchema(def.input);
          assert.deepEqual(t.inputSchema, json, `${t.name} input schema is the one GET /tools shows`);
          assert.equal(t.title, def.title);
          assert.equal(t.outputSchema?.type, 'object', `${t.name} has an object output schema`);
          assert.deepEqual({ ...t.annotations, title: undefined }, { ...annotationsOf(def.effect), title: undefined }, t.name);
          assert.equal(t.annotations?.openWorldHint, false);
        }
        const byName = new Map(tools.map((t) => [t.name, t]));
        assert.equal(byName.get('list_codes')?.annotations?.readOnlyHint, true);
        assert.equal(byName.get('create_code')?.annotations?.destructiveHint, false);
        assert.equal(byName.get('delete_code')?.annotations?.destructiveHint, true);
        assert.equal(byName.get('batch_apply_codes')?.annotations?.destructiveHint, true);
        assert.equal(byName.get('rename_code')?.annotations?.idempotentHint, true);
        // a declared output schema is listed, and admits the pending-approval answer too
        const declared = JSON.stringify(byName.get('get_approval_status')?.outputSchema);
        assert.match(declared, /"decision"/);
        assert.match(declared, /pending_approval/);
      });

      it('tools/call with a progressToken: a long import reports notifications/progress, increasing, with a message per step', async () => {
        // the researcher's client, so import_data runs rather than waiting for approval
        const client = await connect(era, { headers: { Authorization: `Bearer ${TOKENS.reviewer}` } });
        const file = path.join(dir, `codebook-${era}.txt`);
        fs.writeFileSync(file, `Progress code A ${era}\nProgress code B ${era}\n`);
        const seen: { progress: number; total?: number; message?: string }[] = [];
        const r = await client.callTool(
          { name: 'import_data', arguments: { format: 'code_list', source_path: file } },
          { onprogress: (p) => void seen.push(p) },
        );
        assert.notEqual(r.isError, true, textOf(r));
        assert.equal((r.structuredContent as { created: { codes: number } }).created.codes, 2);
        assert.ok(seen.length >= 3, `reading starts, reading ends, writing ends: ${JSON.stringify(seen)}`);
        for (let i = 1; i < seen.length; i++) assert.ok(seen[i]!.progress > seen[i - 1]!.progress, `progress increases: ${JSON.stringify(seen)}`);
        assert.match(seen[0]?.message ?? '', /^Reading code_list file codebook-/);
        assert.match(seen.at(-1)?.message ?? '', /^Writing code_list import: 2 of 2 items$/);
        // leave the codebook as the other tests expect it
        for (const c of handle.repo.listCodes().filter((c) => c.name.endsWith(era) && c.name.startsWith('Progress code')))
          await asResearcher('delete_code', { code_id: c.code_id });
      });

      it('tools/call: structuredContent is the envelope data and the text its JSON', async () => {
        const client = await connect(era);
        const r = await client.callTool({ name: 'list_codes', arguments: {} });
        assert.notEqual(r.isError, true);
        const data = r.structuredContent as { count: number; codes: { name: string }[] };
        assert.equal(data.count, 3);
        assert.deepEqual(JSON.parse(textOf(r)), data);
        const read = await client.callTool({ name: 'read_source_content', arguments: { source_id: ids.a, start_pos: 12, end_pos: 20 } });
        assert.equal(
          (read.structuredContent as { content: string }).content,
          [...TEXT_A].slice(12, 20).join(''),
          'positions count code points (the emoji is one)',
        );
      });

      it('tools/call failures are isError results naming the error_code, never protocol errors', async () => {
        const client = await connect(era);
        const missing = await client.callTool({ name: 'get_code', arguments: { code_id: 99_999 } });
        assert.equal(missing.isError, true);
        assert.equal((missing.structuredContent as { error_code: string }).error_code, 'CODE_NOT_FOUND');
        assert.match(textOf(missing), /^CODE_NOT_FOUND: /);
        // invalid arguments reach the pipeline (validated once there), so they carry our code and are audited
        const before = audit.length;
        const invalid = await client.callTool({ name: 'get_code', arguments: { code_id: 'abc', extra: 1 } });
        assert.equal(invalid.isError, true);
        assert.equal((invalid.structuredContent as { error_code: string }).error_code, 'INVALID_ARGUMENTS');
        const entries = audit.slice(before).map((l) => JSON.parse(l) as { tool: string; decision: string; error_code?: string; client_name: string });
        assert.ok(
          entries.some((e) => e.tool === 'get_code' && e.error_code === 'INVALID_ARGUMENTS' && e.decision === 'failed'),
          JSON.stringify(entries),
        );
      });

      it('a Suggest-level call with the agent token answers pending_approval (not an error); get_approval_status follows it to completion', async () => {
        const client = await connect(era);
        const name = `Hope ${era}`;
        const r = await client.callTool({ name: 'create_code', arguments: { name, color: '#59A14F' } });
        assert.notEqual(r.isError, true, textOf(r));
        const pending = r.structuredContent as { status: string; request_id: string; trust_level: string; tool: string };
        assert.equal(pending.status, 'pending_approval');
        assert.equal(pending.trust_level, 'suggest');
        assert.equal(pending.tool, 'create_code');
        assert.match(textOf(r), /get_approval_status/);
        assert.ok(!handle.repo.listCodes().some((c) => c.name === name), 'nothing was created yet');

        const waiting = await client.callTool({ name: 'get_approval_status', arguments: { request_id: pending.request_id } });
        assert.equal((waiting.structuredContent as { status: string }).status, 'pending');
        const mine = await client.callTool({ name: 'list_pending_approvals', arguments: { only_mine: true } });
        assert.deepEqual(
          (mine.structuredContent as { approvals: { request_id: string }[] }).approvals.map((a) => a.request_id),
          [pending.request_id],
        );

        const approved = await agent.approve(researcher, pending.request_id);
        assert.equal(approved.status, 'ok', JSON.stringify(approved.envelope));
        const done = await client.callTool({ name: 'get_approval_status', arguments: { request_id: pending.request_id } });
        const status = done.structuredContent as { status: string; decision: string; result: { code_id: number; name: string } };
        assert.equal(status.status, 'completed');
        assert.equal(status.decision, 'approved');
        assert.equal(status.result.name, name);
        assert.ok(handle.repo.getCode(status.result.code_id), 'the approved call ran');
        const unknown = await client.callTool({ name: 'get_approval_status', arguments: { request_id: 'no-such-request' } });
        assert.equal((unknown.structuredContent as { error_code: string }).error_code, 'APPROVAL_NOT_FOUND');
        await asResearcher('delete_code', { code_id: status.result.code_id });
      });

      it('maps calls to sessions: the implicit session of the credential (named by its first client), or X-Marginalia-Session', async () => {
        // a credential of its own: a credential has one implicit session, named after the client that opened it (issue 14 item 3)
        const token = agent.credentials.issue(`claude-${era}`).token;
        const named = await connect(era, {
          name: `claude-${era}`,
          headers: { Authorization: `Bearer ${token}`, ...(era === 'legacy' ? { 'X-Marginalia-Client': `claude-${era}` } : {}) },
        });
        const r = await named.callTool({ name: 'create_code', arguments: { name: `Named ${era}`, color: '#000000' } });
        const req = agent.listApprovals('pending').find((a) => a.request_id === (r.structuredContent as { request_id: string }).request_id);
        assert.equal(req?.client_name, `claude-${era}`, 'the implicit session is named after the client');
        assert.equal(req?.client_type, 'CUSTOM');

        const { session } = agent.openSession({ authorization: `Bearer ${TOKENS.agent}`, client_type: 'ASSISTANT_A_CLI', client_name: 'explicit' });
        const explicit = await connect(era, { headers: { 'X-Marginalia-Session': session.session_id } });
        const r2 = await explicit.callTool({ name: 'create_code', arguments: { name: `Explicit ${era}`, color: '#000000' } });
        const req2 = agent.listApprovals('pending').find((a) => a.request_id === (r2.structuredContent as { request_id: string }).request_id);
        assert.equal(req2?.session_id, session.session_id);
        assert.equal(req2?.client_type, 'ASSISTANT_A_CLI');

        const stale = await connect(era, { headers: { 'X-Marginalia-Session': 'no-such-session' } });
        const r3 = await stale.callTool({ name: 'list_codes', arguments: {} });
        assert.equal(r3.isError, true);
        assert.equal((r3.structuredContent as { error_code: string }).error_code, 'SESSION_NOT_FOUND');
      });

      it('resources/list and templates: the qda:// URIs of the spec, with every code, category, source and case', async () => {
        const client = await connect(era);
        const { resources } = await client.listResources();
        const uris = resources.map((r) => r.uri);
        for (const r of STATIC_RESOURCES) assert.ok(uris.includes(r.uri), r.uri);
        for (const id of [ids.belonging, ids.water, ids.trust]) assert.ok(uris.includes(`qda://codes/${id}`));
        assert.ok(uris.includes(`qda://sources/${ids.a}`) && uris.includes(`qda://cases/${ids.case2}`) && uris.includes(`qda://categories/${ids.category}`));
        const { resourceTemplates } = await client.listResourceTemplates();
        const reports = TOOLS_BY_NAME.has('get_report') ? [...REPORT_TEMPLATES] : [];
        assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(), [...RESOURCE_TEMPLATES, ...reports].sort());
      });

      it('qda://project/briefing has the briefing shape of the spec, built from the project and its stored events', async () => {
        const client = await connect(era);
        const r = await client.readResource({ uri: 'qda://project/briefing' });
        const content = r.contents[0] as { uri: string; mimeType: string; text: string };
        assert.equal(content.uri, 'qda://project/briefing');
        assert.equal(content.mimeType, 'application/json');
        const b = JSON.parse(content.text);
        assert.deepEqual(Object.keys(b).sort(), [
          'code_summary',
          'coding_progress',
          'description',
          'methodology',
          'project_name',
          'recent_activity',
          'research_questions',
        ]);
        assert.equal(b.project_name, 'p');
        assert.equal(b.description, 'Community gardens and belonging');
        assert.deepEqual(b.research_questions, ['How do gardeners come to belong?']);
        assert.equal(b.methodology, 'Grounded theory');
        assert.deepEqual(b.coding_progress, { total_sources: 2, coded_sources: 2, total_codes: 3, total_segments: 4 });
        assert.deepEqual(b.code_summary.top_codes[0], { name: 'Sense of belonging', count: 2 });
        assert.deepEqual([...b.code_summary.recent_codes].sort(), ['Council bureaucracy', 'Sense of belonging', 'Sharing resources']);
        assert.ok(b.recent_activity.length > 0 && b.recent_activity.length <= 20);
        let last = Infinity;
        for (const a of b.recent_activity) {
          assert.match(a.action, /^[a-z]+\.[a-z_]+$/, 'a dotted event type');
          assert.ok(!a.action.startsWith('session.'), 'connections are not activity');
          const t = Date.parse(a.timestamp);
          assert.ok(t <= last, 'newest first');
          last = t;
          assert.equal(typeof a.by, 'string');
        }
        // the newest event of the project is the first entry
        const newest = handle.repo.listEventsSince(handle.repo.lastEventSeq() - 1, 1)[0]!;
        if (!newest.event_type.startsWith('session.')) assert.equal(b.recent_activity[0].action, newest.event_type);
      });

      it('qda://codes has the code-list shape of the spec; other reads reuse the read tools', async () => {
        const client = await connect(era);
        const read = async (uri: string) => JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text);
        const list = await read('qda://codes');
        const belonging = list.codes.find((c: { code_id: number }) => c.code_id === ids.belonging);
        assert.deepEqual(
          Object.keys(belonging).sort(),
          ['av_segment_count', 'category', 'code_id', 'color', 'created_at', 'memo', 'name', 'owner', 'segment_count'].sort(),
        );
        assert.deepEqual(belonging.category, { id: ids.category, name: 'Belonging' });
        assert.equal(belonging.segment_count, 2);
        assert.deepEqual(list.categories, [{ category_id: ids.category, name: 'Belonging', parent_id: null, code_count: 1 }]);

        assert.equal((await read(`qda://codes/${ids.trust}`)).name, 'Council bureaucracy');
        const segs = await read(`qda://codes/${ids.belonging}/segments`);
        assert.equal(segs.count, 2);
        assert.deepEqual(new Set(segs.segments.map((s: { source_name: string }) => s.source_name)), new Set(['amara.txt', 'ben.txt']));
        assert.equal((await read(`qda://segments?code_id=${ids.belonging}`)).count, 2);
        assert.equal((await read(`qda://segments?source_id=${ids.b}`)).count, 2);
        assert.equal((await read(`qda://segments?case_id=${ids.case1}`)).count, 2, 'the two codings of the case source');
        const one = await read(`qda://segments/${segs.segments[0].segment_id}`);
        assert.equal(one.code_name, 'Sense of belonging');
        const cat = await read(`qda://categories/${ids.category}`);
        assert.deepEqual(
          cat.codes.map((c: { name: string }) => c.name),
          ['Sense of belonging'],
        );
        assert.equal((await read(`qda://sources/${ids.a}`)).name, 'amara.txt');
        assert.equal((await read('qda://sources')).count, 2);
        assert.equal((await read('qda://cases')).count, 2);
        assert.deepEqual((await read(`qda://cases/${ids.case1}/attributes`)).attribute_values, { age: 34 });
        assert.deepEqual(
          (await read(`qda://cases/${ids.case2}/members`)).sources.map((s: { source_id: number }) => s.source_id),
          [ids.b],
        );
        if (!TOOLS_BY_NAME.has('list_reports'))
          assert.deepEqual(await read('qda://reports'), { count: 0, reports: [], note: (await read('qda://reports')).note });
        const state = await read('qda://project/state');
        assert.equal(state.counts.codes, 3);
        assert.equal(state.counts.cases, 2);
        const stats = await read('qda://project/statistics');
        assert.equal(stats.segments_per_code[0].name, 'Sense of belonging');
        assert.ok(stats.coverage.coded_code_points > 0 && stats.coverage.coded_code_points <= stats.coverage.text_code_points);
        const settings = await read('qda://project/settings');
        assert.equal(settings.trust_levels.find((t: { tool: string }) => t.tool === 'delete_code').level, 'require');
        assert.equal(settings.agent_context.sessions.max_concurrent, 100);

        const content = (await client.readResource({ uri: `qda://sources/${ids.a}/content` })).contents[0] as { mimeType: string; text: string };
        assert.equal(content.mimeType, 'text/plain');
        assert.equal(content.text, TEXT_A, 'the whole stored text, exactly');
      });

      it('a missing resource is a resources/read error (-32602 with the uri), not a result', async () => {
        const client = await connect(era);
        for (const uri of [
          'qda://codes/99999',
          'qda://sources/99999/content',
          'qda://segments/99999',
          'qda://cases/99999',
          'qda://codes/abc',
          'qda://nothing',
        ]) {
          await assert.rejects(client.readResource({ uri }), (e: { code?: number; message: string }) => {
            assert.equal(e.code, -32602, `${uri}: ${e.message}`);
            return true;
          });
        }
      });

      it('prompts: the eight templates of the spec, embedding the real project material', async () => {
        const client = await connect(era);
        const { prompts } = await client.listPrompts();
        assert.deepEqual(prompts.map((p) => p.name).sort(), [...PROMPT_NAMES].sort());
        const get = async (name: string, args: Record<string, string>) =>
          textOf({ content: (await client.getPrompt({ name, arguments: args })).messages.map((m) => m.content) });
        const open = await get('grounded_theory_open_coding', { source_id: String(ids.a) });
        assert.ok(open.includes(TEXT_A), 'the source text');
        assert.ok(open.includes('Sense of belonging') && open.includes('Council bureaucracy'), 'the existing codes');
        assert.match(open, /batch_apply_codes/);
        const excerpt = await get('grounded_theory_open_coding', { source_id: String(ids.a), max_length: '10' });
        assert.ok(
          excerpt.includes([...TEXT_A].slice(0, 10).join('')) && !excerpt.includes(TEXT_A) && /start_pos": 10/.test(excerpt),
          'an excerpt says where to read on',
        );
        const thematic = await get('thematic_analysis', { source_id: String(ids.b) });
        assert.ok(thematic.includes(TEXT_B) && thematic.includes('How do gardeners come to belong?'));
        assert.ok((await get('thematic_analysis', { source_id: String(ids.b), research_questions: 'Why do people quit?' })).includes('Why do people quit?'));
        const summary = await get('summarize_code', { code_id: String(ids.belonging) });
        assert.ok(
          summary.includes('feeling at home') && summary.includes('"Ben: I joine"') && summary.includes('The garden 🌱 gave me a place to belong.'),
          'the memo and every segment',
        );
        const axial = await get('axial_coding', {});
        assert.ok(axial.includes('Belonging') && axial.includes('The garden'));
        const selective = await get('selective_coding', {});
        assert.match(
          selective,
          /Sense of belonging \[\d+\] \+ Sharing resources \[\d+\]: 1 overlap/,
          'the overlapping codings of amara.txt are a relationship',
        );
        const patterns = await get('identify_patterns', {});
        assert.match(patterns, /Sense of belonging \+ Sharing resources: 1 overlap/);
        const compare = await get('compare_cases', { case_ids: `${ids.case1},${ids.case2}` });
        assert.ok(compare.includes('Case "Amara"') && compare.includes('Case "Ben"') && compare.includes('age = 34'));
        const memo = await get('write_memo', { code_id: String(ids.trust) });
        assert.ok(memo.includes('Council bureaucracy') && memo.includes('the council forms'));
        const catMemo = await get('write_memo', { category_id: String(ids.category) });
        assert.ok(catMemo.includes('Category "Belonging"') && catMemo.includes('Sense of belonging'));
        await assert.rejects(client.getPrompt({ name: 'summarize_code', arguments: { code_id: '99999' } }), /CODE_NOT_FOUND/);
        await assert.rejects(client.getPrompt({ name: 'grounded_theory_open_coding', arguments: { source_id: 'x' } }), /positive integer/);
        await assert.rejects(client.getPrompt({ name: 'write_memo', arguments: {} }), /exactly one/);
      });
    });
  }

  it('2026-07-28: committed events arrive as resources/updated on subscriptions/listen', async () => {
    const client = await connect('modern');
    const seen: string[] = [];
    let listChanged = 0;
    client.setNotificationHandler('notifications/resources/updated', (n) => void seen.push(n.params.uri));
    client.setNotificationHandler('notifications/resources/list_changed', () => void listChanged++);
    const sub = await client.listen({
      resourceSubscriptions: ['qda://codes', 'qda://project/briefing', `qda://codes/${ids.water}`],
      resourcesListChanged: true,
    });
    try {
      await asResearcher('rename_code', { code_id: ids.water, new_name: 'Sharing water' });
      await asResearcher('create_code', { name: 'Listen probe', color: '#111111' });
      const deadline = Date.now() + 5000;
      while ((!seen.includes(`qda://codes/${ids.water}`) || listChanged === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(seen.includes('qda://codes'), JSON.stringify(seen));
      assert.ok(seen.includes('qda://project/briefing'));
      assert.ok(seen.includes(`qda://codes/${ids.water}`));
      assert.ok(!seen.some((u) => u.startsWith('qda://sources')), 'only the URIs subscribed to');
      assert.ok(listChanged > 0, 'a new code changes the resource list');
      const briefing = JSON.parse(((await client.readResource({ uri: 'qda://project/briefing' })).contents[0] as { text: string }).text);
      assert.equal(briefing.coding_progress.total_codes, 4, 'the cached briefing was invalidated');
    } finally {
      await sub.close();
      await asResearcher('rename_code', { code_id: ids.water, new_name: 'Sharing resources' });
      const probe = handle.repo.listCodes().find((c) => c.name === 'Listen probe');
      if (probe) await asResearcher('delete_code', { code_id: probe.code_id });
    }
  });

  it('the HTTP guards apply to /mcp: no token 401, a bad token 401, a foreign Origin 403', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    const post = (headers: Record<string, string>) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });
    assert.equal((await post({})).status, 401);
    assert.equal((await post({ authorization: 'Bearer wrong' })).status, 401);
    assert.equal((await post({ authorization: `Bearer ${TOKENS.agent}`, origin: 'http://evil.example' })).status, 403);
    const ok = await post({ authorization: `Bearer ${TOKENS.agent}` });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
  });
});

describe('adapters/mcp resource changes by event', () => {
  const ev = (event_type: string, payload: Record<string, unknown>, aggregate_type = 'code', aggregate_id = '1') =>
    ({
      event_id: 'x',
      event_type,
      timestamp: '',
      aggregate_type,
      aggregate_id,
      caused_by: { session_id: 's', client_type: 'CUSTOM', user: 'u' },
      payload,
      metadata: { correlation_id: 'c', sequence_number: 1 },
    }) as any;

  it('maps a coding to its code, source and segment resources', () => {
    const c = resourcesTouchedBy([ev('coding.segment_coded', { segment_id: 7, code_id: 3, source_id: 2 }, 'segment', '7')]);
    for (const u of [
      'qda://codes',
      'qda://codes/3',
      'qda://codes/3/segments',
      'qda://sources/2/segments',
      'qda://segments?code_id=3',
      'qda://segments?source_id=2',
      'qda://segments/7',
      'qda://project/briefing',
    ])
      assert.ok(c.updated.has(u), u);
    assert.equal(c.listChanged, false);
  });

  it('creations and deletions change the list; session events change nothing', () => {
    assert.equal(resourcesTouchedBy([ev('coding.code_created', { code_id: 4, name: 'X' })]).listChanged, true);
    assert.equal(resourcesTouchedBy([ev('source.imported', { source_id: 4 }, 'source', '4')]).listChanged, true);
    assert.equal(resourcesTouchedBy([ev('case.deleted', { case_id: 4 }, 'case', '4')]).listChanged, true);
    const s = resourcesTouchedBy([ev('session.connected', { session_id: 's' }, 'session', 's')]);
    assert.equal(s.updated.size, 0);
    const edited = resourcesTouchedBy([ev('source.text_edited', { source_id: 5 }, 'source', '5')]);
    assert.ok(edited.updated.has('qda://sources/5/content') && edited.updated.has('qda://sources/5/segments'));
  });

  it('a case renamed changes the list; an attribute renamed touches the attributes of every case it names; a member removed touches the members', () => {
    assert.equal(resourcesTouchedBy([ev('case.renamed', { case_id: 4, old_name: 'A', new_name: 'B' }, 'case', '4')]).listChanged, true);
    const renamed = resourcesTouchedBy([ev('case.attribute_renamed', { old_name: 'Age', new_name: 'Years', case_ids: [4, 9] }, 'case', '4')]);
    for (const u of ['qda://cases/4/attributes', 'qda://cases/9/attributes', 'qda://cases/9']) assert.ok(renamed.updated.has(u), u);
    assert.equal(renamed.listChanged, false);
    const removed = resourcesTouchedBy([ev('case.member_removed', { case_id: 4, source_id: 2, segment_range: null }, 'case', '4')]);
    assert.ok(removed.updated.has('qda://cases/4/members'));
  });
});

describe('adapters/mcp over stdio (`marginalia mcp`, built CLI)', function () {
  this.timeout(90_000);
  const bin = path.join(REPO_ROOT, 'bin', 'marginalia.js');
  let dir: string;
  let home: string;

  before(() => {
    if (!fs.existsSync(path.join(REPO_ROOT, 'dist', 'cli.js'))) execFileSync(process.execPath, ['esbuild.mjs'], { cwd: REPO_ROOT, stdio: 'ignore' });
  });
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-mcp-stdio-'));
    home = path.join(dir, '.marginalia-home');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const env = () =>
    ({ ...process.env, MARGINALIA_HOME: home, MARGINALIA_TOKEN: AGENT_TOKEN, MARGINALIA_REVIEWER_TOKEN: REVIEWER_TOKEN }) as Record<string, string>;

  async function stdioClient(era: Era, project: string, name: string): Promise<{ client: Client; stderr: () => string }> {
    const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--project', project, '--create'], env: env(), stderr: 'pipe' });
    let err = '';
    transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const client = clientFor(era, name);
    await client.connect(transport);
    return { client, stderr: () => err };
  }

  for (const era of ERAS) {
    it(`${era}: owns the project when nobody else does: tools, pending approval, resources, prompts; stdout is only the protocol`, async () => {
      const project = path.join(dir, 'own.qda');
      const { client, stderr } = await stdioClient(era, project, `stdio-${era}`);
      try {
        assert.equal(client.getProtocolEra(), era);
        const { tools } = await client.listTools();
        assert.ok(tools.length >= 70 && tools.some((t) => t.name === 'get_approval_status'));
        const src = await client.callTool({ name: 'add_text_source', arguments: { name: 'n.txt', content: 'hello stdio' } });
        assert.equal(
          (src.structuredContent as { status: string }).status,
          'pending_approval',
          'source creation waits for the researcher (trust default suggest)',
        );
        const code = await client.callTool({ name: 'create_code', arguments: { name: 'Hope', color: '#59A14F' } });
        const pending = code.structuredContent as { status: string; request_id: string };
        assert.equal(pending.status, 'pending_approval');
        const status = await client.callTool({ name: 'get_approval_status', arguments: { request_id: pending.request_id } });
        assert.equal((status.structuredContent as { client_name: string }).client_name, `stdio-${era}`, 'the session is named after clientInfo');
        const briefing = JSON.parse(((await client.readResource({ uri: 'qda://project/briefing' })).contents[0] as { text: string }).text);
        assert.equal(briefing.project_name, 'own');
        assert.deepEqual(briefing.coding_progress, { total_sources: 0, coded_sources: 0, total_codes: 0, total_segments: 0 });
        const prompt = await client.getPrompt({ name: 'identify_patterns', arguments: {} });
        assert.match(textOf({ content: prompt.messages.map((m) => m.content) }), /Identify patterns/);

        // the researcher approves over the HTTP server this process also runs (named in its discovery file)
        const discovery = JSON.parse(fs.readFileSync(fs.readdirSync(path.join(home, 'servers')).map((f) => path.join(home, 'servers', f))[0]!, 'utf8')) as {
          url: string;
          pid: number;
        };
        if (era === 'legacy') await client.subscribeResource({ uri: 'qda://codes' });
        const updates: string[] = [];
        client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
        const sub = era === 'modern' ? await client.listen({ resourceSubscriptions: ['qda://codes'] }) : undefined;
        const approve = await fetch(`${discovery.url}/approvals/${pending.request_id}/approve`, {
          method: 'POST',
          headers: { authorization: `Bearer ${REVIEWER_TOKEN}`, 'content-type': 'application/json' },
          body: '{}',
        });
        assert.equal(approve.status, 200, await approve.text());
        const deadline = Date.now() + 5000;
        while (!updates.includes('qda://codes') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        assert.ok(updates.includes('qda://codes'), `a subscribed resource is updated (${era}): ${JSON.stringify(updates)}`);
        const done = await client.callTool({ name: 'get_approval_status', arguments: { request_id: pending.request_id } });
        assert.equal((done.structuredContent as { status: string }).status, 'completed');
        await sub?.close();
      } finally {
        await client.close();
      }
      assert.match(stderr(), /serving MCP on stdio/, 'logs go to stderr');
    });

    it(`${era}: forwards every message to the process that owns the project, whose trust layer and researcher see the call`, async () => {
      const project = path.join(dir, 'owned.qda');
      let owner: ServerProcess | undefined;
      try {
        owner = await startServer(project, [], { MARGINALIA_HOME: home });
        const { client, stderr } = await stdioClient(era, project, `forwarded-${era}`);
        try {
          assert.equal(client.getProtocolEra(), era);
          const r = await client.callTool({ name: 'create_code', arguments: { name: 'Forwarded', color: '#59A14F' } });
          const pending = r.structuredContent as { status: string; request_id: string };
          assert.equal(pending.status, 'pending_approval');
          const seen = await fetch(`${owner.base}/approvals?status=pending`, { headers: { authorization: `Bearer ${REVIEWER_TOKEN}` } });
          const list = ((await seen.json()) as { data: { approvals: { request_id: string; client_name: string }[] } }).data.approvals;
          const mine = list.find((a) => a.request_id === pending.request_id);
          assert.equal(mine?.client_name, `forwarded-${era}`, 'the owner saw the call, from the client it came from');
          const codes = await client.callTool({ name: 'list_codes', arguments: {} });
          assert.equal((codes.structuredContent as { count: number }).count, 0);
          const missing = await client.callTool({ name: 'get_code', arguments: { code_id: 5 } });
          assert.equal((missing.structuredContent as { error_code: string }).error_code, 'CODE_NOT_FOUND');
          const briefing = JSON.parse(((await client.readResource({ uri: 'qda://project/briefing' })).contents[0] as { text: string }).text);
          assert.equal(briefing.project_name, 'owned');
          await assert.rejects(client.readResource({ uri: 'qda://codes/77' }), (e: { code?: number }) => e.code === -32602);
          assert.match(stderr(), /forwarding MCP to http:\/\/127\.0\.0\.1:\d+\/mcp/);
          const http = await callTool(owner.base, 'list_codes', {}, { authorization: `Bearer ${AGENT_TOKEN}` });
          assert.equal(http.status, 200, 'the owner still serves its own clients');
        } finally {
          await client.close();
        }
      } finally {
        await owner?.stop();
      }
    });
  }
});
