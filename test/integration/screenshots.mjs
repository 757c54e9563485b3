// Steps of `node test/integration/run.mjs screenshot OUT_DIR --workspace=DIR` (npm run screenshots ->
// docs/images). The workspace is the sample study with a seeded project (prepareScreenshotWorkspace.mjs),
// which Marginalia opens on activation because it is the workspace's only .qda file.
// Each step gets { page, outDir, workspace, log }; a step that throws fails the run.
import { join } from 'node:path';

const row = (page, text) => page.locator('.monaco-list-row', { hasText: text }).first();

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
    },
  },
  {
    name: 'coded transcript',
    async run({ page, outDir }) {
      // collapse the first category so "Food security" is on screen, then click it: its segments show in
      // the Coded Segments view; clicking the segment opens the transcript at the coded passage
      await row(page, 'Belonging').click();
      const code = page.locator('.monaco-list-row', { has: page.getByText('Food security', { exact: true }) }).first();
      await code.waitFor({ timeout: 15_000 });
      await code.click();
      await row(page, 'is not a hobby').waitFor({ timeout: 30_000 });
      await row(page, 'is not a hobby').click();
      await page.locator('.view-lines', { hasText: 'is not a hobby' }).first().waitFor({ timeout: 30_000 });
      await page.waitForTimeout(1500); // the reveal flash ends
      await page.keyboard.press('Escape'); // drop the selection so the code's tint shows
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(outDir, 'coded-transcript.png') });
    },
  },
  {
    name: 'hover',
    async run({ page, outDir }) {
      const span = page.locator('.view-lines span', { hasText: 'is not a hobby' }).last();
      const box = await span.boundingBox();
      if (!box) throw new Error('the coded passage is not on screen');
      await page.mouse.move(box.x + box.width - 20, box.y + box.height / 2);
      await page.locator('.monaco-hover', { hasText: 'Food security' }).first().waitFor({ timeout: 15_000 });
      await page.waitForTimeout(500);
      await page.screenshot({ path: join(outDir, 'hover.png') });
    },
  },
  {
    name: 'reports',
    async run({ page, outDir }) {
      // Marginalia: Open Reports from the command palette: the webview draws the frequency bar chart; a
      // click on a bar lists its coded segments in a quick pick
      await page.keyboard.press('Escape');
      await page.keyboard.press('F1');
      await page.keyboard.type('Marginalia: Open Reports');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open Reports' }).first().waitFor({ timeout: 15_000 });
      await page.keyboard.press('Enter');
      const view = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
      await view.locator('#summary', { hasText: 'coded segments' }).waitFor({ timeout: 30_000 });
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
      // F1 can be swallowed while the Reports webview (an iframe) has the focus: give the workbench the
      // focus and try again
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Focus Problems' }).first();
      for (let attempt = 1; ; attempt++) {
        await page.keyboard.press('F1');
        await page.keyboard.type('View: Focus Problems');
        try {
          await row.waitFor({ timeout: 5_000 });
          break;
        } catch (e) {
          if (attempt === 3) throw e;
          await page.keyboard.press('Escape');
          await page.locator('.part.sidebar .title-label').first().click();
        }
      }
      await page.keyboard.press('Enter');
      await page.locator('.markers-panel .monaco-list-row', { hasText: 'marginalia-codebook' }).first().waitFor({ timeout: 30_000 });
      await page.waitForTimeout(800);
      await page.screenshot({ path: join(outDir, 'codebook-health.png') });
    },
  },
];
