/**
 * Small assertion helpers shared by the HTTP end-to-end tests of the issue-5 tools (cases, AV, reports and
 * search, the design's tools, the AI tools): call a tool and assert the success or failure envelope with
 * its HTTP status, read the stored events over REST, and compare snapshots before and after a failing call.
 *
 * The HTTP statuses are written out here (docs/reference/error-codes.md; `STATUS_BY_CODE` in
 * src/adapters/http/httpServer.ts) rather than imported, so a change there is seen by the tests.
 */
import assert from 'node:assert/strict';
import { callTool, request, type HttpResult } from './serverProcess';

/** The HTTP status of every error code these tests expect. */
export const EXPECTED_STATUS: Readonly<Record<string, number>> = {
  INVALID_ARGUMENTS: 400,
  INVALID_POSITION: 400,
  MERGE_SAME_CODE: 400,
  UNKNOWN_FORMAT: 400,
  'AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE': 400,
  APPROVAL_FORBIDDEN: 403,
  SESSION_FORBIDDEN: 403,
  SOURCE_CLOSED: 403,
  AGENT_NOT_FOUND: 404,
  MERGE_CONFLICT_NOT_FOUND: 404,
  AGENT_EXISTS: 409,
  CODE_NOT_FOUND: 404,
  SOURCE_NOT_FOUND: 404,
  SEGMENT_NOT_FOUND: 404,
  FOLDER_NOT_FOUND: 404,
  CATEGORY_NOT_FOUND: 404,
  CASE_NOT_FOUND: 404,
  ATTRIBUTE_NOT_FOUND: 404,
  SUGGESTION_NOT_FOUND: 404,
  REPORT_NOT_FOUND: 404,
  TRANSCRIPT_NOT_FOUND: 404,
  'AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND': 404,
  'AV_SEGMENT_NOT_REMOVED/NOT_FOUND': 404,
  DUPLICATE_NAME: 409,
  CATEGORY_NOT_EMPTY: 409,
  CATEGORY_CYCLE: 409,
  SOURCE_DUPLICATE_NAME: 409,
  'AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT': 409,
  SUGGESTION_ALREADY_DECIDED: 409,
  NOT_UNDOABLE: 409,
  NOTHING_TO_UNDO: 409,
  NOTHING_TO_REDO: 409,
  REMOTE_NOT_CONFIGURED: 409,
  SYNC_DIVERGED: 409,
  SOURCE_IMPORT_FAILED: 422,
  EXPORT_FAILED: 422,
  TRANSCRIPTION_FAILED: 502,
  REMOTE_UNREACHABLE: 502,
  NO_PROJECT: 503,
  'CASES_NOT_LISTED/NO_CONTEXT': 503,
};

/** A failure envelope. */
export interface Failure {
  success: false;
  error: string;
  error_code: string;
  details?: any;
}

/** Tool calls against the server at `base()` (a function: the server may be restarted), recording the error codes seen. */
export function toolClient(base: () => string) {
  const seen = new Set<string>();

  /** Asserts HTTP 200 and `{success: true, data}`; returns data. */
  function assertOk(r: HttpResult, what: string): any {
    assert.equal(r.status, 200, `${what}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 600)}`);
    assert.equal(r.body.success, true, what);
    assert.ok(r.body.data !== null && typeof r.body.data === 'object', `${what}: data is an object`);
    return r.body.data;
  }

  /** Asserts the failure envelope with `code` and its HTTP status from {@link EXPECTED_STATUS}. */
  function assertFails(r: HttpResult, code: string, what: string): Failure {
    const status = EXPECTED_STATUS[code];
    assert.ok(status !== undefined, `no expected status for ${code}`);
    assert.equal(r.body?.error_code, code, `${what}: expected ${code}, got HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 600)}`);
    assert.equal(r.status, status, `${what}: HTTP status of ${code}`);
    assert.equal(r.body.success, false);
    assert.equal(typeof r.body.error, 'string');
    assert.ok(r.body.error.length > 0, `${what}: the error message is not empty`);
    assert.deepEqual(
      Object.keys(r.body)
        .filter((k) => k !== 'details')
        .sort(),
      ['error', 'error_code', 'success'],
      `${what}: the failure envelope is {success, error, error_code} plus optional details`,
    );
    seen.add(code);
    return r.body as Failure;
  }

  return {
    /** error codes asserted so far */
    seen,
    /** Calls `name` (as the researcher unless `headers` names another token) and asserts success. */
    async ok(name: string, args: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<any> {
      return assertOk(await callTool(base(), name, args, headers), `${name} ${JSON.stringify(args).slice(0, 200)}`);
    },
    /** Calls `name` and asserts it fails with `code` (and that code's HTTP status). */
    async fails(name: string, args: Record<string, unknown>, code: string, headers: Record<string, string> = {}): Promise<Failure> {
      return assertFails(await callTool(base(), name, args, headers), code, `${name} ${JSON.stringify(args).slice(0, 200)}`);
    },
    /** Calls `name` as `headers` says and asserts HTTP 202 pending_approval; returns the request id. */
    async pending(name: string, args: Record<string, unknown>, headers: Record<string, string>): Promise<string> {
      const r = await callTool(base(), name, args, headers);
      assert.equal(r.status, 202, `${name}: expected 202, got ${r.status} ${JSON.stringify(r.body).slice(0, 400)}`);
      assert.equal(r.body.data.status, 'pending_approval');
      assert.equal(r.body.data.tool, name);
      assert.equal(typeof r.body.data.request_id, 'string');
      return r.body.data.request_id as string;
    },
    /** The researcher approves a held request; returns the stored call's result. */
    async approve(requestId: string): Promise<any> {
      const r = await request(base(), 'POST', `/approvals/${requestId}/approve`, {});
      assert.equal(r.status, 200, `approve ${requestId}: ${JSON.stringify(r.body).slice(0, 400)}`);
      assert.equal(r.body.data.status, 'completed', JSON.stringify(r.body).slice(0, 400));
      return r.body.data.result;
    },
    /** The sequence number of the newest stored event. */
    async headSeq(): Promise<number> {
      const r = await request(base(), 'GET', '/events/history?limit=1');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data.head_seq as number;
    },
    /** Stored events after sequence `since` whose type matches `pattern` (e.g. `analysis.*`), oldest first. */
    async events(since: number, pattern?: string): Promise<any[]> {
      const q = `/events/history?since=${since}&limit=1000${pattern ? `&pattern=${encodeURIComponent(pattern)}` : ''}`;
      const r = await request(base(), 'GET', q);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.data.has_more, false);
      return r.body.data.events as any[];
    },
    /**
     * Runs `failing` (which must assert its own failure) and checks that `snapshot` is the same before and
     * after it and that no event was stored.
     */
    async writesNothing(snapshot: () => Promise<unknown>, failing: () => Promise<unknown>, what: string): Promise<void> {
      const before = await snapshot();
      const seq = await this.headSeq();
      await failing();
      assert.deepEqual(await snapshot(), before, `${what}: the failed call changed nothing`);
      assert.equal(await this.headSeq(), seq, `${what}: the failed call stored no event`);
    },
  };
}
