/**
 * The gRPC adapter's certificates (src/cli/certs.ts, node-forge), checked with Node's own X509Certificate:
 * a CA that may sign and nothing else, a server certificate for 127.0.0.1/::1/localhost, client
 * certificates carrying their role in the subject OU, 0600 files, idempotence and renewal.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { certFiles, clientFiles, ensureAuthority, issueClientCert, LEAF_DAYS } from '../../../src/cli/certs';

const DAY = 86_400_000;
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

describe('cli/certs (local CA for mutual TLS)', function () {
  this.timeout(60_000);
  let dir: string;
  const x509 = (f: string) => new X509Certificate(fs.readFileSync(f));

  beforeEach(() => {
    dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-certs-')), 'certs');
  });
  afterEach(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));

  it('makes a CA and a server certificate for the loopback names, 0600 in a 0700 folder, once', () => {
    const first = ensureAuthority(dir);
    const f = certFiles(dir);
    assert.deepEqual([...first.created].sort(), [f.caCert, f.caKey, f.serverCert, f.serverKey].sort());
    for (const file of fs.readdirSync(dir)) assert.equal(fs.statSync(path.join(dir, file)).mode & 0o777, 0o600, file);
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
    const ca = x509(f.caCert);
    const server = x509(f.serverCert);
    assert.equal(ca.ca, true);
    assert.equal(server.ca, false);
    assert.ok(server.verify(ca.publicKey));
    assert.equal(server.issuer, ca.subject);
    assert.ok(server.checkIP('127.0.0.1'));
    assert.ok(server.checkIP('::1'));
    assert.equal(server.checkHost('localhost'), 'localhost');
    assert.equal(server.checkHost('example.com'), undefined);
    assert.deepEqual(server.keyUsage, [SERVER_AUTH]);
    // a second run changes nothing
    const before = fs.readFileSync(f.serverCert, 'utf8');
    assert.deepEqual(ensureAuthority(dir).created, []);
    assert.equal(fs.readFileSync(f.serverCert, 'utf8'), before);
  });

  it('issues client certificates with the role in the subject OU, for client authentication only', () => {
    const agent = issueClientCert(dir, 'bot', 'agent');
    const researcher = issueClientCert(dir, 'me', 'researcher');
    assert.deepEqual(agent, { ...clientFiles(dir, 'bot'), ca: certFiles(dir).caCert });
    const ca = x509(certFiles(dir).caCert);
    const a = x509(agent.cert);
    const r = x509(researcher.cert);
    assert.match(a.subject, /^CN=bot\nOU=agent\nO=Marginalia$/);
    assert.match(r.subject, /OU=researcher/);
    assert.ok(a.verify(ca.publicKey) && r.verify(ca.publicKey));
    assert.deepEqual(a.keyUsage, [CLIENT_AUTH]);
    assert.notEqual(a.serialNumber, r.serialNumber);
    const days = (Date.parse(a.validTo) - Date.now()) / DAY;
    assert.ok(days > LEAF_DAYS - 2 && days <= LEAF_DAYS + 1, `valid ${days} days`);
    assert.equal(fs.statSync(agent.key).mode & 0o777, 0o600);
    // the private key matches the certificate
    assert.ok(a.checkPrivateKey(require('node:crypto').createPrivateKey(fs.readFileSync(agent.key))));
  });

  it('refuses names that are not file-safe and roles other than agent and researcher', () => {
    assert.throws(() => issueClientCert(dir, '../escape', 'agent'), /client name/);
    assert.throws(() => issueClientCert(dir, '', 'agent'), /client name/);
    assert.throws(() => issueClientCert(dir, 'x'.repeat(65), 'agent'), /client name/);
    assert.throws(() => issueClientCert(dir, 'ok', 'admin' as 'agent'), /role/);
    assert.ok(!fs.existsSync(path.join(path.dirname(dir), 'escape.pem')));
  });

  it('renews the server certificate when it nears expiry or the CA changed', () => {
    const f = certFiles(dir);
    ensureAuthority(dir);
    const original = x509(f.serverCert).serialNumber;
    // 800 of 825 days later: within 30 days of expiry
    const later = new Date(Date.now() + 800 * DAY);
    assert.deepEqual(ensureAuthority(dir, later).created, [f.serverCert, f.serverKey]);
    const renewed = x509(f.serverCert);
    assert.notEqual(renewed.serialNumber, original);
    // a new CA (the old one deleted): the server certificate is reissued by it
    fs.rmSync(f.caCert);
    const created = ensureAuthority(dir).created;
    assert.ok(created.includes(f.caCert) && created.includes(f.serverCert));
    assert.ok(x509(f.serverCert).verify(x509(f.caCert).publicKey));
  });
});
