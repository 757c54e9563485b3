/**
 * THE command table (src/ui/commands/index.ts) against package.json `contributes.commands`: activate() runs in
 * plain Node against a stand-in for the `vscode` module that records every `commands.registerCommand`, and the
 * ids it registered are compared with the contributed ones: each contributed command registered exactly once,
 * nothing registered that is not contributed. Also: concatTables refuses an id two areas both define.
 *
 * The stand-in implements what activation relies on for real (EventEmitter, Disposable, configuration defaults,
 * the registry of commands); every other API is an inert object that answers any property or call with
 * another inert object. Whether each command works is for the suites inside real VS Code (test/integration/).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { concatTables } from '../../../src/ui/commands/table';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** Commands registered on purpose without a contribution (none today): internal ids a menu or a test calls. */
const INTERNAL_COMMANDS: readonly string[] = [];

/** An object that answers every property read, call and `new` with another such object (never a thenable). */
function inert(): any {
  const cache = new Map<PropertyKey, unknown>();
  return new Proxy(function () {}, {
    get(target, prop) {
      if (prop === 'then') return undefined;
      if (prop === Symbol.iterator) return function* () {};
      if (prop === Symbol.toPrimitive) return () => '';
      if (prop === 'dispose') return () => undefined;
      // a class may extend an inert export
      if (prop === 'prototype') return target.prototype;
      if (!cache.has(prop)) cache.set(prop, inert());
      return cache.get(prop);
    },
    set(_target, prop, value) {
      cache.set(prop, value);
      return true;
    },
    apply: () => inert(),
    construct: () => inert(),
  });
}

/** A working EventEmitter: listeners called in order of subscription. */
class EventEmitter<T> {
  private listeners: ((e: T) => unknown)[] = [];
  readonly event = (listener: (e: T) => unknown) => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

class Disposable {
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((d) => d.dispose()));
  }
  constructor(private readonly onDispose: () => unknown) {}
  dispose(): void {
    this.onDispose();
  }
}

/** Every `commands.registerCommand` call, in order. */
const registered: string[] = [];

/** The names `vscode` exports (its classes, namespaces, enums and functions), read from its typings. */
function vscodeExportNames(): string[] {
  const typings = fs.readFileSync(path.join(ROOT, 'node_modules', '@types', 'vscode', 'index.d.ts'), 'utf8');
  return [...typings.matchAll(/^\texport (?:class|namespace|enum|const|let|function) (\w+)/gm)].map((m) => m[1] as string);
}

/** The stand-in for `vscode`: real where activation depends on behaviour, inert everywhere else. */
function vscodeStandIn(): Record<string, unknown> {
  const standIn: Record<string, unknown> = {};
  for (const name of vscodeExportNames()) standIn[name] = inert();
  const commands = standIn.commands as any;
  const workspace = standIn.workspace as any;
  return {
    ...standIn,
    EventEmitter,
    Disposable,
    commands: new Proxy(
      {
        registerCommand: (id: string) => {
          registered.push(id);
          return { dispose: () => undefined };
        },
        executeCommand: async () => undefined,
        getCommands: async () => [...registered],
      },
      { get: (t: Record<string, unknown>, p: string) => (p in t ? t[p] : commands[p]) },
    ),
    workspace: new Proxy(
      {
        workspaceFolders: undefined,
        textDocuments: [],
        findFiles: async () => [],
        getConfiguration: () => ({
          get: (_key: string, fallback?: unknown) => fallback,
          has: () => false,
          inspect: () => undefined,
          update: async () => undefined,
        }),
      },
      { get: (t: Record<string, unknown>, p: string) => (p in t ? t[p] : workspace[p]) },
    ),
  };
}

/** The ids package.json contributes as commands. */
function contributedCommands(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  return (pkg.contributes.commands as { command: string }[]).map((c) => c.command);
}

describe('THE command table against package.json contributes.commands', function () {
  const Module = require('node:module');
  const originalLoad = Module._load;
  const subscriptions: { dispose(): unknown }[] = [];
  let storage: string;

  before(async function () {
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-commands-'));
    const standIn = vscodeStandIn();
    Module._load = function (request: string, ...rest: unknown[]) {
      if (request === 'vscode') return standIn;
      return originalLoad.call(this, request, ...rest);
    };
    const { activate } = require('../../../src/extension');
    const memento = { get: (_k: string, d?: unknown) => d, update: async () => undefined, keys: () => [] };
    const secrets = new Map<string, string>();
    await activate({
      subscriptions,
      secrets: {
        get: async (k: string) => secrets.get(k),
        store: async (k: string, v: string) => void secrets.set(k, v),
        delete: async (k: string) => void secrets.delete(k),
        onDidChange: () => ({ dispose: () => undefined }),
      },
      globalStorageUri: { scheme: 'file', fsPath: storage, path: storage, toString: () => `file://${storage}` },
      extensionUri: { scheme: 'file', fsPath: ROOT, path: ROOT, toString: () => `file://${ROOT}` },
      extensionPath: ROOT,
      workspaceState: memento,
      globalState: { ...memento, setKeysForSync: () => undefined },
    });
  });

  after(function () {
    for (const d of subscriptions) {
      try {
        d.dispose();
      } catch {
        // inert parts may refuse; the sweeper's timer is what must stop
      }
    }
    Module._load = originalLoad;
    fs.rmSync(storage, { recursive: true, force: true });
  });

  it('registers each contributed command exactly once', function () {
    const counts = new Map<string, number>();
    for (const id of registered) counts.set(id, (counts.get(id) ?? 0) + 1);
    const contributed = contributedCommands();
    assert.ok(contributed.length >= 90, `package.json contributes ${contributed.length} commands`);
    assert.deepEqual(
      contributed.filter((id) => counts.get(id) !== 1).map((id) => `${id} registered ${counts.get(id) ?? 0} times`),
      [],
    );
  });

  it('registers no command that package.json does not contribute, except the internal ones', function () {
    const contributed = new Set([...contributedCommands(), ...INTERNAL_COMMANDS]);
    assert.deepEqual(
      registered.filter((id) => !contributed.has(id)),
      [],
    );
  });

  it('registers nothing twice', function () {
    assert.equal(new Set(registered).size, registered.length);
  });
});

describe('concatTables', function () {
  const noop = () => undefined;

  it('joins the areas in order', function () {
    const first = () => 1;
    const second = () => 2;
    const table = concatTables({ coding: { 'marginalia.coding.a': first }, codes: { 'marginalia.codes.b': second } });
    assert.deepEqual(Object.keys(table), ['marginalia.coding.a', 'marginalia.codes.b']);
    assert.equal(table['marginalia.codes.b'], second);
  });

  it('refuses an id two areas define, naming both', function () {
    assert.throws(
      () => concatTables({ coding: { 'marginalia.x': noop }, codes: { 'marginalia.y': noop }, cases: { 'marginalia.x': noop } }),
      /marginalia\.x is in the tables of both coding and cases/,
    );
  });
});
