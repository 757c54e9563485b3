// Steps of `node test/integration/run.mjs screenshot OUT_DIR --workspace=DIR` (npm run screenshots ->
// docs/images). The workspace is the sample study with a seeded project (prepareScreenshotWorkspace.mjs),
// which Marginalia opens on activation because it is the workspace's only .qda file.
// Each step gets { page, outDir, workspace, log, home }; a step that throws fails the run.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const row = (page, text) => page.locator('.monaco-list-row', { hasText: text }).first();

/** Runs a command from the palette (F1), retrying when a webview swallowed the key. */
async function palette(page, title) {
  const item = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    await page.keyboard.type(title);
    try {
      await item.waitFor({ timeout: 5_000 });
      break;
    } catch (e) {
      if (attempt === 3) throw e;
      await page.keyboard.press('Escape');
      await page.locator('.part.sidebar .title-label').first().click();
    }
  }
  await page.keyboard.press('Enter');
}

/** The frame (any webview's inner document) whose body contains `text`. */
async function frameWith(page, text, timeout = 30_000) {
  const end = Date.now() + timeout;
  for (;;) {
    for (const f of page.frames()) {
      if (
        await f
          .getByText(text)
          .first()
          .isVisible()
          .catch(() => false)
      )
        return f;
    }
    if (Date.now() > end) throw new Error(`no webview shows "${text}"`);
    await page.waitForTimeout(200);
  }
}

/** The HTTP tool server of the extension (its discovery file) as { url, token }. */
function toolServer(home) {
  const dir = join(home, 'servers');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  if (files.length === 0) throw new Error(`no discovery file in ${dir}`);
  const info = JSON.parse(readFileSync(join(dir, files[0]), 'utf8'));
  return { url: info.url, token: info.token };
}

async function callTool(server, name, args, extra = {}) {
  const res = await fetch(`${server.url}/tools/${name}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json', 'x-marginalia-client': 'Claude Code', ...extra },
    body: JSON.stringify({ arguments: args }),
  });
  return { status: res.status, body: await res.json() };
}

const ANA_TOKEN = 'screenshot-ana-reviewer-token-0123456789abcdef';

/**
 * Ana, a second coder on another machine: `marginalia serve` (the real CLI, bin/marginalia.js) on her own copy of
 * the project in `dir`, called as the researcher of that copy. Resolves once it serves; `stop()` ends it (SIGTERM).
 */
function startAna(dir) {
  const child = spawn(
    process.execPath,
    [join(root, 'bin', 'marginalia.js'), 'serve', '--project', join(dir, 'community-gardens.qda'), '--port', '0', '--coder', 'Ana'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, MARGINALIA_HOME: join(dir, '.marginalia-home'), MARGINALIA_REVIEWER_TOKEN: ANA_TOKEN, MARGINALIA_CODER: 'Ana' },
    },
  );
  const exited = new Promise((res) => child.once('exit', res));
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  return new Promise((res, rej) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`Ana's marginalia serve did not start within 30 s: ${err}`));
    }, 30_000);
    exited.then((code) => rej(new Error(`Ana's marginalia serve exited with ${code}: ${err}`)));
    child.stdout.on('data', (d) => {
      out += d;
      const m = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      const server = { url: m[1], token: ANA_TOKEN };
      res({
        async call(name, args = {}) {
          const r = await callTool(server, name, args, { 'x-marginalia-client': 'Ana (her own Marginalia)' });
          if (r.status !== 200 || !r.body.success) throw new Error(`Ana's ${name}: ${r.status} ${JSON.stringify(r.body)}`);
          return r.body.data;
        },
        async stop() {
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(killer);
        },
      });
    });
  });
}

/** Waits for a notification toast whose text contains `text`. */
const toast = (page, text, timeout = 60_000) => page.locator('.notification-toast', { hasText: text }).first().waitFor({ timeout });

/** The team's shared remote, an empty bare git repository in a "lab-share" folder beside the run's workspace copy. */
function remoteOf(workspace) {
  return join(dirname(workspace), 'lab-share', 'community-gardens.git');
}

export const steps = [
  {
    name: 'codes tree',
    async run({ page, outDir }) {
      const item = page.locator('.activitybar [aria-label^="Marginalia"]').first();
      await item.waitFor({ timeout: 60_000 });
      await item.click();
      await row(page, 'Earning membership').waitFor({ timeout: 60_000 });
      await page.waitForTimeout(800);
      await page.screenshot({ path: join(outDir, 'codes-tree.png') });
      // a new code in a category, as the researcher makes it: the view redraws that category only
      // (CodesTreeProvider.update), and it must show the new code beside the ones already there
      await palette(page, 'Marginalia: New Code...');
      const input = page.locator('.quick-input-widget input').first();
      await input.waitFor({ timeout: 15_000 });
      await input.fill('Sharing the harvest');
      await page.waitForTimeout(300);
      await page.keyboard.press('Enter');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Food and knowledge' }).first().click({ timeout: 15_000 });
      const inSideBar = (text) => page.locator('.part.sidebar .monaco-list-row', { hasText: text }).first();
      await inSideBar('Sharing the harvest').waitFor({ timeout: 15_000 });
      await inSideBar('Food security').waitFor({ timeout: 5_000 });
      await inSideBar('Seed saving and heritage').waitFor({ timeout: 5_000 });
      // and back: the code goes again (it is unused), so the later pictures show the sample's codebook
      await page.keyboard.press('F1');
      await page.keyboard.type('Marginalia: Undo');
      await page
        .locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: /^Marginalia: Undo$/ }) })
        .first()
        .click({ timeout: 15_000 });
      await inSideBar('Sharing the harvest').waitFor({ state: 'detached', timeout: 15_000 });
      await inSideBar('Food security').waitFor({ timeout: 5_000 });
    },
  },
  {
    name: 'coded transcript with an overlap',
    async run({ page, outDir }) {
      // Mei's answer about her husband's crops carries three overlapping codes (samples/community-gardens/codings.yaml)
      await row(page, 'interview-03-mei').click();
      await page.locator('.view-lines', { hasText: 'Interview 03' }).first().waitFor({ timeout: 30_000 });
      await page.keyboard.press('Control+G');
      await page.keyboard.type('25');
      await page.keyboard.press('Enter');
      await page.locator('.view-lines', { hasText: 'The same things my husband grew' }).first().waitFor({ timeout: 30_000 });
      await page.keyboard.press('Escape');
      await page.waitForTimeout(1200);
      await page.screenshot({ path: join(outDir, 'coded-transcript.png') });
    },
  },
  {
    name: 'hover',
    async run({ page, outDir }) {
      const span = page.locator('.view-lines span', { hasText: 'Chinese chives' }).last();
      const box = await span.boundingBox();
      if (!box) throw new Error('the coded passage is not on screen');
      await page.mouse.move(box.x + Math.min(60, box.width / 2), box.y + box.height / 2);
      await page.locator('.monaco-hover', { hasText: 'Food and cultural identity' }).first().waitFor({ timeout: 15_000 });
      await page.waitForTimeout(500);
      await page.screenshot({ path: join(outDir, 'hover.png') });
      await page.mouse.move(5, 5);
    },
  },
  {
    name: 'retrieval',
    async run({ page, outDir }) {
      // a click on a code in the Codes view shows its passages in the Retrieval view
      const code = page.locator('.monaco-list-row', { has: page.getByText('Food security', { exact: true }) }).first();
      await code.click();
      // give the Retrieval view the side bar: collapse Codes and Sources for the picture, then open them again
      const header = (name) => page.locator('.pane-header .title', { hasText: new RegExp(`^${name}$`) }).first();
      await header('Codes').click();
      await header('Sources').click();
      await frameWith(page, 'twenty-five quid is not a hobby');
      await page.waitForTimeout(800);
      await page.screenshot({ path: join(outDir, 'retrieval.png') });
      await header('Codes').click();
      await header('Sources').click();
    },
  },
  {
    name: 'memo tab',
    async run({ page, outDir }) {
      const code = page.locator('.monaco-list-row', { has: page.getByText('Food security', { exact: true }) }).first();
      await code.click({ button: 'right' });
      const item = page.getByRole('menuitem', { name: 'Open Memo', exact: true }).first();
      await item.waitFor({ timeout: 10_000 });
      await page.waitForTimeout(300);
      await item.click();
      await page.locator('.tab', { hasText: 'Food security' }).first().waitFor({ timeout: 30_000 });
      await page.waitForTimeout(1000);
      await page.screenshot({ path: join(outDir, 'memo-tab.png') });
    },
  },
  {
    name: 'cases with attributes',
    async run({ page, outDir }) {
      await palette(page, 'Marginalia: Case Attributes Table');
      await frameWith(page, 'treasurer');
      await page.waitForTimeout(800);
      await page.screenshot({ path: join(outDir, 'cases.png') });
    },
  },
  {
    name: 'approval in words',
    async run({ page, outDir, home }) {
      // an agent (the install's agent token, as Claude Code would send it) asks to merge two codes: merge
      // requires the researcher's approval, and the request is described with names and counts
      const server = toolServer(home);
      const codes = (await callTool(server, 'list_codes', {})).body.data.codes;
      const id = (name) => {
        const c = codes.find((x) => x.name === name);
        if (!c) throw new Error(`no code ${name}`);
        return c.code_id;
      };
      const asked = await callTool(server, 'merge_codes', { source_code_id: id('Volunteering burden'), target_code_id: id('Council bureaucracy') });
      if (asked.status !== 202) throw new Error(`merge_codes answered ${asked.status}: ${JSON.stringify(asked.body)}`);
      await palette(page, 'Focus on Pending Approvals View');
      await row(page, 'Volunteering burden').waitFor({ timeout: 30_000 });
      await page.waitForTimeout(1000);
      await page.screenshot({ path: join(outDir, 'approval.png') });
      // back to the main container for the next steps
      await palette(page, 'Focus on Codes View');
    },
  },
  {
    name: 'connected agents',
    async run({ page, outDir, workspace }) {
      // Marginalia: Connect an Agent, as a researcher does it: a name, Claude Code, written into .mcp.json; then
      // the agent connects with what the file holds (Streamable HTTP, its own token) and asks for a merge
      await page.keyboard.press('Escape');
      await palette(page, 'Marginalia: Connect an Agent');
      const input = page.locator('.quick-input-widget input').first();
      await input.waitFor({ timeout: 15_000 });
      // fill, not type: keys typed while the input box is still opening are lost ("g pass 2")
      await input.fill('Claude coding pass 2');
      await page.waitForTimeout(300);
      await page.keyboard.press('Enter');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Claude Code' }).first().click({ timeout: 15_000 });
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Write it into' }).first().click({ timeout: 15_000 });
      const file = join(workspace, '.mcp.json');
      const end = Date.now() + 15_000;
      while (!existsSync(file) && Date.now() < end) await page.waitForTimeout(200);
      const entry = JSON.parse(readFileSync(file, 'utf8')).mcpServers.marginalia;
      if (!entry?.url || !entry.headers?.Authorization) throw new Error(`.mcp.json has no HTTP entry: ${JSON.stringify(entry)}`);
      const server = { url: entry.url.replace(/\/mcp$/, ''), token: entry.headers.Authorization.replace(/^Bearer /, '') };
      const headers = { 'x-marginalia-model': 'claude-opus-4-5' };
      const codes = (await callTool(server, 'list_codes', {}, headers)).body.data.codes;
      const id = (name) => codes.find((x) => x.name === name)?.code_id;
      const asked = await callTool(
        server,
        'merge_codes',
        { source_code_id: id('Seed saving and heritage'), target_code_id: id('Intergenerational knowledge') },
        headers,
      );
      if (asked.status !== 202) throw new Error(`merge_codes answered ${asked.status}: ${JSON.stringify(asked.body)}`);
      await page.keyboard.press('Escape');
      await palette(page, 'Focus on Connected Agents View');
      // in the side bar: the quick input's closed lists keep rows with the agent's name in the page
      await page.locator('.part.sidebar .monaco-list-row', { hasText: 'Claude coding pass 2' }).first().waitFor({ timeout: 30_000 });
      await page.waitForTimeout(1200);
      await page.screenshot({ path: join(outDir, 'connected-agents.png') });
      await palette(page, 'Focus on Codes View');
    },
  },
  {
    name: 'reports',
    async run({ page, outDir }) {
      // Marginalia: Open Reports from the command palette: the webview draws the frequency bar chart; a
      // click on a bar lists its coded segments in a quick pick
      await page.keyboard.press('Escape');
      await palette(page, 'Marginalia: Open Reports');
      const view = await frameWith(page, 'coded segments');
      await page.waitForTimeout(800);
      await page.screenshot({ path: join(outDir, 'reports.png') });
      // the first (longest) bar is at the top of the chart, left-aligned: click its start
      const box = await view.locator('#chart-box canvas').boundingBox();
      if (!box) throw new Error('the chart is not on screen');
      await page.mouse.click(box.x + box.width * 0.3, box.y + 24);
      await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Segments of' }).first().waitFor({ timeout: 15_000 });
      await page.waitForTimeout(500);
      await page.screenshot({ path: join(outDir, 'reports-segments.png') });
      await page.keyboard.press('Escape');
    },
  },
  {
    name: 'codebook health',
    async run({ page, outDir }) {
      await palette(page, 'View: Focus Problems');
      await page.locator('.markers-panel .monaco-list-row').first().waitFor({ timeout: 30_000 });
      await page.waitForTimeout(800);
      await page.screenshot({ path: join(outDir, 'codebook-health.png') });
    },
  },
  {
    name: 'team coding',
    async run({ page, workspace }) {
      // the pictures above show one coder; for the team's reports the project becomes its copy after a team's
      // work (prepareScreenshotWorkspace.mjs: Sam and the agent Claude Code coded Priya's passages again): closed
      // here, replaced, and opened again by reloading the window (the workspace's only .qda opens on activation)
      await page.keyboard.press('Escape');
      await palette(page, 'Marginalia: Close Project');
      await page.getByText('No Marginalia project is open').first().waitFor({ timeout: 30_000 });
      copyFileSync(join(workspace, '.marginalia', 'team-project.qda-copy'), join(workspace, 'community-gardens.qda'));
      await palette(page, 'Developer: Reload Window');
      const item = page.locator('.activitybar [aria-label^="Marginalia"]').first();
      await item.waitFor({ timeout: 60_000 });
      // the Codes view by command, not by a click on the activity bar item: a click on the active container's item
      // closes the side bar, and after the reload the container may already be open while its trees still load
      await palette(page, 'Focus on Codes View');
      const codes = page.locator('.part.sidebar .monaco-list-row', { hasText: 'Earning membership' }).first();
      await codes.waitFor({ timeout: 60_000 });
      await page.waitForTimeout(1000);
    },
  },
  {
    name: 'coder agreement',
    async run({ page, outDir }) {
      // the Reports panel's Coder agreement tab: Priya, Sam and Claude Code by sentence, every measure with its interval
      // the Problems panel of the step before and the agents' notifications would cover the report
      for (const command of ['View: Hide Panel', 'Notifications: Clear All Notifications']) {
        await page.keyboard.press('Escape');
        await palette(page, command).catch(() => page.keyboard.press('Escape'));
      }
      await palette(page, 'Marginalia: Open Reports');
      const view = await frameWith(page, 'Coder agreement');
      await view.locator('button.tab', { hasText: 'Coder agreement' }).click();
      await view.getByText('Agreement of', { exact: false }).first().waitFor({ timeout: 30_000 });
      await view.locator('#agreement-unit').selectOption('sentence');
      await view.getByText('by sentence', { exact: false }).first().waitFor({ timeout: 30_000 });
      await view.locator('#controls input[value="Claude Code"]').click();
      await view.getByText('Agreement of Claude Code, Priya, Sam', { exact: false }).first().waitFor({ timeout: 30_000 });
      await view.locator('#details h3').first().waitFor({ timeout: 30_000 });
      await page.waitForTimeout(800);
      await page.screenshot({ path: join(outDir, 'reports-agreement.png') });
    },
  },
  {
    name: 'disagreements side by side',
    async run({ page, outDir }) {
      const view = await frameWith(page, 'Coder agreement');
      // one column per coder: Priya and Sam (the two with most segments), then Claude Code as well
      await view.locator('button.tab', { hasText: 'Disagreements' }).click();
      await view.locator('section.disagreement').first().waitFor({ timeout: 30_000 });
      await view.locator('#controls input[value="Claude Code"]').click();
      await view.locator('section.disagreement .coder:nth-child(3)').first().waitFor({ timeout: 30_000 });
      await page.waitForTimeout(800);
      await page.screenshot({ path: join(outDir, 'reports-disagreements.png') });
    },
  },
  {
    name: 'human vs AI',
    async run({ page, outDir }) {
      const view = await frameWith(page, 'Coder agreement');
      await view.locator('button.tab', { hasText: 'Human vs AI' }).click();
      await view.locator('#details h2').first().waitFor({ timeout: 60_000 });
      await view.locator('#agreement-unit').selectOption('sentence');
      await view.getByText('by sentence', { exact: false }).first().waitFor({ timeout: 60_000 });
      await view.locator('#details h2').first().waitFor({ timeout: 60_000 });
      await page.waitForTimeout(800);
      await page.screenshot({ path: join(outDir, 'reports-human-ai.png') });
      await view.locator('.linechart').first().scrollIntoViewIfNeeded();
      await page.waitForTimeout(800);
      await page.screenshot({ path: join(outDir, 'reports-human-ai-weeks.png') });
    },
  },
  {
    name: 'configure a remote',
    async run({ page, outDir, workspace }) {
      // the team's project gets a version history and a remote: a bare git repository in a shared folder, as a
      // lab would share one (made here, beside the run's copy of the workspace, which keeps one project)
      const remote = remoteOf(workspace);
      mkdirSync(remote, { recursive: true });
      mkdirSync(join(dirname(workspace), 'ana'), { recursive: true });
      execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', remote], {
        env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
      });
      for (const command of ['View: Close All Editors', 'Notifications: Clear All Notifications', 'Focus on Codes View']) {
        await page.keyboard.press('Escape');
        await palette(page, command).catch(() => page.keyboard.press('Escape'));
      }
      await page.waitForTimeout(500);
      await palette(page, 'Marginalia: Start Version History');
      await page.waitForTimeout(3000);
      await palette(page, 'Marginalia: Configure Remote...');
      const input = page.locator('.quick-input-widget input').first();
      await input.waitFor({ timeout: 15_000 });
      await input.fill(remote);
      await page.waitForTimeout(800);
      await page.screenshot({ path: join(outDir, 'team-configure-remote.png') });
      await page.keyboard.press('Enter');
      await page.waitForTimeout(1000);
      // the first sync sends the history; the status bar then shows the remote
      await palette(page, 'Marginalia: Sync Project');
      await page.locator('.statusbar-item', { hasText: 'origin' }).first().waitFor({ timeout: 30_000 });
      await page.waitForTimeout(1500);
    },
  },
  {
    name: 'sync with a conflict',
    async run({ page, outDir, workspace, log }) {
      // Ana joins from her own machine (an empty copy that receives the history), renames 'Food security' and
      // rewrites its memo, and sends her work; meanwhile Priya renames the same code her way and edits the memo too
      const ana = await startAna(join(dirname(workspace), 'ana'));
      try {
        await ana.call('initialize_version_control');
        await ana.call('configure_remote', { url: remoteOf(workspace) });
        log(`Ana's first sync: ${JSON.stringify(await ana.call('sync_project')).slice(0, 300)}`);
        const hers = (await ana.call('list_codes')).codes.find((c) => c.name === 'Food security');
        if (!hers) throw new Error("Ana's copy has no 'Food security'");
        await ana.call('rename_code', { code_id: hers.code_id, new_name: 'Access to fresh food' });
        await ana.call('update_code_memo', { code_id: hers.code_id, memo: 'Members grow what they could not afford to buy: fresh vegetables, herbs, fruit.' });
        const sent = await ana.call('sync_project');
        if (!sent.pushed) throw new Error(`Ana's sync sent nothing: ${JSON.stringify(sent)}`);
      } finally {
        await ana.stop();
      }
      // Priya's rename and memo, through the Codes view's context menu
      for (const [menu, from, value] of [
        ['Rename...', 'Food security', 'Food sovereignty'],
        ['Edit Memo...', 'Food sovereignty', 'Growing food as control over what the household eats, not only as saving money.'],
      ]) {
        await page
          .locator('.part.sidebar .monaco-list-row', { has: page.getByText(from, { exact: true }) })
          .first()
          .click({ button: 'right' });
        const item = page.getByRole('menuitem', { name: new RegExp(`^${menu.replace(/\./g, '\\.')}`) }).first();
        await item.waitFor({ timeout: 10_000 });
        await page.waitForTimeout(300);
        await item.click();
        const box = page.locator('.quick-input-widget input').first();
        await box.waitFor({ timeout: 15_000 });
        await box.fill(value);
        await page.waitForTimeout(300);
        await page.keyboard.press('Enter');
        await page.waitForTimeout(800);
      }
      await row(page, 'Food sovereignty').waitFor({ timeout: 30_000 });
      await palette(page, 'Notifications: Clear All Notifications');
      // Sync Project, as the researcher runs it: the merge keeps everything it can and names the conflicts
      await palette(page, 'Marginalia: Sync Project');
      // the result in words: a toast, and in the notification list (toasts do not show in this headless browser)
      await toast(page, 'conflict', 5_000).catch(() => log('no toast naming a conflict'));
      await page.waitForTimeout(2000);
      await palette(page, 'Notifications: Show Notifications');
      await page.locator('.notifications-center', { hasText: 'conflict' }).first().waitFor({ timeout: 60_000 });
      // the result is longer than a line: expand it so the picture shows it whole
      await page
        .locator('.notifications-center .monaco-list-row', { hasText: 'conflict' })
        .first()
        .locator('.codicon-notifications-expand')
        .first()
        .click({ timeout: 5_000 })
        .catch(() => log('no expand action on the sync result'));
      await page.waitForTimeout(1000);
      await page.screenshot({ path: join(outDir, 'team-sync-conflicts.png') });
      await palette(page, 'Notifications: Hide Notifications').catch(() => page.keyboard.press('Escape'));
    },
  },
  {
    name: 'merge conflicts view',
    async run({ page, outDir, log }) {
      await palette(page, 'Focus on Merge Conflicts View');
      const conflict = page.locator('.part.sidebar .monaco-list-row', { hasText: 'renamed on both sides' }).first();
      await conflict.waitFor({ timeout: 30_000 });
      // give the Merge Conflicts view the side bar (collapse the other Supervision views) and widen the side bar,
      // so each conflict reads whole; both are put back after the picture
      const header = (name) => page.locator('.part.sidebar .pane-header .title', { hasText: new RegExp(`^${name}$`) }).first();
      const others = ['Pending Approvals', 'Connected Agents', 'Agent Activity'];
      for (const name of others)
        await header(name)
          .click({ timeout: 5_000 })
          .catch(() => log(`no ${name} header`));
      // wider by VS Code's own command (60 px a step) while a view of the side bar has the focus
      await conflict.click();
      for (let i = 0; i < 5; i++) await palette(page, 'Increase Current View Size');
      await page.waitForTimeout(500);
      await conflict.click();
      // the pointer on the row: its tooltip (the conflict in full, the choices) and its inline actions
      const box = await conflict.boundingBox();
      if (box) await page.mouse.move(box.x + box.width / 3, box.y + box.height / 2);
      await page
        .locator('.monaco-hover, .workbench-hover', { hasText: 'Choices' })
        .first()
        .waitFor({ timeout: 10_000 })
        .catch(() => log('no tooltip on the conflict'));
      await page.waitForTimeout(800);
      await page.screenshot({ path: join(outDir, 'team-merge-conflicts.png') });
      await page.mouse.move(5, 5);
      await conflict.click();
      for (let i = 0; i < 5; i++) await palette(page, 'Decrease Current View Size');
      for (const name of others)
        await header(name)
          .click({ timeout: 5_000 })
          .catch(() => log(`no ${name} header`));
    },
  },
  {
    name: 'blind coding',
    async run({ page, outDir, log }) {
      // Start Blind Coding with Sam as the lead: Priya then sees only her own codings until Sam ends it
      await palette(page, 'Notifications: Clear All Notifications');
      await palette(page, 'Focus on Codes View');
      await palette(page, 'Marginalia: Start Blind Coding...');
      const input = page.locator('.quick-input-widget input').first();
      await input.waitFor({ timeout: 15_000 });
      await input.fill('Sam');
      await page.waitForTimeout(300);
      await page.keyboard.press('Enter');
      await toast(page, 'Blind coding is on', 3_000).catch(() => log('no "Blind coding is on" toast'));
      await page.locator('.statusbar-item', { hasText: 'Blind coding' }).first().waitFor({ timeout: 30_000 });
      await page.waitForTimeout(1500);
      await page.screenshot({ path: join(outDir, 'team-blind-coding.png') });
    },
  },
];
