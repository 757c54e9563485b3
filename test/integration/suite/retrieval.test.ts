// Runs in the REAL VS Code extension host (test/integration/run.mjs): the Retrieval view and Search (issue
// 13, item 7). Codes combined with AND (same source), OR and overlapping give exactly the passages written
// out below, with source name and speaker; a document attribute narrows them; a click opens the passage
// selected in its source; the result exports to CSV, Markdown and HTML; Search lists hits with their
// speaker, "Code All Hits" codes every hit in one action and one Marginalia: Undo removes them all.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MarginaliaApi } from '../../../src/extension';
import type { RetrievalState } from '../../../src/ui/retrieval/retrievalView';
import type { CodeAllHitsOutcome, SearchOutcome } from '../../../src/ui/retrieval/retrievalCommands';

const EXTENSION_ID = 'marginalia.marginalia';

const I01 = 'INTERVIEWER: How do you get water?\nROSA: We walk to the well every morning. The rota helps.\nINTERVIEWER: And food?\nROSA: The garden feeds us.';
const I02 = 'INTERVIEWER: Tell me about the well.\nAMADOU: The well is far. We share the rota with neighbours.';
const I03 = 'INTERVIEWER: Water?\nFATIMA: Always the tap.';

describe('Retrieval in VS Code', function () {
  this.timeout(90_000);
  let api: MarginaliaApi;
  const ws = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  const ids = { i01: 0, i02: 0, i03: 0, water: 0, coop: 0, rota: 0 };
  let out: string;

  const call = async <T = any>(tool: string, args: unknown): Promise<T> => {
    const r = await api.workbench.pipeline.invoke(tool, args, api.workbench.caller());
    assert.ok(r.envelope.success, `${tool}: ${JSON.stringify(r.envelope)}`);
    return r.envelope.data as T;
  };
  const op = (code: number, source: number, content: string, phrase: string) => {
    const at = content.indexOf(phrase);
    assert.ok(at >= 0, phrase);
    return { code_id: code, source_id: source, start_position: at, end_position: at + phrase.length };
  };
  const retrieve = async (query: object) => (await vscode.commands.executeCommand('marginalia.retrieval.retrieve', query)) as RetrievalState;
  /** each passage as "source | speaker | codes | text" */
  const rows = (s: RetrievalState) => s.result!.passages.map((p) => `${p.source_name} | ${p.speaker} | ${p.codes.map((c) => c.name).join('+')} | ${p.text}`);

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    await vscode.commands.executeCommand('marginalia.project.new', path.join(ws(), 'retrieval.qda'));
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-retrieval-'));
    ids.i01 = (await call('import_text', { name: 'interview-01', content: I01 })).source_id;
    ids.i02 = (await call('import_text', { name: 'interview-02', content: I02 })).source_id;
    ids.i03 = (await call('import_text', { name: 'interview-03', content: I03 })).source_id;
    ids.water = (await call('create_code', { name: 'Water' })).code_id;
    ids.coop = (await call('create_code', { name: 'Cooperation' })).code_id;
    ids.rota = (await call('create_code', { name: 'Rota' })).code_id;
    await call('batch_apply_codes', {
      operations: [
        op(ids.water, ids.i01, I01, 'We walk to the well every morning.'),
        op(ids.coop, ids.i01, I01, 'The rota helps.'),
        op(ids.water, ids.i02, I02, 'The well is far. We share the rota'),
        op(ids.coop, ids.i02, I02, 'We share the rota with neighbours.'),
        op(ids.water, ids.i03, I03, 'Always the tap.'),
      ],
    });
    await call('set_source_attribute', { source_id: ids.i01, attribute_name: 'Site', value: 'Lagos' });
    await call('set_source_attribute', { source_id: ids.i03, attribute_name: 'Site', value: 'Lagos' });
    await call('set_source_attribute', { source_id: ids.i02, attribute_name: 'Site', value: 'Kano' });
    await api.settled();
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
    fs.rmSync(out, { recursive: true, force: true });
  });

  it('the Retrieval view is registered in the Marginalia container and shows', async () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
    const view = (pkg.contributes.views.marginalia as { id: string; type?: string }[]).find((v) => v.id === 'marginalia.retrieval');
    assert.deepEqual(view && { id: view.id, type: view.type }, { id: 'marginalia.retrieval', type: 'webview' });
    await vscode.commands.executeCommand('marginalia.retrieval.focus');
  });

  it('Water AND Cooperation: exactly the passages of the sources holding both, with source name and speaker', async () => {
    const s = await retrieve({ code_ids: [ids.water, ids.coop], combine: 'and' });
    assert.equal(s.title, 'Water AND Cooperation');
    assert.deepEqual(rows(s), [
      'interview-01 | ROSA | Water | We walk to the well every morning.',
      'interview-01 | ROSA | Cooperation | The rota helps.',
      'interview-02 | AMADOU | Water | The well is far. We share the rota',
      'interview-02 | AMADOU | Cooperation | We share the rota with neighbours.',
    ]);
  });

  it('OR adds the source with one code; overlapping joins the overlapping segments into one passage', async () => {
    assert.deepEqual(rows(await retrieve({ code_ids: [ids.water, ids.coop], combine: 'or' })), [
      'interview-01 | ROSA | Water | We walk to the well every morning.',
      'interview-01 | ROSA | Cooperation | The rota helps.',
      'interview-02 | AMADOU | Water | The well is far. We share the rota',
      'interview-02 | AMADOU | Cooperation | We share the rota with neighbours.',
      'interview-03 | FATIMA | Water | Always the tap.',
    ]);
    assert.deepEqual(rows(await retrieve({ code_ids: [ids.water, ids.coop], combine: 'overlap' })), [
      'interview-02 | AMADOU | Water+Cooperation | The well is far. We share the rota with neighbours.',
    ]);
  });

  it('a document attribute narrows the passages; a click opens the passage selected in its source', async () => {
    const s = await retrieve({ code_ids: [ids.water, ids.coop], combine: 'or', source_attribute: { name: 'Site', value: 'Lagos' } });
    assert.deepEqual(s.filters, ['document attribute Site = Lagos']);
    assert.deepEqual(rows(s), [
      'interview-01 | ROSA | Water | We walk to the well every morning.',
      'interview-01 | ROSA | Cooperation | The rota helps.',
      'interview-03 | FATIMA | Water | Always the tap.',
    ]);
    const editor = (await vscode.commands.executeCommand('marginalia.retrieval.open', 1)) as vscode.TextEditor;
    assert.ok(editor);
    assert.equal(editor.document.getText(editor.selection), 'The rota helps.');
    assert.equal(api.documents.sourceIdFor(editor.document), ids.i01);
  });

  it('exports the current result to CSV, Markdown and HTML', async () => {
    await retrieve({ code_ids: [ids.water, ids.coop], combine: 'and', source_attribute: { name: 'Site', value: 'Lagos' } });
    const csv = (await vscode.commands.executeCommand('marginalia.retrieval.export', 'csv', path.join(out, 'r.csv'))) as string;
    assert.equal(csv, path.join(out, 'r.csv'));
    assert.equal(
      fs.readFileSync(csv, 'utf8'),
      'Source,Speaker,Paragraph,Codes,Coders,Text\r\n' +
        `interview-01,ROSA,1,Water,${api.workbench.caller().user},We walk to the well every morning.\r\n` +
        `interview-01,ROSA,1,Cooperation,${api.workbench.caller().user},The rota helps.\r\n`,
    );
    const md = (await vscode.commands.executeCommand('marginalia.retrieval.export', 'md', path.join(out, 'r.md'))) as string;
    assert.equal(
      fs.readFileSync(md, 'utf8'),
      [
        '# Water AND Cooperation',
        '',
        'all of the codes in the same source (AND); 2 passages in 1 source.',
        '',
        '- document attribute Site = Lagos',
        '',
        '## interview-01',
        '',
        '**ROSA** · Water',
        '',
        '> We walk to the well every morning.',
        '',
        '**ROSA** · Cooperation',
        '',
        '> The rota helps.',
        '',
      ].join('\n'),
    );
    const html = fs.readFileSync((await vscode.commands.executeCommand('marginalia.retrieval.export', 'html', path.join(out, 'r.html'))) as string, 'utf8');
    assert.match(html, /^<!DOCTYPE html>/);
    assert.match(html, /<h1>Water AND Cooperation<\/h1>/);
    assert.match(
      html,
      /<h2>interview-01<\/h2>\n<p><span class="where">ROSA<\/span> · <span class="codes">Water<\/span><\/p>\n<blockquote>We walk to the well every morning.<\/blockquote>/,
    );
    assert.match(html, /<blockquote>The rota helps.<\/blockquote>/);
  });

  it('Search lists the hits with their speaker; Code All Hits codes every hit in one action, one undo removes them all', async () => {
    const found = (await vscode.commands.executeCommand('marginalia.search', 'rota', { show: false })) as SearchOutcome;
    assert.deepEqual(
      found.hits.map((h) => `${h.source_name} | ${h.place} | ${h.text}`),
      ['interview-01 | ROSA | rota', 'interview-02 | AMADOU | rota'],
    );
    const coded = (await vscode.commands.executeCommand('marginalia.search.codeAllHits', 'rota', ids.rota)) as CodeAllHitsOutcome;
    assert.deepEqual(coded, { query: 'rota', code_id: ids.rota, code_name: 'Rota', hits: 2, created: 2, existing: 0 });
    const segs = await call('list_segments', { code_id: ids.rota });
    assert.deepEqual(
      segs.segments.map((s: { source_name: string; text: string }) => `${s.source_name}:${s.text}`),
      ['interview-01:rota', 'interview-02:rota'],
    );
    await api.settled();
    assert.deepEqual(
      rows(await retrieve({ code_ids: [ids.rota], combine: 'or' })),
      ['interview-01 | ROSA | Rota | rota', 'interview-02 | AMADOU | Rota | rota'],
      'the view follows',
    );

    // one Marginalia: Undo (outside a source editor, so Marginalia's own last action) removes both codings
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const step = (await vscode.commands.executeCommand('marginalia.undo')) as { by: string; description: string; correlation_id: string };
    assert.equal(step.by, 'marginalia', JSON.stringify(step));
    const codings = api.workbench
      .repo()!
      .listEventsByCorrelation(step.correlation_id)
      .filter((e) => e.event_type === 'coding.segment_coded');
    assert.deepEqual(
      codings.map((e) => e.payload.text),
      ['rota', 'rota'],
      'both hits were coded by the one action that was undone',
    );
    assert.equal((await call('list_segments', { code_id: ids.rota })).total, 0);
    await api.settled();
    assert.deepEqual(rows(await retrieve({ code_ids: [ids.rota], combine: 'or' })), []);
    assert.equal((await call('list_segments', { code_id: ids.water })).total, 3, 'the earlier codings stay');
  });
});
