/**
 * File paths of import and export tools (issue 7, part 4: "only the workspace and paths the researcher chose
 * are allowed"; docs/agents.md, "File paths"; src/core/pathPolicy.ts). For an agent a
 * path must lie, after following symbolic links, in the project's folder, a host root (VS Code's workspace
 * folders, `marginalia serve --allow-path`) or a folder of `agent_context.allowed_paths`; nothing is written
 * into the project's `.marginalia`. A refused path answers the tool's own error code (IMPORT_FAILED,
 * EXPORT_FAILED, SOURCE_IMPORT_FAILED) naming the rule, is audited as denied, and is never queued for
 * approval; an approved request is checked again when it runs. The researcher's own calls use any path.
 * Files a REFI-QDA project refers to and transcript sidecars follow the same rule for agents.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import WebSocket from 'ws';
import { AS_AGENT, AS_RESEARCHER, raw, startStack, tmp, type RawResult, type Stack } from './stack';

const VTT = (words: string) => `WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Ana>${words}\n`;

describe('security: paths of import and export tools (traversal, symbolic links, allowed folders)', function () {
  this.timeout(60_000);
  let s: Stack;
  /** the project's folder */
  let P: string;
  /** a folder nobody allowed, holding the "secret" files */
  let O: string;
  /** a folder listed in agent_context.allowed_paths */
  let A: string;
  /** a host root (a VS Code workspace folder) */
  let H: string;
  let secret: string;

  const call = (tool: string, args: Record<string, unknown>, auth: { authorization: string } = AS_AGENT): Promise<RawResult> =>
    raw(s.port, 'POST', `/tools/${tool}`, { headers: { ...auth, 'content-type': 'application/json' }, body: { arguments: args } });

  /** Asserts a refusal by the path rule: status 422, the tool's code, the rule in the message, audited, nothing queued. */
  async function refusedByRule(tool: string, args: Record<string, unknown>, code: string): Promise<void> {
    const pending = s.agent.listApprovals('pending').length;
    const mark = s.auditMark();
    const r = await call(tool, args);
    const what = `${tool} ${JSON.stringify(args)}`;
    assert.equal(r.status, 422, `${what}: ${r.text}`);
    assert.equal(r.body.error_code, code, what);
    assert.match(r.body.error, /outside the folders an agent may use|\.marginalia folder/, what);
    assert.equal(r.body.details?.rule, 'agent_paths', what);
    assert.deepEqual(
      s.auditSince(mark).map((e) => [e.tool, e.decision, e.error_code]),
      [[tool, 'denied', code]],
      what,
    );
    assert.equal(s.agent.listApprovals('pending').length, pending, `${what}: not queued for approval`);
  }

  /** Approves a pending request as the researcher; returns the approval's answer. */
  async function approve(r: RawResult): Promise<RawResult> {
    assert.equal(r.status, 202, r.text);
    return raw(s.port, 'POST', `/approvals/${r.body.data.request_id}/approve`, { headers: AS_RESEARCHER });
  }

  before(async () => {
    P = tmp('marginalia-sec-project-');
    O = tmp('marginalia-sec-outside-');
    A = tmp('marginalia-sec-allowed-');
    H = tmp('marginalia-sec-workspace-');
    secret = path.join(O, 'secret.txt');
    fs.writeFileSync(secret, 'TOP SECRET\nline two\n');
    fs.writeFileSync(path.join(O, 'secret.vtt'), VTT('TOP SECRET sidecar'));
    fs.writeFileSync(path.join(O, 'events.ndjson'), `${JSON.stringify({ event_name: 'x', event_timestamp: '1', user_pseudo_id: 'u1' })}\n`);
    fs.writeFileSync(path.join(A, 'codes.txt'), 'Allowed code one\nAllowed code two\n');
    s = await startStack({ dir: P, allowedRoots: [H], config: ['  allowed_paths:', `    - ${JSON.stringify(A)}`] });
    // the researcher's sources and a code, so every export format has something to write
    const src = await s.asResearcher('add_text_source', { name: 'interview.txt', content: 'We share the water rota. <b>bold</b>' });
    const code = await s.asResearcher('create_code', { name: 'Sharing', color: '#4E79A7' });
    await s.asResearcher('apply_code', { code_id: code.code_id, source_id: src.source_id, start_position: 3, end_position: 8 });
  });
  after(async () => {
    await s?.close();
    for (const d of [P, O, A, H]) if (d) fs.rmSync(d, { recursive: true, force: true });
  });

  describe('reading (imports)', () => {
    it('refuses absolute paths outside, traversal out of the project folder, and /etc/passwd', async () => {
      for (const p of [
        secret,
        path.join(P, '..', path.basename(O), 'secret.txt'),
        `${P}/./../${path.basename(O)}/secret.txt`,
        '/etc/passwd',
        '/etc/hostname',
      ]) {
        await refusedByRule('import_data', { format: 'code_list', source_path: p }, 'IMPORT_FAILED');
        await refusedByRule('import_file_source', { file_path: p }, 'SOURCE_IMPORT_FAILED');
        await refusedByRule('import_source', { file_path: p }, 'SOURCE_IMPORT_FAILED');
        await refusedByRule('import_analytics', { source_path: p }, 'IMPORT_FAILED');
      }
      // the answer does not tell whether an outside file exists
      const missing = await call('import_file_source', { file_path: path.join(O, 'no-such-file.txt') });
      const present = await call('import_file_source', { file_path: secret });
      assert.equal(missing.body.error_code, present.body.error_code);
      assert.doesNotMatch(JSON.stringify(present.body), /TOP SECRET/);
    });

    it('refuses a symbolic link inside the project folder that points outside (file or folder)', async () => {
      fs.symlinkSync(secret, path.join(P, 'innocent.txt'));
      fs.symlinkSync(O, path.join(P, 'shared'));
      fs.symlinkSync('/etc', path.join(P, 'etc'));
      for (const p of [path.join(P, 'innocent.txt'), path.join(P, 'shared', 'secret.txt'), path.join(P, 'etc', 'passwd')]) {
        await refusedByRule('import_data', { format: 'code_list', source_path: p }, 'IMPORT_FAILED');
        await refusedByRule('import_file_source', { file_path: p, dry_run: true }, 'SOURCE_IMPORT_FAILED');
      }
      const mark = s.auditMark();
      const r = await call('import_file_source', { file_path: path.join(P, 'innocent.txt'), dry_run: true });
      assert.match(r.body.error, /resolves to/, 'the message names where the link points');
      assert.equal(s.auditSince(mark).length, 1);
    });

    it('through REST and WebSocket too (one pipeline)', async () => {
      const rest = await raw(s.port, 'POST', '/commands/source/import', {
        headers: { ...AS_AGENT, 'content-type': 'application/json' },
        body: { file_path: secret },
      });
      assert.equal(rest.status, 422, rest.text);
      assert.equal(rest.body.error_code, 'SOURCE_IMPORT_FAILED');
      const ws = new WebSocket(`ws://127.0.0.1:${s.port}/ws`, { headers: AS_AGENT });
      const reply = await new Promise<any>((resolve, reject) => {
        ws.on('message', (d) => {
          const m = JSON.parse(String(d));
          if (m.type === 'welcome')
            ws.send(JSON.stringify({ id: 7, op: 'call', tool: 'import_data', arguments: { format: 'code_list', source_path: secret } }));
          if (m.type === 'reply' && m.id === 7) resolve(m);
        });
        ws.on('error', reject);
      });
      ws.close();
      assert.deepEqual([reply.ok, reply.error_code], [false, 'IMPORT_FAILED']);
    });

    it('allows the project folder, the host roots and agent_context.allowed_paths (the import then waits for approval as usual)', async () => {
      fs.writeFileSync(path.join(P, 'project-codes.txt'), 'Project code\n');
      fs.writeFileSync(path.join(H, 'workspace-codes.txt'), 'Workspace code\n');
      for (const [file, name] of [
        [path.join(P, 'project-codes.txt'), 'Project code'],
        [path.join(H, 'workspace-codes.txt'), 'Workspace code'],
        [path.join(A, 'codes.txt'), 'Allowed code one'],
      ] as const) {
        const done = await approve(await call('import_data', { format: 'code_list', source_path: file }));
        assert.equal(done.status, 200, done.text);
        assert.ok(
          s.handle.repo.listCodes().some((c) => c.name === name),
          name,
        );
      }
      // a link inside the project folder to a file inside it is fine, and the import reads the real file
      fs.symlinkSync(path.join(P, 'project-codes.txt'), path.join(P, 'alias.txt'));
      const dry = await call('import_file_source', { file_path: path.join(P, 'alias.txt'), dry_run: true });
      assert.equal(dry.status, 202, dry.text);
    });

    it('checks an approved request again when it runs: a file swapped for a link to outside is refused then', async () => {
      const file = path.join(P, 'later.txt');
      fs.writeFileSync(file, 'Harmless code\n');
      const held = await call('import_data', { format: 'code_list', source_path: file });
      assert.equal(held.status, 202, held.text);
      fs.rmSync(file);
      fs.symlinkSync(secret, file);
      const mark = s.auditMark();
      const done = await raw(s.port, 'POST', `/approvals/${held.body.data.request_id}/approve`, { headers: AS_RESEARCHER });
      assert.equal(done.status, 422, done.text);
      assert.equal(done.body.error_code, 'IMPORT_FAILED');
      assert.match(done.body.error, /outside the folders an agent may use/);
      assert.ok(!s.handle.repo.listCodes().some((c) => c.name.includes('TOP SECRET')), 'nothing imported');
      assert.ok(s.auditSince(mark).some((e) => e.decision === 'denied' && e.error_code === 'IMPORT_FAILED'));
      assert.equal(s.agent.listApprovals().find((a) => a.request_id === held.body.data.request_id)?.status, 'failed');
    });

    it('a REFI-QDA project in the project folder cannot pull in files outside it (absolute://, relative://): the source is listed as refused, strict refuses the import', async () => {
      for (const ref of [`absolute://${secret}`, `relative://../${path.basename(O)}/secret.txt`]) {
        const qde = path.join(P, `pull-${ref.startsWith('abs') ? 'abs' : 'rel'}.qde`);
        fs.writeFileSync(
          qde,
          `<?xml version="1.0" encoding="utf-8"?><Project xmlns="urn:QDA-XML:project:1.0" name="t" origin="x">` +
            `<Sources><TextSource guid="00000000-0000-4000-8000-0000000000a${ref.startsWith('abs') ? 1 : 2}" name="Pulled ${ref.slice(0, 3)}" plainTextPath="${ref}"/></Sources></Project>`,
        );
        // issue 15: a source whose file cannot be read no longer refuses the whole import; the refused
        // reference is reported as a missing source, and nothing outside is read
        const done = await approve(await call('import_data', { format: 'refi_qda', source_path: qde }));
        assert.equal(done.status, 200, `${ref}: ${done.text}`);
        const result = done.body.data.result;
        assert.equal(result.created.sources, 0);
        assert.equal(result.missing_sources.length, 1);
        assert.equal(result.missing_sources[0].source, `Pulled ${ref.slice(0, 3)}`);
        assert.match(result.missing_sources[0].where, /refused: .*outside the folders an agent may use/);
        assert.ok(!done.text.includes(fs.readFileSync(secret, 'utf8').trim()), 'the outside file was not read');
        assert.ok(!s.handle.repo.listSources().some((x) => x.name === `Pulled ${ref.slice(0, 3)}`), 'no source');
        // strict: all or nothing, as before
        const strict = await approve(await call('import_data', { format: 'refi_qda', source_path: qde, strict: true }));
        assert.equal(strict.status, 422, `${ref}: ${strict.text}`);
        assert.equal(strict.body.error_code, 'IMPORT_FAILED');
        assert.match(strict.body.error, /refused/);
        // the researcher's own import of the same file reads the reference (REFI-QDA allows external sources)
        const mine = await call('import_data', { format: 'refi_qda', source_path: qde }, AS_RESEARCHER);
        assert.equal(mine.status, 200, mine.text);
      }
    });
  });

  describe('writing (exports)', () => {
    it('refuses export_data and export_report outside, over a link to outside, and inside .marginalia', async () => {
      const report = (await call('generate_frequency_report', {})).body.data;
      const victim = path.join(O, 'victim.txt');
      fs.writeFileSync(victim, 'keep me');
      fs.symlinkSync(victim, path.join(P, 'notes.txt'));
      fs.symlinkSync(path.join(O, 'victim.csv'), path.join(P, 'dangling.csv'));
      fs.mkdirSync(path.join(P, '.marginalia', 'reports'), { recursive: true });
      const targets = {
        codebook: [
          path.join(O, 'codebook.txt'),
          path.join(P, 'notes.txt'),
          path.join(P, 'shared', 'via-link.txt'),
          path.join(P, '..', path.basename(O), 'x.txt'),
          path.join(P, '.marginalia', 'x.txt'),
        ],
        html: [path.join(O, 'page.html'), path.join(P, '.marginalia', 'reports', 'page.html')],
        segments_csv: [path.join(P, 'dangling.csv')],
      };
      for (const [format, paths] of Object.entries(targets)) {
        for (const p of paths) await refusedByRule('export_data', { format, output_path: p }, 'EXPORT_FAILED');
      }
      for (const p of [path.join(O, 'r.csv'), path.join(P, 'dangling.csv'), path.join(P, '.marginalia', 'reports', 'r.csv'), path.join(P, 'etc', 'r.csv')]) {
        await refusedByRule('export_report', { report_id: report.report_id, format: 'csv', output_path: p, overwrite: true }, 'EXPORT_FAILED');
      }
      assert.equal(fs.readFileSync(victim, 'utf8'), 'keep me', 'the file behind the link is untouched');
      assert.ok(!fs.existsSync(path.join(O, 'victim.csv')) && !fs.existsSync(path.join(O, 'codebook.txt')) && !fs.existsSync(path.join(O, 'r.csv')));
    });

    it('allows the project folder, host roots and allowed paths; the researcher may write anywhere', async () => {
      for (const dir of [P, H, A]) {
        const r = await call('export_data', { format: 'html', output_path: path.join(dir, 'coded.html') });
        assert.equal(r.status, 200, r.text);
        assert.ok(fs.existsSync(path.join(dir, 'coded.html')));
      }
      const report = (await call('generate_frequency_report', {})).body.data;
      const own = await call('export_report', { report_id: report.report_id, format: 'json' });
      assert.equal(own.status, 200, `the default place (.marginalia/reports) is the tool's own: ${own.text}`);
      const mine = await call('export_data', { format: 'codebook', output_path: path.join(O, 'mine.txt') }, AS_RESEARCHER);
      assert.equal(mine.status, 200, mine.text);
      const mineReport = await call('export_report', { report_id: report.report_id, format: 'csv', output_path: path.join(O, 'mine.csv') }, AS_RESEARCHER);
      assert.equal(mineReport.status, 200, mineReport.text);
      const imported = await call('import_file_source', { file_path: secret, name: 'researcher-chose-this.txt' }, AS_RESEARCHER);
      assert.equal(imported.status, 200, imported.text);
    });
  });

  describe('transcript sidecars', () => {
    it('an agent reads a sidecar beside the media file, but not one that links outside; the researcher reads both', async () => {
      fs.writeFileSync(path.join(P, 'talk.mp3'), Buffer.alloc(64));
      fs.writeFileSync(path.join(P, 'talk.vtt'), VTT('ordinary words'));
      fs.writeFileSync(path.join(P, 'linked.mp3'), Buffer.alloc(64));
      fs.symlinkSync(path.join(O, 'secret.vtt'), path.join(P, 'linked.vtt'));
      const talk = (await call('import_file_source', { file_path: path.join(P, 'talk.mp3') }, AS_RESEARCHER)).body.data;
      const linked = (await call('import_file_source', { file_path: path.join(P, 'linked.mp3') }, AS_RESEARCHER)).body.data;
      const ok = await call('transcribe_media', { source_id: talk.source_id });
      assert.equal(ok.status, 200, ok.text);
      assert.match(ok.body.data.text, /ordinary words/);
      for (const tool of ['transcribe_media', 'detect_speakers', 'suggest_codes_for_transcript']) {
        const r = await call(tool, { source_id: linked.source_id });
        assert.equal(r.status, 404, `${tool}: ${r.text}`);
        assert.equal(r.body.error_code, 'TRANSCRIPT_NOT_FOUND');
        assert.doesNotMatch(r.text, /TOP SECRET/, tool);
        assert.match(r.text, /refused/, tool);
      }
      const mine = await call('transcribe_media', { source_id: linked.source_id }, AS_RESEARCHER);
      assert.equal(mine.status, 200, mine.text);
      assert.match(mine.body.data.text, /TOP SECRET sidecar/);
    });
  });
});
