/**
 * Who caused what (issue 14 item 1): the coder's role of a caller, an event's `caused_by`, who decided an
 * approval request and the coder fields of an audit line.
 */
import type { CausedBy } from '../../domain/events';
import type { CoderRole } from '../../domain/model';
import type { PipelineCore } from './core';
import type { Caller } from './types';

/**
 * The coder's role of `caller` (issue 14, item 1): the researcher for the local UI (client type LOCAL_UI, also
 * the pipeline's own housekeeping) and the reviewer token (`caller.researcher`); every other caller is an agent,
 * with or without the agent layer.
 */
export function roleOf(caller: Caller): CoderRole {
  return caller.researcher === true || caller.client_type === 'LOCAL_UI' ? 'researcher' : 'agent';
}

/**
 * An event's `caused_by` for `caller`: the session, client type and owner (`user`), the coder's role and name
 * (the researcher's coder name; an agent's credential name, else its client name), and for an agent its client
 * name and the model its session stated.
 */
export function causedBy(core: PipelineCore, caller: Caller): CausedBy {
  const base = { session_id: caller.session_id, client_type: caller.client_type, user: caller.user };
  if (roleOf(caller) === 'researcher') return { ...base, role: 'researcher', coder: caller.user };
  const sessions = core.opts.agent?.sessions;
  const session = sessions?.get(caller.session_id);
  const credential = caller.agent ?? session?.owner ?? sessions?.ownerOf(caller.session_id);
  const model = session?.model;
  // the install's own token is the credential `agent`: its client name says more
  const coder = credential && credential !== 'researcher' && credential !== 'agent' ? credential : caller.client_name || caller.user;
  return { ...base, role: 'agent', coder, client: caller.client_name, ...(model ? { model } : {}) };
}

/**
 * Who decided an approval request, as the record keeps it (migration 16): the researcher's coder name and role;
 * both null for the pipeline's own timeouts (session `marginalia`).
 */
export function decider(core: PipelineCore, by: Caller): { decided_by_coder: string | null; decided_by_role: CoderRole | null } {
  if (by.session_id === 'marginalia') return { decided_by_coder: null, decided_by_role: null };
  const c = causedBy(core, by);
  return { decided_by_coder: c.coder ?? by.user, decided_by_role: c.role ?? null };
}

/** The coder fields of an audit line (role, coder, and an agent's model): see {@link causedBy}. */
export function auditCoder(core: PipelineCore, caller: Caller): { role: CoderRole; coder: string; model?: string } {
  const c = causedBy(core, caller);
  return { role: c.role ?? 'agent', coder: c.coder ?? caller.user, ...(c.model ? { model: c.model } : {}) };
}
