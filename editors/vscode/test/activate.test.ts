// The bundle that ships (out/extension.js) activated outside VS Code: a stub `vscode` module stands in for the
// editor's API, and vscode-languageclient inside the bundle starts the real server, initializes it and registers the
// providers the server offers. Then the restart command and deactivate. The server command comes from
// GRAPHLSP_SERVER as in server.test.ts; without a runnable server the test is skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
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
    if (s.startsWith('file://')) return new Uri('file', decodeURIComponent(s.slice(7)));
    const colon = s.indexOf(':');
    return new Uri(s.slice(0, colon), decodeURIComponent(s.slice(colon + 1)));
  }
  get path(): string {
    return this.fsPath;
  }
  toString(): string {
    return this.scheme === 'file' ? `file://${this.fsPath}` : `${this.scheme}:${this.fsPath}`;
  }
  with(change: { scheme?: string } = {}): Uri {
    return new Uri(change.scheme ?? this.scheme, this.fsPath);
  }
}

class RelativePattern {
  constructor(readonly base: Uri, readonly pattern: string) {}
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

type Doc = { uri: Uri; languageId: string };

function stubVscode(settings: Record<string, unknown>) {
  const calls = {
    commands: new Map<string, (...a: unknown[]) => unknown>(), providers: [] as string[], errors: [] as string[],
    log: [] as string[], contentProviders: new Map<string, any>(), customEditors: new Map<string, any>(),
    watchers: [] as { pattern: RelativePattern; change: EventEmitter<Uri> }[], shown: [] as Doc[],
  };
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
      if (prop === 'setTextDocumentLanguage') return async (doc: Doc, languageId: string) => ({ ...doc, languageId });
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
        case 'RelativePattern': return RelativePattern;
        case 'languages': return languages;
        case 'workspace': return new Proxy(anything('workspace'), {
          get(t, p) {
            if (p === 'getConfiguration') return configuration;
            if (p === 'workspaceFolders') return undefined;
            if (p === 'textDocuments') return [];
            if (p === 'notebookDocuments') return [];
            if (p === 'registerTextDocumentContentProvider') {
              return (scheme: string, provider: unknown) => { calls.contentProviders.set(scheme, provider); return new Disposable(); };
            }
            if (p === 'createFileSystemWatcher') {
              return (pattern: RelativePattern) => {
                const change = new EventEmitter<Uri>();
                calls.watchers.push({ pattern, change });
                return { onDidChange: change.event, onDidCreate: event, onDidDelete: event, dispose: () => undefined };
              };
            }
            if (p === 'openTextDocument') return async (uri: Uri) => ({ uri, languageId: 'plaintext' });
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
            if (p === 'registerCustomEditorProvider') {
              return (viewType: string, provider: unknown) => { calls.customEditors.set(viewType, provider); return new Disposable(); };
            }
            if (p === 'showTextDocument') return async (doc: Doc) => { calls.shown.push(doc); return { document: doc }; };
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
  let ext: { activate(c: unknown): Promise<void>; deactivate(): Promise<void> } | undefined;
  let stopped = false;
  try {
    const bundle = path.resolve(__dirname, '..', 'extension.js');
    ext = require(bundle) as { activate(c: unknown): Promise<void>; deactivate(): Promise<void> };
    const context = { subscriptions: [] as { dispose(): unknown }[], extensionPath: path.resolve(__dirname, '..', '..') };
    await within('activate', ext.activate(context)).catch((e) => { throw new Error(`${e}\nlog:\n${calls.log.join('\n')}\nproviders:\n${calls.providers.join('\n')}`); });
    assert.deepEqual(calls.errors, [], `no error shown; log: ${calls.log.join('\n')}`);
    // the extension's commands, and the server's (vscode-languageclient registers those from its capabilities)
    assert.deepEqual([...calls.commands.keys()].sort(), ['graphlsp.compareWith', 'graphlsp.foldBinary',
      'graphlsp.openBinaryView', 'graphlsp.renderRevision', 'graphlsp.renderView', 'graphlsp.restartServer',
      'graphlsp.saveViewAsText', 'graphlsp.showGraph', 'graphlsp.showOutput']);
    const registered = (kind: string) => calls.providers.filter((p) => p.startsWith(kind));
    // the providers come from the server's capabilities: proof of a completed initialize handshake
    for (const kind of ['registerHoverProvider', 'registerInlayHintsProvider', 'registerDocumentSemanticTokensProvider',
      'registerDefinitionProvider', 'registerRenameProvider', 'registerCompletionItemProvider']) {
      assert.equal(registered(kind).length, 1, `${kind}: ${calls.providers.join('\n')}`);
      assert.match(registered(kind)[0], /"language":"onnxtxt"/);
      assert.match(registered(kind)[0], /"language":"onnxop"/); // op libraries are served too
    }
    await binaryModels(argv, calls);
    const before = calls.providers.length;
    await within('restart', calls.commands.get('graphlsp.restartServer')!() as Promise<void>);
    assert.deepEqual(calls.errors, []);
    assert.equal(registered('registerHoverProvider').length, 2, 'a new client registered its providers again');
    assert.ok(calls.providers.length > before);
    await within('deactivate', ext.deactivate());
    stopped = true;
  } finally {
    // a failed assertion must not leave the server running: node's test runner would wait for it forever
    if (ext && !stopped) await within('deactivate', ext.deactivate()).catch(() => undefined);
    (Module as unknown as { _load: typeof load })._load = load;
  }
});

/** A binary model of the examples, written with `graphlsp convert` (the server command with `convert` for `serve`). */
function binaryModel(argv: string[], example: string, out: string): void {
  const cli = argv[argv.length - 1] === 'serve' ? argv.slice(0, -1) : argv;
  const source = path.resolve(__dirname, '..', '..', '..', '..', 'examples', example);
  const r = spawnSync(cli[0], [...cli.slice(1), 'convert', source, out], { timeout: 60_000 });
  assert.equal(r.status, 0, `graphlsp convert: ${r.stderr}`);
}

/** *.onnx through the bundled extension: the custom editor opens the view, the content provider's text comes from
 * the server, a watcher on the file is made, and the server's model commands run from VS Code's command registry. */
async function binaryModels(argv: string[], calls: ReturnType<typeof stubVscode>['calls']): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphlsp-vscode-'));
  try {
    const model = path.join(dir, 'mlp.onnx');
    binaryModel(argv, 'mlp.onnxtxt', model);
    const views = calls.contentProviders.get('graphlsp-view');
    assert.ok(views, 'a content provider for graphlsp-view:');
    const viewUri = Uri.file(model).with({ scheme: 'graphlsp-view' });
    const text: string = await within('the view', views.provideTextDocumentContent(viewUri, { isCancellationRequested: false }));
    assert.ok(text.startsWith('# graphlsp: a read-only view of mlp.onnx (binary ONNX)'), text.slice(0, 200));
    assert.match(text, /^ {3}h_mm = MatMul \(x, w1\)$/m);
    assert.equal(calls.watchers.length, 1);
    assert.equal(calls.watchers[0].pattern.base.fsPath, dir);
    assert.equal(calls.watchers[0].pattern.pattern, 'mlp.onnx');

    // the custom editor for *.onnx hands over to the view: a graphlsp-view: document of language onnxtxt
    const editor = calls.customEditors.get('graphlsp.onnxView');
    assert.ok(editor, 'a custom editor for *.onnx');
    let disposed = false;
    const panel = { webview: { html: '' }, viewColumn: 1, dispose: () => { disposed = true; } };
    await within('the custom editor', editor.resolveCustomEditor(editor.openCustomDocument(Uri.file(model)), panel));
    assert.equal(calls.shown.length, 1, panel.webview.html);
    assert.equal(calls.shown[0].uri.toString(), `graphlsp-view:${model}`);
    assert.equal(calls.shown[0].languageId, 'onnxtxt');
    assert.ok(disposed, 'the custom editor closes once the view is open');

    // the server's commands as VS Code commands: arguments from a code action, or none (no active view: refused)
    const save = calls.commands.get('graphlsp.saveViewAsText')!;
    const saved = (await within('save as text', save({ path: model }) as Promise<{ path: string; written: boolean }>));
    assert.deepEqual(saved, { path: path.join(dir, 'mlp.onnxtxt'), uri: `file://${path.join(dir, 'mlp.onnxtxt')}`, written: true });
    assert.match(fs.readFileSync(saved.path, 'utf8'), /float\[4,8\] w1 = \{0\.1,/);
    assert.equal(await save(), undefined);
    assert.deepEqual(calls.errors.splice(0), ['graphlsp: graphlsp.saveViewAsText works on an ONNX model opened as a text view']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
