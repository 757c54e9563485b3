/** Who a gRPC client is: the role (subject OU) and name (subject CN) of its verified client certificate. */
import type { PeerCertificate } from 'node:tls';
import type { Role } from '../../agent/agentContext';
import { ToolError } from '../../core/errors';

/** The certificate roles (subject OU) and what they map to. */
export const CERT_ROLES: readonly Role[] = ['agent', 'researcher'];

/** Who a verified client certificate names. */
export interface CertIdentity {
  role: Role;
  /** the subject CN */
  name: string;
  /** SHA-256 fingerprint of the certificate: explicit sessions belong to it */
  fingerprint: string;
}

/**
 * The identity of a client certificate that TLS has already verified against the install's CA: its
 * subject OU must be `agent` or `researcher`, its CN names the client (1-64 characters).
 * Errors: UNAUTHORIZED (no certificate, no or unknown role, no name).
 */
export function identityOfCertificate(cert: PeerCertificate | undefined | null): CertIdentity {
  if (!cert || !cert.subject || Object.keys(cert).length === 0)
    throw new ToolError('UNAUTHORIZED', 'No client certificate: the gRPC adapter requires mutual TLS (marginalia certs --client NAME --role agent|researcher)');
  const ou = (cert.subject as unknown as Record<string, string | string[] | undefined>).OU;
  const roles = (Array.isArray(ou) ? ou : ou === undefined ? [] : [ou]).filter((r): r is Role => (CERT_ROLES as readonly string[]).includes(r));
  if (roles.length !== 1)
    throw new ToolError('UNAUTHORIZED', `The client certificate must carry exactly one role in its subject OU (${CERT_ROLES.join(' or ')})`);
  const cn = (cert.subject as unknown as Record<string, string | string[] | undefined>).CN;
  const name = Array.isArray(cn) ? cn[0] : cn;
  if (!name || name.length > 64) throw new ToolError('UNAUTHORIZED', 'The client certificate must name the client in its subject CN (1-64 characters)');
  return { role: roles[0] as Role, name, fingerprint: cert.fingerprint256 };
}
