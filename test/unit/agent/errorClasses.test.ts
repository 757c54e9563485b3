/**
 * The one error classification (src/agent/errorClasses.ts, issue 14 item 12): every error code of
 * src/core/errors.ts has an HTTP status, a gRPC status, an MCP error shape and a CLI exit code, and the HTTP
 * column is the table docs/reference/error-codes.md documents (read from the Markdown here, not from the code).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ERROR_CODES } from '../../../src/core/errors';
import { ERROR_CLASSES, STATUS_BY_CODE, cliExitOf, classify, grpcStatusOf, httpStatusOf, mcpErrorOf } from '../../../src/agent/errorClasses';
import { STATUS_BY_CODE as HTTP_SERVER_STATUS } from '../../../src/adapters/http/httpServer';

const DOC = path.resolve(__dirname, '..', '..', '..', 'docs', 'reference', 'error-codes.md');

/** The documented status of each code: the `| status | when | codes |` rows of the table. */
function documentedStatuses(): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const line of fs.readFileSync(DOC, 'utf8').split('\n')) {
    const m = /^\| (\d{3}) \|.*\|([^|]*)\|\s*$/.exec(line);
    if (!m) continue;
    for (const code of m[2]!.matchAll(/`([A-Z_/]+)`/g)) out.set(code[1]!, [...(out.get(code[1]!) ?? []), Number(m[1])]);
  }
  return out;
}

describe('agent/errorClasses: one error classification for every surface', () => {
  it('classifies every error code in every column', () => {
    assert.deepEqual(Object.keys(ERROR_CLASSES).sort(), [...ERROR_CODES].sort());
    const grpcCodes = new Set(Array.from({ length: 17 }, (_, i) => i));
    for (const code of ERROR_CODES) {
      const c = ERROR_CLASSES[code];
      assert.ok(c.http >= 400 && c.http <= 599, `${code} http ${c.http}`);
      assert.ok(grpcCodes.has(c.grpc) && c.grpc !== 0, `${code} grpc ${c.grpc} (0 is OK, not an error)`);
      assert.ok(
        c.mcp.kind === 'tool_result' ||
          (c.mcp.kind === 'jsonrpc' && c.mcp.code <= -32000 && c.mcp.code >= -32768) ||
          (c.mcp.kind === 'http' && c.mcp.status >= 400),
        `${code} mcp ${JSON.stringify(c.mcp)}`,
      );
      assert.ok([1, 2, 3].includes(c.cliExit), `${code} exit ${c.cliExit}`);
      assert.equal(httpStatusOf(code), c.http);
      assert.equal(grpcStatusOf(code), c.grpc);
      assert.deepEqual(mcpErrorOf(code), c.mcp);
      assert.equal(cliExitOf(code), c.cliExit);
    }
  });

  it('the HTTP column is the table of docs/reference/error-codes.md (each code under exactly one status, 413 aside)', () => {
    const documented = documentedStatuses();
    for (const code of ERROR_CODES) {
      // INVALID_ARGUMENTS is also listed under 413 (a body over 64 MB); its status otherwise is 400
      const statuses = (documented.get(code) ?? []).filter((s) => !(code === 'INVALID_ARGUMENTS' && s === 413));
      assert.deepEqual(statuses, [STATUS_BY_CODE[code]], `${code}: documented ${JSON.stringify(documented.get(code))}, classified ${STATUS_BY_CODE[code]}`);
    }
    for (const code of documented.keys()) assert.ok((ERROR_CODES as readonly string[]).includes(code), `the table lists ${code}, which is no error code`);
  });

  it("spot checks written out: the spec's statuses, gRPC numbers, MCP protocol errors, CLI exits", () => {
    assert.deepEqual(
      [
        httpStatusOf('CODE_NOT_FOUND'),
        httpStatusOf('DUPLICATE_NAME'),
        httpStatusOf('UNAUTHORIZED'),
        httpStatusOf('SESSION_FORBIDDEN'),
        httpStatusOf('RATE_LIMITED'),
        httpStatusOf('NO_PROJECT'),
        httpStatusOf('HANDLER_NOT_FOUND'),
      ],
      [404, 409, 401, 403, 429, 503, 501],
    );
    // grpc/grpc doc/statuscodes.md: INVALID_ARGUMENT 3, NOT_FOUND 5, ALREADY_EXISTS 6, PERMISSION_DENIED 7, RESOURCE_EXHAUSTED 8, ABORTED 10, UNAUTHENTICATED 16
    assert.deepEqual(
      ['INVALID_ARGUMENTS', 'SOURCE_NOT_FOUND', 'DUPLICATE_NAME', 'APPROVAL_FORBIDDEN', 'SESSION_LIMIT', 'VERSION_CONFLICT', 'SESSION_EXPIRED'].map(
        grpcStatusOf,
      ),
      [3, 5, 6, 7, 8, 10, 16],
    );
    assert.deepEqual(mcpErrorOf('TOOL_NOT_FOUND'), { kind: 'jsonrpc', code: -32602 });
    assert.deepEqual(mcpErrorOf('INVALID_JSON'), { kind: 'jsonrpc', code: -32700 });
    assert.deepEqual(mcpErrorOf('INVALID_ARGUMENTS'), { kind: 'tool_result' }, 'input validation errors are tool execution errors (MCP 2025-11-25)');
    assert.deepEqual(mcpErrorOf('UNAUTHORIZED'), { kind: 'http', status: 401 });
    assert.deepEqual([cliExitOf('UNAUTHORIZED'), cliExitOf('INVALID_CONFIG'), cliExitOf('SESSION_LIMIT'), cliExitOf('TOOL_EXECUTION_ERROR')], [2, 2, 3, 1]);
  });

  it('httpServer.ts re-exports the same table; an unknown code is classed as invalid', () => {
    assert.equal(HTTP_SERVER_STATUS, STATUS_BY_CODE);
    assert.equal(classify('SOMETHING_NEWER').http, 400);
  });
});
