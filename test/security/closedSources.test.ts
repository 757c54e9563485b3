/**
 * Sources closed to agents (issue 14 item 11; src/agent/agentAccess.ts): "no read tool, search, resource,
 * prompt, report or export run by an agent returns a word of a closed source". The whole server in process
 * (test/security/stack.ts: real HTTP on 127.0.0.1, MCP over Streamable HTTP with the official MCP SDK client),
 * a real sql.js project on disk. The researcher (reviewer token) closes one source directly, a case holding
 * another, a folder holding a third, and a fourth only to the agent "bob"; each closed text holds a planted
 * word found nowhere else. Then, as agents:
 * - every agent-facing read tool of the registry is called (a tool missing from the argument table below
 *   fails the test, so a new read tool is checked too), with the closed source's, segment's and case's ids
 *   where it takes them: each taking a closed source or segment answers 403 SOURCE_CLOSED naming the source;
 *   no answer holds a planted word;
 * - writes that name a closed source and the exports (which would write its words to a file) are refused;
 * - every MCP resource and resource template, and every MCP prompt, read through the SDK client: no planted word;
 * - the REST state routes, WebSocket, gRPC (mutual TLS) and the CLI adapter: refused or redacted alike;
 * - the stored event history and a live SSE stream: a marker instead of a coding's text;
 * - named agents: the source closed to bob only is readable by alice, refused to bob;
 * - the researcher still reads everything; reopening restores the agents' access.
 */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import WebSocket from 'ws';
import { TOOLS } from '../../src/tools/registry';
import { LocalCliBackend, runCommand } from '../../src/adapters/cli/cliAdapter';
import { AS_AGENT, AS_RESEARCHER, TOKENS, clientCert, grpcClient, grpcUnary, raw, startStack, type RawResult, type Stack } from './stack';

/** The planted words: one per closed source, found in no other source. */
const SECRET = { direct: 'zyxwvutsrq', caseClosed: 'qponmlkjih', folderClosed: 'wqertyuiop', bobOnly: 'xyzzyplugh' };
/** Other words of the closed texts that no open source holds. */
const OTHER_CLOSED_WORDS = ['lanterns', 'smuggled', 'chimney', 'crooked', 'violet', 'parcel'];
const ALL_CLOSED = [SECRET.direct, SECRET.caseClosed, SECRET.folderClosed, ...OTHER_CLOSED_WORDS];

const TEXTS = {
  direct: `The harbour pilot spoke of ${SECRET.direct} and the night ferries. Nobody else knew about the smuggled lanterns on the quay.`,
  caseClosed: `At the harbour I wrote ${SECRET.caseClosed} in my notebook, beside the crooked chimney of the net loft.`,
  folderClosed: `Dear harbour master, the ${SECRET.folderClosed} parcel arrived with the violet stamps this morning.`,
  bobOnly: `Only one agent may not read this: ${SECRET.bobOnly} at the harbour gate.`,
  open: 'The harbour was calm and the ferries ran on time; we talked about the weather and the tides.',
};

/** Which planted words `text` holds. */
function leaks(text: string, words: readonly string[] = ALL_CLOSED): string[] {
  const lower = text.toLowerCase();
  return words.filter((w) => lower.includes(w));
}

describe('security: sources closed to agents', function () {
  this.timeout(120_000);
  let s: Stack;
  const ids = {
    direct: 0,
    caseClosed: 0,
    folderClosed: 0,
    bobOnly: 0,
    open: 0,
    code: 0,
    segDirect: 0,
    segOpen: 0,
    sealedCase: 0,
    openCase: 0,
    folder: 0,
    category: 0,
    report: 0,
  };
  const tokens = { alice: '', bob: '' };

  /** An agent's tool call over HTTP (`token` default: the install's agent token). */
  function asAgent(tool: string, args: Record<string, unknown>, token?: string, client = 'closed-sources-agent'): Promise<RawResult> {
    const auth = token ? { authorization: `Bearer ${token}` } : AS_AGENT;
    return raw(s.port, 'POST', `/tools/${tool}`, {
      headers: { ...auth, 'content-type': 'application/json', 'x-marginalia-client': client },
      body: { arguments: args },
    });
  }
  /** The researcher's tool call over HTTP with the reviewer token. */
  function asResearcherHttp(tool: string, args: Record<string, unknown>): Promise<RawResult> {
    return raw(s.port, 'POST', `/tools/${tool}`, {
      headers: { ...AS_RESEARCHER, 'content-type': 'application/json', 'x-marginalia-client': 'researcher-http' },
      body: { arguments: args },
    });
  }
  async function close(target: Record<string, number>, access: 'closed' | 'open', agents?: string[]): Promise<any> {
    const r = await asResearcherHttp('set_agent_access', { ...target, access, ...(agents ? { agents } : {}) });
    assert.equal(r.status, 200, r.text);
    return r.body.data;
  }

  before(async () => {
    // every tool runs at once for agents, so no read or write of theirs is merely held (a held call shows no text either)
    s = await startStack({ grpc: true, config: ['  trust:', '    default_level: auto'] });
    const add = async (name: string, content: string) => (await s.asResearcher('add_text_source', { name, content })).source_id as number;
    ids.direct = await add('Interview 07.txt', TEXTS.direct);
    ids.caseClosed = await add('Diary 3.txt', TEXTS.caseClosed);
    ids.folderClosed = await add('Letter 1.txt', TEXTS.folderClosed);
    ids.bobOnly = await add('For alice.txt', TEXTS.bobOnly);
    ids.open = await add('Open notes.txt', TEXTS.open);
    ids.category = (await s.asResearcher('create_category', { name: 'Places' })).category_id;
    ids.code = (await s.asResearcher('create_code', { name: 'Harbour', color: '#4E79A7' })).code_id;
    await s.asResearcher('move_code_to_category', { code_id: ids.code, category_id: ids.category });
    const code = async (sourceId: number, text: string) => {
      const r = await s.asResearcher('batch_apply_codes', {
        operations: [{ code_id: ids.code, source_id: sourceId, start_position: 0, end_position: [...text].length }],
      });
      return (r.results?.[0]?.segment_id ?? r.segments?.[0]?.segment_id ?? r.created?.[0]?.segment_id) as number;
    };
    ids.segDirect = await code(ids.direct, TEXTS.direct);
    await code(ids.caseClosed, TEXTS.caseClosed);
    await code(ids.folderClosed, TEXTS.folderClosed);
    await code(ids.bobOnly, TEXTS.bobOnly);
    ids.segOpen = await code(ids.open, TEXTS.open);
    if (!ids.segDirect) ids.segDirect = ((await s.asResearcher('list_segments_for_source', { source_id: ids.direct })).segments as any[])[0].segment_id;
    if (!ids.segOpen) ids.segOpen = ((await s.asResearcher('list_segments_for_source', { source_id: ids.open })).segments as any[])[0].segment_id;
    await s.asResearcher('update_segment_memo', { segment_id: ids.segDirect, memo: `The pilot's word ${SECRET.direct} matters` });
    ids.sealedCase = (await s.asResearcher('create_case', { name: 'Sealed' })).case_id;
    await s.asResearcher('add_source_to_case', { case_id: ids.sealedCase, source_id: ids.caseClosed });
    ids.openCase = (await s.asResearcher('create_case', { name: 'Open case' })).case_id;
    await s.asResearcher('add_source_to_case', { case_id: ids.openCase, source_id: ids.open });
    // a range of the directly closed source in an open case: its stored text must not reach an agent either
    await s.asResearcher('add_segment_to_case', { case_id: ids.openCase, source_id: ids.direct, start_pos: 0, end_pos: 40 });
    ids.folder = (await s.asResearcher('create_folder', { name: 'Private letters' })).folder_id;
    const sub = (await s.asResearcher('create_folder', { name: 'Sub', parent_id: ids.folder })).folder_id;
    await s.asResearcher('move_source_to_folder', { source_id: ids.folderClosed, folder_id: sub });
    ids.report = (await s.asResearcher('generate_frequency_report', {})).report_id ?? 1;
    tokens.alice = s.agent.credentials.issue('alice').token;
    tokens.bob = s.agent.credentials.issue('bob').token;

    // the researcher closes: one source, a case (holding another), a folder (its sub-folder holds a third), one source to bob only
    await close({ source_id: ids.direct }, 'closed');
    await close({ case_id: ids.sealedCase }, 'closed');
    await close({ folder_id: ids.folder }, 'closed');
    const named = await close({ source_id: ids.bobOnly }, 'closed', ['bob']);
    assert.deepEqual(named.agents, ['bob']);
  });
  after(async () => {
    await s?.close();
  });

  it("set_agent_access is the researcher's: an agent is refused and nothing changes; get_agent_access lists every closed source and why", async () => {
    const r = await asAgent('set_agent_access', { source_id: ids.direct, access: 'open' });
    assert.equal(r.status, 403);
    assert.equal(r.body.error_code, 'APPROVAL_FORBIDDEN');
    const got = await asResearcherHttp('get_agent_access', {});
    assert.equal(got.status, 200);
    const bySource = new Map((got.body.data.sources as any[]).map((x) => [x.source_id, x]));
    assert.deepEqual(
      [...bySource.keys()].sort((a, b) => a - b),
      [ids.direct, ids.caseClosed, ids.folderClosed, ids.bobOnly].sort((a, b) => a - b),
    );
    assert.deepEqual(bySource.get(ids.caseClosed).via, [{ kind: 'case', id: ids.sealedCase }]);
    assert.deepEqual(bySource.get(ids.folderClosed).via, [{ kind: 'folder', id: ids.folder }]);
    assert.deepEqual(bySource.get(ids.bobOnly).agents, ['bob']);
    // bad input: no target, two targets, an unknown source
    for (const [a, code] of [
      [{ access: 'closed' }, 'INVALID_ARGUMENTS'],
      [{ source_id: ids.open, case_id: ids.openCase, access: 'closed' }, 'INVALID_ARGUMENTS'],
      [{ source_id: 999999, access: 'closed' }, 'SOURCE_NOT_FOUND'],
    ] as const) {
      const bad = await asResearcherHttp('set_agent_access', a);
      assert.equal(bad.body.error_code, code, bad.text);
    }
  });

  it('read_source_content of a closed source answers 403 SOURCE_CLOSED naming the source; the researcher still reads it', async () => {
    for (const [id, title] of [
      [ids.direct, 'Interview 07.txt'],
      [ids.caseClosed, 'Diary 3.txt'],
      [ids.folderClosed, 'Letter 1.txt'],
    ] as const) {
      const r = await asAgent('read_source_content', { source_id: id });
      assert.equal(r.status, 403, r.text);
      assert.equal(r.body.error_code, 'SOURCE_CLOSED');
      assert.ok(r.body.error.includes(title) && /researcher closed/.test(r.body.error), r.body.error);
      assert.deepEqual(leaks(r.text), []);
    }
    const mine = await asResearcherHttp('read_source_content', { source_id: ids.direct });
    assert.equal(mine.status, 200);
    assert.ok(mine.text.includes(SECRET.direct));
    const segs = await asResearcherHttp('list_segments', { code_id: ids.code });
    assert.ok(segs.text.includes(SECRET.direct) && segs.text.includes(SECRET.caseClosed) && segs.text.includes(SECRET.folderClosed));
  });

  it('every read tool of the registry, called by an agent with the closed ids, refuses or redacts: no planted word in any answer', async () => {
    // ids of the closed source, its segment and the sealed case wherever a tool takes them
    const closedArgs: Record<string, Record<string, unknown>> = {
      list_codes: {},
      get_code: { code_id: ids.code },
      list_segments_for_source: { source_id: ids.direct },
      list_segments: { code_id: ids.code },
      retrieve_segments: { code_ids: [ids.code] },
      get_project_context: {},
      list_sources: {},
      read_source_content: { source_id: ids.direct },
      navigate_to_segment: { source_id: ids.direct, start_pos: 0, end_pos: 5 },
      suggest_source_metadata: { source_id: ids.direct, language: 'en' },
      list_folders: {},
      list_categories: {},
      analyze_content_for_codes: { source_id: ids.direct },
      list_pending_suggestions: {},
      detect_duplicate_codes: {},
      list_pending_coding_suggestions: {},
      analyze_uncoded_text: { source_id: ids.direct },
      suggest_codes_for_range: { source_id: ids.direct, start_pos: 0, end_pos: 20 },
      auto_suggest_codes: { source_id: ids.direct },
      get_suggestion_batch_status: { batch_id: 1 },
      find_similar_content: { search_text: 'harbour pilot night ferries' },
      list_av_segments: { source_id: ids.direct },
      transcribe_media: { source_id: ids.direct },
      detect_speakers: { source_id: ids.direct },
      export_data: { format: 'codebook', output_path: `${s.dir}/codebook.txt` },
      suggest_codes_for_transcript: { source_id: ids.direct },
      list_snapshots: {},
      view_diff: { from_ref: 'HEAD~1', to_ref: 'HEAD' },
      suggest_export_format: { use_case: 'share with NVivo' },
      list_cases: {},
      get_case: { case_id: ids.sealedCase },
      suggest_case_groupings: {},
      compare_cases: { case_ids: [ids.sealedCase, ids.openCase] },
      list_case_attributes: {},
      generate_frequency_report: {},
      generate_cooccurrence_report: { filters: { code_ids: [ids.code] } },
      generate_coder_comparison: { coder_ids: ['alice', 'bob'] },
      get_report: { report_id: ids.report },
      list_reports: {},
      search_text: { query: 'harbour' },
      search_semantic: { query: 'harbour' },
      search_codes: { query: 'harbour' },
      find_similar_segments: { segment_id: ids.segDirect },
      get_approval_status: { request_id: 'r-1' },
      list_pending_approvals: {},
      get_agent_access: {},
      // no source text: the team setting, the history's remote, and the merge conflicts of a project that has none here
      get_team_settings: {},
      get_remote_status: {},
      list_merge_conflicts: {},
    };
    // the project's lifecycle holds no source text, and closing it would end the suite
    const LIFECYCLE = new Set(['open_project', 'close_project']);
    const readTools = TOOLS.filter((t) => t.effect === 'read' && (t.audience ?? 'agents') === 'agents' && !t.researcherOnly && !LIFECYCLE.has(t.name)).map(
      (t) => t.name,
    );
    assert.deepEqual(
      readTools.filter((n) => !(n in closedArgs)),
      [],
      'a read tool without an entry here: add it, with the closed ids where it takes them',
    );
    let answered = 0;
    for (const name of readTools) {
      const a = closedArgs[name] as Record<string, unknown>;
      const r = await asAgent(name, a);
      assert.deepEqual(leaks(r.text), [], `${name} leaked: ${r.text.slice(0, 600)}`);
      assert.notEqual(r.status, 500, `${name}: ${r.text.slice(0, 300)}`);
      const writesFile = TOOLS.find((t) => t.name === name)?.paths?.some((p) => p.access === 'write') === true;
      if ('source_id' in a || 'segment_id' in a || writesFile) {
        assert.equal(r.body?.error_code, 'SOURCE_CLOSED', `${name} with a closed source: ${r.text.slice(0, 300)}`);
        assert.equal(r.status, 403);
      } else if (r.status === 200) answered++;
    }
    // the sweep is real: most list, search and report tools answered (with the closed text redacted)
    assert.ok(answered >= 20, `only ${answered} read tools answered`);
    // and the agent still sees open text: redaction is not blanket
    const open = await asAgent('search_text', { query: 'harbour' });
    assert.ok(open.text.includes('calm'), open.text.slice(0, 400));
    assert.ok(open.text.includes('[closed to agents'), 'a closed hit is marked, naming its source');
    const seg = await asAgent('list_segments', { code_id: ids.code });
    assert.ok(seg.text.includes('Interview 07.txt') && seg.text.includes('[closed to agents: source \\"Interview 07.txt\\"]'), seg.text.slice(0, 600));
  });

  it('writes that name a closed source, and exports, are refused to an agent', async () => {
    for (const [tool, a] of [
      ['apply_code', { code_id: ids.code, source_id: ids.direct, start_position: 0, end_position: 10 }],
      ['update_segment_memo', { segment_id: ids.segDirect, memo: 'x' }],
      ['export_data', { format: 'codebook', output_path: `${s.dir}/codebook.txt` }],
      ['export_report', { report_id: ids.report, format: 'csv', output_path: `${s.dir}/report.csv` }],
    ] as const) {
      const r = await asAgent(tool, a);
      assert.equal(r.body?.error_code, 'SOURCE_CLOSED', `${tool}: ${r.text.slice(0, 300)}`);
      assert.equal(r.status, 403);
    }
  });

  it('a copy of a closed transcript that an agent imports again shows no word of it', async () => {
    const fs = await import('node:fs');
    const file = `${s.dir}/Interview 07 original.txt`;
    fs.writeFileSync(file, TEXTS.direct);
    const imported = await asAgent('import_file_source', { file_path: file });
    assert.equal(imported.status, 200, imported.text.slice(0, 300));
    assert.deepEqual(leaks(imported.text), []);
    const copyId = imported.body.data.source_id as number;
    for (const [tool, a] of [
      ['read_source_content', { source_id: copyId }],
      ['search_text', { query: 'pilot' }],
      ['list_sources', {}],
    ] as const) {
      const r = await asAgent(tool, a);
      assert.equal(r.status, 200, r.text.slice(0, 300));
      assert.deepEqual(leaks(r.text), [], `${tool}: ${r.text.slice(0, 600)}`);
    }
    // an open source sharing a short phrase with a closed one is not blanked
    const open = await asAgent('read_source_content', { source_id: ids.open });
    assert.ok(open.text.includes('we talked about the weather'), open.text.slice(0, 300));
  });

  it('MCP: every resource, resource template and prompt read by an agent through the SDK client holds no planted word', async () => {
    const client = new Client({ name: 'closed-sources-mcp', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${s.base}/mcp`), { requestInit: { headers: { ...AS_AGENT, 'x-marginalia-client': 'closed-sources-mcp' } } }),
    );
    try {
      const uris = new Set<string>();
      for (const r of (await client.listResources()).resources) uris.add(r.uri);
      const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
      const fill = (t: string) =>
        t
          .replace('{code_id}', String(ids.code))
          .replace('{category_id}', String(ids.category))
          .replace('{source_id}', String(ids.direct))
          .replace('{?code_id}', `?code_id=${ids.code}`)
          .replace('{?source_id}', `?source_id=${ids.direct}`)
          .replace('{?case_id}', `?case_id=${ids.sealedCase}`)
          .replace('{segment_id}', String(ids.segDirect))
          .replace('{case_id}', String(ids.sealedCase))
          .replace('{report_id}', String(ids.report));
      for (const t of templates) uris.add(fill(t));
      for (const t of templates) if (t.includes('{case_id}')) uris.add(t.replace('{case_id}', String(ids.openCase)));
      uris.add(`qda://segments?case_id=${ids.openCase}`);
      let read = 0;
      for (const uri of uris) {
        let text: string;
        try {
          text = JSON.stringify(await client.readResource({ uri }));
          read++;
        } catch (e) {
          text = String(e instanceof Error ? `${e.message} ${JSON.stringify((e as { data?: unknown }).data ?? null)}` : e);
        }
        assert.deepEqual(leaks(text), [], `${uri}: ${text.slice(0, 600)}`);
      }
      assert.ok(read >= 15, `only ${read} resources read`);
      const promptArgs: Record<string, Record<string, string>> = {
        grounded_theory_open_coding: { source_id: String(ids.direct) },
        thematic_analysis: { source_id: String(ids.caseClosed) },
        axial_coding: {},
        selective_coding: {},
        summarize_code: { code_id: String(ids.code) },
        compare_cases: { case_ids: `${ids.sealedCase},${ids.openCase}` },
        identify_patterns: {},
        write_memo: { code_id: String(ids.code) },
      };
      const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
      assert.deepEqual(
        prompts.filter((p) => !(p in promptArgs)),
        [],
        'a prompt without an entry here: add it',
      );
      let got = 0;
      for (const name of prompts) {
        let text: string;
        try {
          text = JSON.stringify(await client.getPrompt({ name, arguments: promptArgs[name] }));
          got++;
        } catch (e) {
          text = String(e instanceof Error ? `${e.message} ${JSON.stringify((e as { data?: unknown }).data ?? null)}` : e);
          if ('source_id' in (promptArgs[name] as object)) assert.ok(text.includes('SOURCE_CLOSED'), `${name}: ${text}`);
        }
        assert.deepEqual(leaks(text), [], `${name}: ${text.slice(0, 600)}`);
      }
      assert.ok(got >= 5, `only ${got} prompts answered`);
      // a tool call over MCP is enforced by the same pipeline
      const r = (await client.callTool({ name: 'read_source_content', arguments: { source_id: ids.direct } })) as {
        isError?: boolean;
        structuredContent?: any;
      };
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent?.error_code, 'SOURCE_CLOSED');
    } finally {
      await client.close();
    }
  });

  it('REST state routes and WebSocket calls go through the same policy', async () => {
    const get = (path: string) => raw(s.port, 'GET', path, { headers: { ...AS_AGENT, 'x-marginalia-client': 'closed-sources-rest' } });
    const content = await get(`/state/sources/${ids.direct}/content`);
    assert.equal(content.status, 403, content.text.slice(0, 300));
    assert.equal(content.body.error_code, 'SOURCE_CLOSED');
    for (const path of ['/state/sources', `/state/segments?code_id=${ids.code}`, `/state/codes/${ids.code}`, '/state/project', '/state/cases']) {
      const r = await get(path);
      assert.deepEqual(leaks(r.text), [], `${path}: ${r.text.slice(0, 400)}`);
    }
    const ws = new WebSocket(`ws://127.0.0.1:${s.port}/ws`, { headers: { ...AS_AGENT, 'x-marginalia-client': 'closed-sources-ws' } });
    const frames: string[] = [];
    ws.on('message', (d) => void frames.push(String(d)));
    await new Promise<void>((resolve, reject) => {
      ws.once('message', () => resolve());
      ws.once('error', reject);
    });
    const call = (id: number, tool: string, args: Record<string, unknown>) =>
      new Promise<any>((resolve) => {
        const onMessage = (d: WebSocket.RawData) => {
          const m = JSON.parse(String(d));
          if (m.type !== 'reply' || m.id !== id) return;
          ws.off('message', onMessage);
          resolve(m);
        };
        ws.on('message', onMessage);
        ws.send(JSON.stringify({ id, op: 'call', tool, arguments: args }));
      });
    try {
      const refused = await call(1, 'read_source_content', { source_id: ids.direct });
      assert.equal(refused.ok, false, JSON.stringify(refused));
      assert.equal(refused.error_code, 'SOURCE_CLOSED');
      const listed = await call(2, 'list_segments', { code_id: ids.code });
      assert.equal(listed.ok, true, JSON.stringify(listed).slice(0, 300));
      assert.deepEqual(leaks(frames.join('\n')), []);
    } finally {
      ws.close();
    }
  });

  it('gRPC and the CLI adapter go through the same policy', async () => {
    const client = grpcClient(s.grpc!.port, s.grpc!.dir, clientCert(s.grpc!.dir, 'closed-sources-grpc', 'agent'));
    try {
      const refused = await grpcUnary(client, 'CallTool', { tool: 'read_source_content', arguments_json: JSON.stringify({ source_id: ids.direct }) });
      assert.equal(refused.success, false);
      assert.equal(refused.error_code, 'SOURCE_CLOSED');
      const listed = await grpcUnary(client, 'CallTool', { tool: 'list_segments', arguments_json: JSON.stringify({ code_id: ids.code }) });
      assert.equal(listed.success, true);
      assert.deepEqual(leaks(JSON.stringify(listed)), []);
    } finally {
      client.close();
    }
    const backend = new LocalCliBackend({
      agent: s.agent,
      pipeline: s.pipeline,
      authorization: `Bearer ${TOKENS.agent}`,
      clientName: 'closed-sources-cli',
      clientType: 'CUSTOM',
    });
    const sink = () => ({ event: () => true, overflow: () => undefined, ended: () => undefined });
    const refused = await runCommand(backend, { op: 'call', tool: 'read_source_content', arguments: { source_id: ids.caseClosed } }, sink);
    assert.ok(!refused.success && refused.error_code === 'SOURCE_CLOSED', JSON.stringify(refused));
    const listed = await runCommand(backend, { op: 'call', tool: 'search_text', arguments: { query: 'harbour' } }, sink);
    assert.ok(listed.success);
    assert.deepEqual(leaks(JSON.stringify(listed)), []);
  });

  it('event streams: the stored history and a live SSE stream carry a marker, not the words of a closed source', async () => {
    const history = await raw(s.port, 'GET', '/events/history?since=0&limit=1000', { headers: { ...AS_AGENT, 'x-marginalia-client': 'closed-sources-agent' } });
    assert.equal(history.status, 200, history.text.slice(0, 300));
    assert.ok((history.body.data.events as unknown[]).length > 10);
    assert.deepEqual(leaks(history.text), []);
    assert.ok(history.text.includes('[closed to agents'), 'a coding event of a closed source carries the marker');
    // live: the researcher codes a closed source while an agent listens
    const chunks: string[] = [];
    const req = http.get({ host: '127.0.0.1', port: s.port, path: '/events/stream?patterns=*', headers: { ...AS_AGENT, accept: 'text/event-stream' } });
    const live = new Promise<void>((resolve, reject) => {
      req.on('response', (res) => {
        res.on('data', (d: Buffer) => {
          chunks.push(d.toString());
          if (chunks.join('').includes('segment_coded')) resolve();
        });
      });
      req.on('error', reject);
    });
    await new Promise((r) => setTimeout(r, 200));
    await s.asResearcher('batch_apply_codes', { operations: [{ code_id: ids.code, source_id: ids.direct, start_position: 4, end_position: 60 }] });
    await Promise.race([live, new Promise((_, reject) => setTimeout(() => reject(new Error(`no coding event on the stream: ${chunks.join('')}`)), 10_000))]);
    req.destroy();
    assert.deepEqual(leaks(chunks.join('')), []);
    assert.ok(chunks.join('').includes('[closed to agents'));
  });

  it('a source closed to named agents: bob is refused, alice reads it', async () => {
    const bob = await asAgent('read_source_content', { source_id: ids.bobOnly }, tokens.bob, 'bob-client');
    assert.equal(bob.status, 403, bob.text);
    assert.equal(bob.body.error_code, 'SOURCE_CLOSED');
    const bobList = await asAgent('list_segments', { code_id: ids.code }, tokens.bob, 'bob-client');
    assert.deepEqual(leaks(bobList.text, [SECRET.bobOnly, ...ALL_CLOSED]), []);
    const alice = await asAgent('read_source_content', { source_id: ids.bobOnly }, tokens.alice, 'alice-client');
    assert.equal(alice.status, 200, alice.text);
    assert.ok(alice.text.includes(SECRET.bobOnly));
    // the install's own agent token is the agent named "agent": not bob either
    const builtin = await asAgent('read_source_content', { source_id: ids.bobOnly });
    assert.equal(builtin.status, 200);
    // but every agent is shut out of what is closed to all
    const aliceClosed = await asAgent('list_segments', { code_id: ids.code }, tokens.alice, 'alice-client');
    assert.deepEqual(leaks(aliceClosed.text), []);
    // opening bob's name again removes the rule
    const opened = await close({ source_id: ids.bobOnly }, 'open', ['bob']);
    assert.equal(opened.access, 'open');
    const bobAgain = await asAgent('read_source_content', { source_id: ids.bobOnly }, tokens.bob, 'bob-client');
    assert.equal(bobAgain.status, 200);
  });

  it("reopening restores the agents' access", async () => {
    await close({ source_id: ids.direct }, 'open');
    const r = await asAgent('read_source_content', { source_id: ids.direct });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.text.includes(SECRET.direct));
    const segs = await asAgent('list_segments', { code_id: ids.code });
    assert.ok(segs.text.includes(SECRET.direct));
    // the case and the folder stay closed
    assert.deepEqual(leaks(segs.text, [SECRET.caseClosed, SECRET.folderClosed]), []);
    await close({ case_id: ids.sealedCase }, 'open');
    await close({ folder_id: ids.folder }, 'open');
    const all = await asAgent('list_segments', { code_id: ids.code });
    assert.deepEqual(leaks(all.text, [SECRET.caseClosed, SECRET.folderClosed]), [SECRET.caseClosed, SECRET.folderClosed]);
  });
});
