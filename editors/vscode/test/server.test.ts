// The real server, started and configured the way the extension does it (src/config.ts), spoken to over stdio with
// the protocol library vscode-languageclient is built on. The server command comes from GRAPHLSP_SERVER (a JSON
// array, e.g. ["/venv/bin/python", "-m", "graphlsp.cli", "serve"]), else from the extension's default setting
// (`graphlsp serve` on PATH); when that cannot be started the test is skipped with the reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import {
  type InitializeResult,
  type Hover,
  type InlayHint,
  type Diagnostic,
  type DocumentDiagnosticReport,
  type MarkupContent,
} from 'vscode-languageserver-protocol/node';
import * as config from '../src/config';
import { answerNull, connect, stop } from './server-process';

const EXAMPLES = path.resolve(__dirname, '..', '..', '..', '..', 'examples');
const BROKEN = path.join(EXAMPLES, 'broken.onnxtxt');
const TIMEOUT_MS = 30_000;

function within<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${TIMEOUT_MS} ms: ${what}`)), TIMEOUT_MS);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

function position(text: string, needle: string, delta = 0): { line: number; character: number } {
  const at = text.indexOf(needle);
  assert.ok(at >= 0, `not in the example: ${needle}`);
  const i = at + delta;
  const line = text.slice(0, i).split('\n').length - 1;
  return { line, character: i - (text.lastIndexOf('\n', i - 1) + 1) };
}

test('the real server, configured like the extension does it', async (t) => {
  const session = await connect(t);
  if (session === undefined) return;
  const { settings, conn } = session;
  answerNull(conn);
  // the extension's state: hints off at start; what workspace/configuration answers follows it (the middleware)
  let current: config.Settings = { ...settings, inlayHints: false };
  const asked: unknown[] = [];
  conn.onRequest('workspace/configuration', (params: { items: { section?: string }[] }) => {
    asked.push(params);
    return params.items.map((item) => (item.section === config.SECTION ? config.serverSettings(current) : null));
  });
  conn.listen();
  const uri = pathToFileURL(BROKEN).href;
  const text = fs.readFileSync(BROKEN, 'utf8');
  const doc = { uri };
  try {
    // capabilities shaped like vscode-languageclient's: UTF-16, pull diagnostics, markdown hovers, inlay hints
    const init = await within('initialize', conn.sendRequest<InitializeResult>('initialize', {
      processId: process.pid,
      rootUri: pathToFileURL(EXAMPLES).href,
      capabilities: {
        general: { positionEncodings: ['utf-16'] },
        workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: true } },
        textDocument: {
          synchronization: { dynamicRegistration: true, didSave: true },
          diagnostic: { dynamicRegistration: true, relatedDocumentSupport: false },
          publishDiagnostics: { relatedInformation: true },
          hover: { contentFormat: ['markdown', 'plaintext'] },
          inlayHint: { dynamicRegistration: true },
          semanticTokens: { requests: { full: true }, tokenTypes: [], tokenModifiers: [], formats: ['relative'] },
        },
      },
      initializationOptions: config.serverSettings(current),
    }));
    const caps = init.capabilities;
    for (const feature of ['hoverProvider', 'definitionProvider', 'referencesProvider', 'documentHighlightProvider',
      'documentSymbolProvider', 'inlayHintProvider', 'foldingRangeProvider', 'semanticTokensProvider', 'renameProvider',
      'completionProvider', 'codeActionProvider', 'workspaceSymbolProvider', 'diagnosticProvider'] as const) {
      assert.ok(caps[feature], `the server offers ${feature}`);
    }
    assert.ok((caps.semanticTokensProvider?.legend.tokenTypes ?? []).length > 0);
    await conn.sendNotification('initialized', {});
    await conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: config.LANGUAGE_ID, version: 1, text },
    });

    const pull = async (): Promise<Diagnostic[]> => {
      const report = await within('textDocument/diagnostic',
        conn.sendRequest<DocumentDiagnosticReport>('textDocument/diagnostic', { textDocument: doc }));
      assert.equal(report.kind, 'full');
      return report.kind === 'full' ? report.items : [];
    };
    const diags = await pull();
    const syntax = diags.find((d) => d.code === 'GL101');
    assert.ok(syntax, 'the planted syntax error is reported');
    assert.equal(syntax.range.start.line, position(text, 'mixed = Mul').line);

    const hover = await within('textDocument/hover', conn.sendRequest<Hover | null>('textDocument/hover', {
      textDocument: doc, position: position(text, '] act = Relu', 2),
    }));
    assert.ok(hover && (hover.contents as MarkupContent).kind === 'markdown');
    assert.match((hover.contents as MarkupContent).value, /\*\*act\*\*: `float\[batch, 8\]`/);

    const everything = { start: { line: 0, character: 0 }, end: { line: text.split('\n').length, character: 0 } };
    const hints = () => within('textDocument/inlayHint',
      conn.sendRequest<InlayHint[] | null>('textDocument/inlayHint', { textDocument: doc, range: everything }));
    assert.deepEqual(await hints(), [], 'initializationOptions {inlayHints: false} turns the hints off');

    // the user turns hints on: the extension sends didChangeConfiguration with the graphlsp section
    current = { ...current, inlayHints: true };
    await conn.sendNotification('workspace/didChangeConfiguration', config.didChangeConfigurationParams(current));
    const labels = ((await hints()) ?? []).map((h) => (typeof h.label === 'string' ? h.label : ''));
    assert.ok(labels.includes(': float[batch, 8]'), `hints after the change: ${JSON.stringify(labels.slice(0, 5))}`);

    // fix the syntax error (close `Mul (act, gate`): the diagnostic goes away
    const at = position(text, 'gate                        # expect: syntax-error', 4);
    await conn.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: at, end: at }, text: ')' }],
    });
    const after = await pull();
    assert.equal(after.find((d) => d.code === 'GL101'), undefined);
    assert.ok(after.some((d) => d.code === 'GL201'), 'the other planted errors stay');

    await within('shutdown', conn.sendRequest('shutdown'));
    await conn.sendNotification('exit');
  } finally {
    await stop(session, within);
  }
});

/** A binary model of the examples, written with `graphlsp convert` (the server command with `convert` for `serve`). */
function binaryModel(s: config.Settings, example: string, out: string): void {
  const exe = config.serverExecutable(s);
  const args = exe.args[exe.args.length - 1] === 'serve' ? exe.args.slice(0, -1) : exe.args;
  const r = spawnSync(exe.command, [...args, 'convert', path.join(EXAMPLES, example), out], { timeout: 60_000 });
  assert.equal(r.status, 0, `graphlsp convert: ${r.stderr}`);
}

test('a binary model as the extension opens it: a graphlsp-view: document', async (t) => {
  const session = await connect(t);
  if (session === undefined) return;
  const { settings, conn } = session;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'graphlsp-view-'));
  answerNull(conn);
  const shown: string[] = [];
  const changed: { uri: string; path: string }[] = [];
  conn.onNotification('window/showMessage', (p: { message: string }) => { shown.push(p.message); });
  conn.onNotification(config.VIEW_CHANGED, (p: { uri: string; path: string }) => { changed.push(p); });
  conn.listen();
  try {
    const model = path.join(dir, 'mlp.onnx');
    binaryModel(settings, 'mlp.onnxtxt', model);
    const before = fs.readFileSync(model);
    await within('initialize', conn.sendRequest<InitializeResult>('initialize', {
      processId: process.pid, rootUri: null,
      capabilities: { general: { positionEncodings: ['utf-16'] }, workspace: { configuration: true },
        textDocument: { diagnostic: {}, hover: { contentFormat: ['markdown'] } } },
      initializationOptions: config.serverSettings(settings),
    }));
    await conn.sendNotification('initialized', {});
    // the content provider's text: renderView {path}; the document: graphlsp-view:<path>, language onnxtxt
    const render = async () => config.viewText(await within('renderView', conn.sendRequest('workspace/executeCommand',
      { command: config.RENDER_VIEW, arguments: [{ path: model }] })));
    const text = await render();
    const uri = `${config.VIEW_SCHEME}:${model}`;
    await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: config.LANGUAGE_ID, version: 1, text } });
    const pull = async () => {
      const report = await within('diagnostic', conn.sendRequest<DocumentDiagnosticReport>('textDocument/diagnostic', { textDocument: { uri } }));
      return report.kind === 'full' ? report.items : [];
    };
    assert.deepEqual(await pull(), [], 'graphlsp check finds nothing in the MLP');
    const hover = await within('hover', conn.sendRequest<Hover | null>('textDocument/hover', {
      textDocument: { uri }, position: position(text, 'h_pre = Add', 1) }));
    assert.match((hover!.contents as MarkupContent).value, /^\*\*h_pre\*\*: `float\[batch, 8\]`/);
    // an edit is refused (VS Code's virtual documents are read-only anyway)
    await conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: 'x' }] });
    await pull();
    assert.equal(shown.filter((m) => /read-only view/.test(m)).length, 1, shown.join('\n'));
    await conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: 3 }, contentChanges: [{ text }] });
    // the file changes: the watcher's event goes to the server, which renders it again and says so
    binaryModel(settings, 'attention.onnxtxt', model);
    await conn.sendNotification('workspace/didChangeWatchedFiles', { changes: [{ uri: pathToFileURL(model).href, type: 2 }] });
    const deadline = Date.now() + TIMEOUT_MS;
    while (changed.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(changed, [{ uri, path: model }]);
    const fresh = await render();
    assert.match(fresh, /^attention \(/m);
    await conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: 4 }, contentChanges: [{ text: fresh }] });
    const codes = (await pull()).map((d) => d.code);
    assert.deepEqual(codes, ['GL402', 'GL402'], 'graphlsp check on the new model: two Reshape targets that can be constants');
    assert.equal(shown.filter((m) => /read-only view/.test(m)).length, 1, 'catching up is no edit');
    assert.notDeepEqual(fs.readFileSync(model), before);
    await within('shutdown', conn.sendRequest('shutdown'));
    await conn.sendNotification('exit');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await stop(session, within);
  }
});
