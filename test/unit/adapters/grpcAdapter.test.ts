/**
 * The gRPC adapter's mapping pieces: a verified client certificate's subject to a role (exactly one
 * known OU, a CN), pipeline outcomes to CallToolResponse, event records to the proto Event, and the
 * .proto loading (found from source, every RPC of the design present).
 */
import assert from 'node:assert/strict';
import type { PeerCertificate } from 'node:tls';
import { identityOfCertificate, marginaliaService, toCallResponse, toProtoEvent } from '../../../src/adapters/grpc/grpcAdapter';
import { isToolError } from '../../../src/core/errors';
import type { InvokeOutcome } from '../../../src/agent/pipeline';

const cert = (subject: Record<string, string | string[]>): PeerCertificate => ({ subject, fingerprint256: 'AA:BB' }) as unknown as PeerCertificate;
const refused = (f: () => unknown) => assert.throws(f, (e: unknown) => isToolError(e) && e.code === 'UNAUTHORIZED');

describe('adapters/grpc', () => {
  it('maps the certificate OU to a role and refuses anything ambiguous', () => {
    assert.deepEqual(identityOfCertificate(cert({ CN: 'bot', OU: 'agent', O: 'Marginalia' })), { role: 'agent', name: 'bot', fingerprint: 'AA:BB' });
    assert.equal(identityOfCertificate(cert({ CN: 'me', OU: ['researcher', 'lab'] })).role, 'researcher');
    refused(() => identityOfCertificate(undefined));
    refused(() => identityOfCertificate({} as PeerCertificate));
    refused(() => identityOfCertificate(cert({ CN: 'x' })));
    refused(() => identityOfCertificate(cert({ CN: 'x', OU: 'admin' })));
    refused(() => identityOfCertificate(cert({ CN: 'x', OU: ['agent', 'researcher'] })));
    refused(() => identityOfCertificate(cert({ OU: 'agent' })));
  });

  it('turns outcomes into CallToolResponse: OK, PENDING_APPROVAL with request_id, FAILED with code and details', () => {
    const base = { tool: 't', durationMs: 1, events: [] };
    const okRes = toCallResponse({ ...base, status: 'ok', envelope: { success: true, data: { code_id: 3 } } } as InvokeOutcome);
    assert.deepEqual(okRes, { success: true, data_json: '{"code_id":3}', error: '', error_code: '', status: 'OK', request_id: '', details_json: '' });
    const pending = toCallResponse({
      ...base,
      status: 'pending',
      envelope: { success: true, data: { status: 'pending_approval', request_id: 'r-1' } },
    } as InvokeOutcome);
    assert.equal(pending.status, 'PENDING_APPROVAL');
    assert.equal(pending.request_id, 'r-1');
    const failed = toCallResponse({
      ...base,
      status: 'failed',
      envelope: { success: false, error: 'no', error_code: 'INVALID_ARGUMENTS', details: { issues: [1] } },
    } as InvokeOutcome);
    assert.deepEqual(
      [failed.status, failed.success, failed.error_code, JSON.parse(failed.details_json)],
      ['FAILED', false, 'INVALID_ARGUMENTS', { issues: [1] }],
    );
  });

  it('flattens an event record into the proto Event with the payload as JSON text', () => {
    const e = toProtoEvent({
      event_id: 'e',
      event_type: 'coding.code_created',
      timestamp: '2026-01-01T00:00:00.000Z',
      aggregate_type: 'code',
      aggregate_id: '3',
      caused_by: { session_id: 's', client_type: 'CUSTOM', user: 'u' },
      payload: { code_id: 3, name: 'Hope' },
      metadata: { correlation_id: 'c', sequence_number: 42 },
    });
    assert.equal(e.sequence_number, 42);
    assert.equal(e.correlation_id, 'c');
    assert.deepEqual(JSON.parse(e.payload_json as string), { code_id: 3, name: 'Hope' });
  });

  it('loads proto/marginalia.proto with every RPC of the service', () => {
    const names = Object.keys(marginaliaService()).sort();
    assert.deepEqual(names, [
      'Approve',
      'CallTool',
      'CloseSession',
      'Heartbeat',
      'ListApprovals',
      'ListTools',
      'OpenSession',
      'Reject',
      'Subscribe',
      'Unsubscribe',
    ]);
    assert.equal(marginaliaService().Subscribe?.responseStream, true);
  });
});
