/** Stage 7: record a finished call in the audit sink, the agent layer's JSONL audit log and the call listeners. */
import { isoTime } from '../../core/clock';
import type { PipelineCore } from './core';
import { auditCoder } from './provenance';
import type { CallRecord } from './types';

/** Stage 7: record the call. A failing sink or listener is logged, never thrown. */
export function audit(core: PipelineCore, call: CallRecord): void {
  try {
    core.opts.audit?.record(call);
    core.opts.agent?.audit?.record({
      timestamp: isoTime(core.clock.now()),
      session_id: call.caller.session_id,
      client_type: call.caller.client_type,
      client_name: call.caller.client_name,
      user: call.caller.user,
      ...auditCoder(core, call.caller),
      tool: call.tool,
      decision: call.decision,
      trust_level: call.trust_level,
      error_code: call.error_code,
      request_id: call.request_id,
      correlation_id: call.caller.correlation_id,
      duration_ms: Math.round(call.durationMs * 1000) / 1000,
      arguments: call.arguments,
    });
  } catch (e) {
    core.logger.error('audit failed', e);
  }
  for (const l of core.callListeners) {
    try {
      l(call);
    } catch (e) {
      core.logger.error('call listener failed', e);
    }
  }
}
