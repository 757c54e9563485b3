/**
 * Waiting on a condition inside a page whose CSP forbids `eval`. Playwright's `page.waitForFunction` with a
 * string predicate polls by `eval` inside the page, which a webview's CSP (no 'unsafe-eval') refuses as soon
 * as the first check is false; `page.evaluate` runs over the DevTools protocol and is not subject to the CSP.
 * So this polls the expression with `page.evaluate` every `intervalMs` until it is truthy.
 *
 * @param page the Playwright page
 * @param expression a JavaScript expression evaluated in the page
 * @param timeoutMs how long to wait in milliseconds (default 15,000); throws with the expression on timeout
 */
export async function waitInPage(page: import('playwright-core').Page, expression: string, timeoutMs = 15_000, intervalMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await page.evaluate(`Boolean(${expression})`)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting in the page for: ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
