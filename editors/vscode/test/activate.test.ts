// The bundle that ships (out/extension.js) activated outside VS Code: a stub `vscode` module stands in for the
// editor's API, and vscode-languageclient inside the bundle starts the real server, initializes it and registers the
// providers the server offers. Then the restart command and deactivate. The server command comes from
// GRAPHLSP_SERVER as in server.test.ts; without a runnable server the test is skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import Module from 'module';

const TIMEOUT_MS = 30_000;

type Listener = (e: unknown) => unknown;

class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((i) => i?.dispose()));
  }
  dispose(): void {
    this.fn();
  }
}

class EventEmitter<T> {
  private listeners: Listener[] = [];
  event = (listener: Listener): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => (this.listeners = this.listeners.filter((l) => l !== listener)));
  };
  fire(e?: T): void {
    this.listeners.forEach((l) => l(e));
  }
  dispose(): void {
    this.listeners = [];
  }
}

class Uri {
  constructor(readonly scheme: string, readonly fsPath: string) {}
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  static parse(s: string): Uri {
    return s.startsWith('file://') ? new Uri('file', decodeURIComponent(s.slice(7))) : new Uri(s.split(':')[0], s);
  }
  get path(): string {
    return this.fsPath;
  }
  toString(): string {
    return this.scheme === 'file' ? `file://${this.fsPath}` : this.fsPath;
  }
  with(): Uri {
    return this;
  }
}

/** Anything else in the API: callable, constructible, every property another stub, never a thenable. */
function anything(name: string): any {
  const cache = new Map<PropertyKey, unknown>();
  const target = function () {} as unknown as object;
  return new Proxy(target, {
    get(_t, prop) {
      if (prop === 'then') return undefined;
      if (prop === Symbol.toPrimitive) return () => name;
      if (prop === Symbol.iterator) return function* () {};
      if (prop === 'dispose') return () => undefined;
      if (!cache.has(prop)) cache.set(prop, anything(`${name}.${String(prop)}`));
      return cache.get(prop);
    },
    apply() {
      return anything(`${name}()`);
    },
    construct() {
      return anything(`new ${name}`) as object;
    },
  });
}

/** The top-level names of the `vscode` API, from @types/vscode. */
function apiNames(): string[] {
  const dts = fs.readFileSync(path.resolve(__dirname, '..', '..', 'node_modules', '@types', 'vscode', 'index.d.ts'), 'utf8');
  const names = [...dts.matchAll(/^\s*export (?:declare )?(?:class|enum|namespace|function|const|let|var) ([A-Za-z_]+)/gm)];
  return [...new Set(names.map((m) => m[1]))];
}

function stubVscode(settings: Record<string, unknown>) {
  const calls = { commands: new Map<string, (...a: unknown[]) => unknown>(), providers: [] as string[], errors: [] as string[], log: [] as string[] };
  const logger = (level: string) => (...args: unknown[]) => calls.log.push(`${level}: ${args.map(String).join(' ')}`);
  const channel = {
    name: 'graphlsp', logLevel: 2, onDidChangeLogLevel: new EventEmitter<number>().event,
    append: logger('append'), appendLine: logger('line'), replace: logger('replace'), clear: () => undefined,
    show: () => undefined, hide: () => undefined, dispose: () => undefined,
    trace: logger('trace'), debug: logger('debug'), info: logger('info'), warn: logger('warn'), error: logger('error'),
  };
  const event = () => new Disposable();
  const languages = new Proxy(anything('languages'), {
    get(target, prop) {
      if (typeof prop === 'string' && prop.startsWith('register')) {
        return (selector: unknown) => {
          calls.providers.push(`${prop} ${JSON.stringify(selector)}`);
          return new Disposable();
        };
      }
      if (prop === 'match') return () => 10;
      if (prop === 'getDiagnostics') return () => [];
      return Reflect.get(target, prop);
    },
  });
  const configuration = (section?: string) => ({
    get: (key: string, fallback?: unknown) => {
      const full = section ? `${section}.${key}` : key;
      return full in settings ? settings[full] : fallback;
    },
    has: (key: string) => `${section}.${key}` in settings,
    inspect: () => undefined,
    update: async () => undefined,
  });
  const overrides = new Proxy(anything('vscode'), {
    get(target, prop) {
      switch (prop) {
        case 'version': return '1.91.0';
        case 'env': return { appName: 'Visual Studio Code (stub)', appRoot: '/', language: 'en', machineId: 'stub',
          sessionId: 'stub', uriScheme: 'vscode', shell: '/bin/sh', uiKind: 1, remoteName: undefined };
        case 'Disposable': return Disposable;
        case 'EventEmitter': return EventEmitter;
        case 'Uri': return Uri;
        case 'languages': return languages;
        case 'workspace': return new Proxy(anything('workspace'), {
          get(t, p) {
            if (p === 'getConfiguration') return configuration;
            if (p === 'workspaceFolders') return undefined;
            if (p === 'textDocuments') return [];
            if (p === 'notebookDocuments') return [];
            if (typeof p === 'string' && p.startsWith('onDid')) return event;
            if (typeof p === 'string' && p.startsWith('onWill')) return event;
            return Reflect.get(t, p);
          },
        });
        case 'window': return new Proxy(anything('window'), {
          get(t, p) {
            if (p === 'createOutputChannel') return () => channel;
            if (p === 'visibleTextEditors') return [];
            if (p === 'activeTextEditor') return undefined;
            if (p === 'showErrorMessage') return async (msg: string) => { calls.errors.push(msg); return undefined; };
            if (typeof p === 'string' && p.startsWith('onDid')) return event;
            return Reflect.get(t, p);
          },
        });
        case 'commands': return new Proxy(anything('commands'), {
          get(t, p) {
            if (p === 'registerCommand') {
              return (id: string, fn: (...a: unknown[]) => unknown) => { calls.commands.set(id, fn); return new Disposable(); };
            }
            if (p === 'executeCommand') return async () => undefined;
            return Reflect.get(t, p);
          },
        });
        default: return Reflect.get(target, prop);
      }
    },
  });
  // The bundle copies the module's own properties (esbuild's __toESM): give it every name the API declares.
  const vscode: Record<string, unknown> = {};
  for (const name of apiNames()) vscode[name] = overrides[name];
  return { vscode, calls };
}

function within<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${TIMEOUT_MS} ms: ${what}`)), TIMEOUT_MS);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

test('the bundled extension activates, starts the server and registers its providers', async (t) => {
  const argv: string[] = process.env.GRAPHLSP_SERVER ? JSON.parse(process.env.GRAPHLSP_SERVER) : ['graphlsp', 'serve'];
  const probe = spawnSync(argv[0], [...argv.slice(1), '--help'], { timeout: 30_000 });
  if (probe.error || probe.status !== 0) {
    t.skip(`cannot run \`${argv.join(' ')}\`: ${probe.error ?? probe.stderr} (set GRAPHLSP_SERVER)`);
    return;
  }
  const { vscode, calls } = stubVscode({
    'graphlsp.server.command': argv[0],
    'graphlsp.server.args': argv.slice(1),
    'graphlsp.inlayHints': true,
    'graphlsp.trace.server': 'off',
  });
  const load = (Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown })._load;
  (Module as unknown as { _load: typeof load })._load = (request: string, ...rest: unknown[]) =>
    request === 'vscode' ? vscode : load(request, ...rest);
  try {
    const bundle = path.resolve(__dirname, '..', 'extension.js');
    const ext = require(bundle) as { activate(c: unknown): Promise<void>; deactivate(): Promise<void> };
    const context = { subscriptions: [] as { dispose(): unknown }[], extensionPath: path.resolve(__dirname, '..', '..') };
    await within('activate', ext.activate(context)).catch((e) => { throw new Error(`${e}\nlog:\n${calls.log.join('\n')}\nproviders:\n${calls.providers.join('\n')}`); });
    assert.deepEqual(calls.errors, [], `no error shown; log: ${calls.log.join('\n')}`);
    assert.deepEqual([...calls.commands.keys()].sort(), ['graphlsp.restartServer', 'graphlsp.showOutput']);
    const registered = (kind: string) => calls.providers.filter((p) => p.startsWith(kind));
    // the providers come from the server's capabilities: proof of a completed initialize handshake
    for (const kind of ['registerHoverProvider', 'registerInlayHintsProvider', 'registerDocumentSemanticTokensProvider',
      'registerDefinitionProvider', 'registerRenameProvider', 'registerCompletionItemProvider']) {
      assert.equal(registered(kind).length, 1, `${kind}: ${calls.providers.join('\n')}`);
      assert.match(registered(kind)[0], /"language":"onnxtxt"/);
    }
    const before = calls.providers.length;
    await within('restart', calls.commands.get('graphlsp.restartServer')!() as Promise<void>);
    assert.deepEqual(calls.errors, []);
    assert.equal(registered('registerHoverProvider').length, 2, 'a new client registered its providers again');
    assert.ok(calls.providers.length > before);
    await within('deactivate', ext.deactivate());
  } finally {
    (Module as unknown as { _load: typeof load })._load = load;
  }
});
