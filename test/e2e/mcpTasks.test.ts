/**
 * Issue 14 item 6: where an MCP client declares the tasks capability (MCP 2025-11-25 "Tasks"), a held call is
 * answered as a task that completes when the researcher decides. Real clients against the built CLI: the official
 * SDK client (@modelcontextprotocol/client 2.4.0, 2025-11-25 era) sending task-augmented calls and `tasks/*`
 * requests itself, and the SDK's tasks package (@modelcontextprotocol/ext-tasks 0.2.2, `createTaskSessionFromClient`,
 * which polls by itself), over Streamable HTTP to `marginalia serve`, over stdio to a `marginalia mcp` that owns its
 * project, and over stdio to a `marginalia mcp` that forwards to `marginalia serve`. The researcher decides over
 * the HTTP interface (`POST /approvals/{id}/approve|reject` with the reviewer token). Over stdio a finished task is
 * also told with `notifications/tasks/status`.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { z } from 'zod';
import { AGENT_TOKEN, AS_RESEARCHER, REPO_ROOT, REVIEWER_TOKEN, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

const BIN = path.join(REPO_ROOT, 'bin', 'marginalia.js');
const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const REQUEST_META = 'marginalia/request_id';
/** what a client that understands tasks declares (2025-11-25 ClientCapabilities.tasks) */
const TASKS_CAPABILITY = { tasks: { list: {}, cancel: {} } };
const anyResult = z.looseObject({});

/** The tasks package is ESM only (exports with the `import` condition alone): loaded with import(). */
type ExtTasks = typeof import('@modelcontextprotocol/ext-tasks/client');
let extTasks: ExtTasks;

interface WireTask {
  taskId: string;
  status: string;
  statusMessage?: string;
  pollInterval?: number;
  ttl: number | null;
  createdAt: string;
  lastUpdatedAt: string;
  _meta?: Record<string, unknown>;
}

/** One raw request through the SDK client (the era's codec checks the method; the answer is taken as it is). */
async function rpc(client: Client, method: string, params: Record<string, unknown>): Promise<any> {
  return client.request({ method, params } as never, anyResult);
}

/** tools/call with `params.task`: the CreateTaskResult's task and `_meta`. */
async function callAsTask(client: Client, name: string, args: Record<string, unknown>): Promise<{ task: WireTask; meta: Record<string, unknown> }> {
  const r = await rpc(client, 'tools/call', { name, arguments: args, task: { ttl: 600_000 } });
  assert.ok(r.task, `a task answer: ${JSON.stringify(r)}`);
  return { task: r.task as WireTask, meta: (r._meta ?? {}) as Record<string, unknown> };
}

async function until(what: string, fn: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function writeConfig(dir: string): void {
  fs.mkdirSync(path.join(dir, '.marginalia'), { recursive: true });
  // create_code and rename_code held (suggest); reads run; agents poll every 100 ms
  fs.writeFileSync(
    path.join(dir, '.marginalia', 'config.yaml'),
    [
      'agent_context:',
      '  trust:',
      '    overrides:',
      '      create_code: suggest',
      '      rename_code: suggest',
      '  approvals:',
      '    poll_after_ms: 100',
      '  sessions:',
      '    max_concurrent: 50',
      '',
    ].join('\n'),
  );
}

describe('e2e: MCP tasks for held calls (2025-11-25 tasks; SDK client and ext-tasks)', function () {
  this.timeout(120_000);
  let dir = '';
  let server: ServerProcess;
  const clients: Client[] = [];

  async function httpClient(name: string, capabilities: Record<string, unknown> | undefined, token = AGENT_TOKEN): Promise<Client> {
    const client = new Client({ name, version: '1.0.0' }, capabilities ? { capabilities } : {});
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    clients.push(client);
    return client;
  }

  async function approval(base: string, id: string): Promise<any> {
    const r = await request(base, 'GET', `/approvals/${id}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data;
  }

  before(async () => {
    extTasks = await import('@modelcontextprotocol/ext-tasks/client');
    dir = tmpDir('marginalia-mcp-tasks-');
    writeConfig(dir);
    server = await startServer(path.join(dir, 'tasks.qda'));
  });
  afterEach(async () => {
    while (clients.length > 0) await clients.pop()?.close();
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('Streamable HTTP (marginalia serve)', () => {
    it('the server declares tasks for tools/call and lists every tool as callable as a task', async () => {
      const client = await httpClient('tasks-caps', TASKS_CAPABILITY);
      assert.equal(client.getProtocolEra(), 'legacy');
      assert.deepEqual(client.getServerCapabilities()?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const { tools } = await client.listTools();
      assert.deepEqual(tools.find((t) => t.name === 'create_code')?.execution, { taskSupport: 'optional' });
      assert.deepEqual(tools.find((t) => t.name === 'list_codes')?.execution, { taskSupport: 'optional' });
    });

    it('a held call becomes a working task; the researcher approves over HTTP and the task completes with the real result', async () => {
      const client = await httpClient('tasks-approve', TASKS_CAPABILITY);
      const { task, meta } = await callAsTask(client, 'create_code', { name: 'Belonging', color: '#4E79A7' });
      assert.equal(task.status, 'working');
      assert.equal(task.pollInterval, 100);
      assert.ok(typeof task.ttl === 'number' && task.ttl >= 600_000, String(task.ttl));
      const requestId = meta[REQUEST_META] as string;
      assert.match(requestId, /^[0-9a-f-]{36}$/);
      assert.match(String(meta['io.modelcontextprotocol/model-immediate-response']), /waits for the researcher's approval/);
      assert.equal((await approval(server.base, requestId)).status, 'pending');

      const working = (await rpc(client, 'tasks/get', { taskId: task.taskId })) as WireTask;
      assert.equal(working.status, 'working');
      assert.equal(working._meta?.[REQUEST_META], requestId);
      // nothing ran yet
      const before = await request(server.base, 'POST', '/tools/list_codes', { arguments: {} });
      assert.equal(
        (before.body.data.codes as { name: string }[]).some((c) => c.name === 'Belonging'),
        false,
      );

      // tasks/result waits for the decision: ask first, approve after
      const result = rpc(client, 'tasks/result', { taskId: task.taskId });
      const approved = await request(server.base, 'POST', `/approvals/${requestId}/approve`, {}, AS_RESEARCHER);
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      const done = await result;
      assert.notEqual(done.isError, true, JSON.stringify(done));
      assert.equal(done.structuredContent.name, 'Belonging');
      assert.equal(done.structuredContent.code_id, approved.body.data.result.code_id);
      assert.deepEqual(done._meta?.[RELATED_TASK], { taskId: task.taskId });
      const completed = (await rpc(client, 'tasks/get', { taskId: task.taskId })) as WireTask;
      assert.equal(completed.status, 'completed');
      assert.equal(completed.pollInterval, undefined);

      const listed = (await rpc(client, 'tasks/list', {})) as { tasks: WireTask[] };
      assert.equal(listed.tasks.find((t) => t.taskId === task.taskId)?.status, 'completed');
      const after = await request(server.base, 'POST', '/tools/list_codes', { arguments: {} });
      assert.ok((after.body.data.codes as { name: string }[]).some((c) => c.name === 'Belonging'));
    });

    it('the ext-tasks session: the held call settles with the tool result once approved', async () => {
      const client = await httpClient('tasks-ext', TASKS_CAPABILITY);
      const session = extTasks.createTaskSessionFromClient(client, { endpointId: 'marginalia-http' });
      try {
        const execution = await session.callTool('create_code', { name: 'Water rota', color: '#F28E2B' }, { task: { preference: 'prefer' } });
        const handle = (execution as { handle?: { taskId: string } }).handle;
        assert.ok(handle?.taskId, 'task-backed execution');
        let requestId = '';
        await until('the request to be pending', async () => {
          const list = await request(server.base, 'GET', '/approvals?status=pending');
          const found = (list.body.data.approvals as { request_id: string; arguments: { name?: string } }[]).find((a) => a.arguments.name === 'Water rota');
          requestId = found?.request_id ?? '';
          return requestId !== '';
        });
        assert.equal((await request(server.base, 'POST', `/approvals/${requestId}/approve`, {}, AS_RESEARCHER)).status, 200);
        const outcome = await execution.result();
        assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
        const result = (outcome as { result: { structuredContent?: { name?: string } } }).result;
        assert.equal(result.structuredContent?.name, 'Water rota');
      } finally {
        await session.close();
      }
    });

    it('rejected: the task fails and its result is an error naming the reason', async () => {
      const client = await httpClient('tasks-reject', TASKS_CAPABILITY);
      const { task, meta } = await callAsTask(client, 'create_code', { name: 'Not this one', color: '#E15759' });
      const requestId = meta[REQUEST_META] as string;
      const rejected = await request(server.base, 'POST', `/approvals/${requestId}/reject`, { reason: 'too broad' }, AS_RESEARCHER);
      assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
      const failed = (await rpc(client, 'tasks/get', { taskId: task.taskId })) as WireTask;
      assert.equal(failed.status, 'failed');
      assert.match(failed.statusMessage ?? '', /rejected by Test Researcher: too broad/);
      const result = await rpc(client, 'tasks/result', { taskId: task.taskId });
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent.status, 'rejected');
      assert.equal(result.structuredContent.reason, 'too broad');
      assert.equal(result.structuredContent.timed_out, false);

      // the ext-tasks session reports the failure
      const session = extTasks.createTaskSessionFromClient(await httpClient('tasks-ext-reject', TASKS_CAPABILITY), { endpointId: 'marginalia-http-2' });
      try {
        const execution = await session.callTool('create_code', { name: 'Also not', color: '#E15759' }, { task: { preference: 'prefer' } });
        let id = '';
        await until('the request to be pending', async () => {
          const list = await request(server.base, 'GET', '/approvals?status=pending');
          id =
            (list.body.data.approvals as { request_id: string; arguments: { name?: string } }[]).find((a) => a.arguments.name === 'Also not')?.request_id ?? '';
          return id !== '';
        });
        assert.equal((await request(server.base, 'POST', `/approvals/${id}/reject`, { reason: 'no' }, AS_RESEARCHER)).status, 200);
        const outcome = await execution.result();
        assert.equal(outcome.status, 'failed');
        assert.match(String((outcome as { error?: Error }).error?.message), /rejected by Test Researcher: no/);
      } finally {
        await session.close();
      }
    });

    it('tasks/cancel withdraws the pending request; a finished task cannot be cancelled', async () => {
      const client = await httpClient('tasks-cancel', TASKS_CAPABILITY);
      const { task, meta } = await callAsTask(client, 'create_code', { name: 'Withdrawn', color: '#76B7B2' });
      const requestId = meta[REQUEST_META] as string;
      const cancelled = (await rpc(client, 'tasks/cancel', { taskId: task.taskId })) as WireTask;
      assert.equal(cancelled.status, 'cancelled');
      const record = await approval(server.base, requestId);
      assert.equal(record.status, 'rejected');
      assert.equal(record.reason, 'withdrawn by the agent');
      // the researcher can no longer run it
      const late = await request(server.base, 'POST', `/approvals/${requestId}/approve`, {}, AS_RESEARCHER);
      assert.equal(late.status, 409, JSON.stringify(late.body));
      assert.equal(late.body.error_code, 'APPROVAL_NOT_PENDING');
      await assert.rejects(rpc(client, 'tasks/cancel', { taskId: task.taskId }), (e: { code?: number }) => e.code === -32602);
      assert.equal(((await rpc(client, 'tasks/get', { taskId: task.taskId })) as WireTask).status, 'cancelled');
    });

    it('a call that is not held: as a task it is completed at once; as a plain call it answers plainly', async () => {
      const client = await httpClient('tasks-auto', TASKS_CAPABILITY);
      const { task, meta } = await callAsTask(client, 'list_codes', {});
      assert.equal(task.status, 'completed');
      assert.equal(meta[REQUEST_META], undefined);
      const result = await rpc(client, 'tasks/result', { taskId: task.taskId });
      assert.ok(Array.isArray(result.structuredContent.codes), JSON.stringify(result));
      const plain = await client.callTool({ name: 'list_codes', arguments: {} });
      assert.ok(Array.isArray((plain.structuredContent as { codes?: unknown }).codes));
      assert.equal((plain as { task?: unknown }).task, undefined);
    });

    it('a client without the tasks capability gets the pending answer as before', async () => {
      const client = await httpClient('tasks-none', undefined);
      const r = await client.callTool({ name: 'create_code', arguments: { name: 'Plain pending', color: '#59A14F' } });
      const data = r.structuredContent as { status?: string; request_id?: string };
      assert.equal(data.status, 'pending_approval');
      assert.equal((r as { task?: unknown }).task, undefined);
      assert.equal((await request(server.base, 'POST', `/approvals/${data.request_id}/reject`, { reason: 'cleanup' }, AS_RESEARCHER)).status, 200);
    });

    it("another agent's credential cannot read, await or cancel the task", async () => {
      const made = await request(server.base, 'POST', '/agents', { name: 'Other' }, AS_RESEARCHER);
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const mine = await httpClient('tasks-mine', TASKS_CAPABILITY);
      const { task, meta } = await callAsTask(mine, 'create_code', { name: 'Mine only', color: '#EDC948' });
      const other = await httpClient('tasks-other', TASKS_CAPABILITY, made.body.data.token);
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel'])
        await assert.rejects(rpc(other, method, { taskId: task.taskId }), (e: { code?: number }) => e.code === -32602, method);
      assert.equal(((await rpc(other, 'tasks/list', {})) as { tasks: WireTask[] }).tasks.length, 0);
      assert.equal((await approval(server.base, meta[REQUEST_META] as string)).status, 'pending');
      assert.equal(((await rpc(mine, 'tasks/cancel', { taskId: task.taskId })) as WireTask).status, 'cancelled');
    });
  });

  describe('stdio (marginalia mcp)', () => {
    const home = () => path.join(dir, '.marginalia-home');

    async function stdioClient(project: string, name: string, capabilities?: Record<string, unknown>): Promise<{ client: Client; stderr: () => string }> {
      const env = { ...process.env, MARGINALIA_HOME: home(), MARGINALIA_TOKEN: AGENT_TOKEN, MARGINALIA_REVIEWER_TOKEN: REVIEWER_TOKEN } as Record<
        string,
        string
      >;
      const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--project', project, '--create'], env, stderr: 'pipe' });
      let err = '';
      transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
      const client = new Client({ name, version: '1.0.0' }, capabilities ? { capabilities } : {});
      await client.connect(transport);
      clients.push(client);
      return { client, stderr: () => err };
    }

    /** The HTTP base of the `marginalia mcp` that owns `project` (its discovery file). */
    function ownerBase(project: string): string {
      const files = fs.readdirSync(path.join(home(), 'servers')).map((f) => path.join(home(), 'servers', f));
      for (const f of files) {
        const d = JSON.parse(fs.readFileSync(f, 'utf8')) as { url: string; project?: string };
        if (d.project === undefined || path.resolve(d.project) === path.resolve(project)) return d.url.replace(/\/mcp$/, '').replace(/\/$/, '');
      }
      assert.fail(`no discovery file for ${project}: ${files.join(', ')}`);
    }

    it('owning the project: a held call is a task; the researcher approves over HTTP; a client without the capability is answered pending', async () => {
      const project = path.join(dir, 'stdio-owned.qda');
      const { client } = await stdioClient(project, 'stdio-tasks', TASKS_CAPABILITY);
      assert.equal(client.getProtocolEra(), 'legacy');
      assert.deepEqual(client.getServerCapabilities()?.tasks?.requests, { tools: { call: {} } });
      const base = ownerBase(project);
      // stdio can push: a finished task is told with notifications/tasks/status
      const statuses: { taskId?: string; status?: string }[] = [];
      client.fallbackNotificationHandler = async (n) => {
        if (n.method === 'notifications/tasks/status') statuses.push(n.params as { taskId?: string; status?: string });
      };
      const { task, meta } = await callAsTask(client, 'create_code', { name: 'Stdio code', color: '#B07AA1' });
      assert.equal(task.status, 'working');
      assert.equal(((await rpc(client, 'tasks/get', { taskId: task.taskId })) as WireTask).status, 'working');
      const result = rpc(client, 'tasks/result', { taskId: task.taskId });
      const approved = await request(base, 'POST', `/approvals/${meta[REQUEST_META] as string}/approve`, {}, AS_RESEARCHER);
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      const done = await result;
      assert.equal(done.structuredContent.name, 'Stdio code');
      assert.equal(((await rpc(client, 'tasks/get', { taskId: task.taskId })) as WireTask).status, 'completed');
      await until('the task status notification', async () => statuses.some((n) => n.taskId === task.taskId && n.status === 'completed'));
      await client.close();
      clients.pop();

      // the same call with params.task from a client that declared no tasks capability: the pending answer
      const { client: plain } = await stdioClient(project, 'stdio-no-tasks');
      const r = await rpc(plain, 'tools/call', { name: 'create_code', arguments: { name: 'Stdio plain', color: '#FF9DA7' }, task: {} });
      assert.equal(r.task, undefined, JSON.stringify(r));
      assert.equal(r.structuredContent.status, 'pending_approval');
    });

    it('forwarding to marginalia serve: the task lives on the owner and completes when approved there', async () => {
      const { client, stderr } = await stdioClient(path.join(dir, 'tasks.qda'), 'stdio-forwarded', TASKS_CAPABILITY);
      assert.match(stderr(), /forwarding MCP to http:\/\/127\.0\.0\.1:\d+\/mcp/);
      const { task, meta } = await callAsTask(client, 'create_code', { name: 'Forwarded code', color: '#9C755F' });
      assert.equal(task.status, 'working');
      const approved = await request(server.base, 'POST', `/approvals/${meta[REQUEST_META] as string}/approve`, {}, AS_RESEARCHER);
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      const done = await rpc(client, 'tasks/result', { taskId: task.taskId });
      assert.equal(done.structuredContent.name, 'Forwarded code');
    });
  });
});
