// graphlsp for VS Code: starts `graphlsp serve` for *.onnxtxt / *.onnxtext files and op libraries (*.onnxop) and
// connects it with vscode-languageclient. Everything but the settings plumbing comes from the server.
//
// Binary models (*.onnx) open as read-only text views: a custom editor for *.onnx (and the command "Open ONNX
// Model as Text View") opens the virtual document `graphlsp-view:/path/model.onnx`, language onnxtxt, whose text
// the server renders (`graphlsp.renderView`). The server recognises the scheme and serves its own rendering, so
// every language feature works on it. A watcher on the file tells the server when it changes; the server renders
// it again and says so (`graphlsp/viewChanged`), and the document is fetched again.
//
// "Show Graph" (src/graph.ts) opens the model's graph in a webview beside a text model or a binary's view.

import * as path from 'path';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  DidChangeWatchedFilesNotification,
  ExecuteCommandRequest,
  FileChangeType,
  InlayHintRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import * as config from './config';
import { GRAPH_REQUEST, GRAPH_VIEW_TYPE, GraphPanels } from './graph';

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel | undefined;
let busy: Promise<void> = Promise.resolve();

function currentSettings(): config.Settings {
  const section = vscode.workspace.getConfiguration(config.SECTION);
  return config.readSettings((key) => section.get(key));
}

function workspaceFolder(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
}

function createClient(settings: config.Settings): LanguageClient {
  const exe = config.serverExecutable(settings, workspaceFolder());
  const serverOptions: ServerOptions = { run: exe, debug: exe };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: config.LANGUAGE_ID },
      { scheme: 'untitled', language: config.LANGUAGE_ID },
      { scheme: config.VIEW_SCHEME, language: config.LANGUAGE_ID },
      // op libraries: the server knows them by their file name (an untitled one would be read as a model)
      { scheme: 'file', language: config.OP_LANGUAGE_ID },
    ],
    initializationOptions: config.serverSettings(settings),
    outputChannel: output,
    middleware: {
      // The server's model commands (save as text, fold) from the palette or a title button: the active view's model.
      executeCommand: async (command, args, next) => {
        const given = config.commandArguments(args, activeViewPath());
        if (given === undefined) {
          void vscode.window.showErrorMessage(`graphlsp: ${command} works on an ONNX model opened as a text view`);
          return undefined;
        }
        return next(command, given);
      },
      workspace: {
        // The server asks for the `graphlsp` section: answer with the settings it reads, not the editor-only ones.
        configuration: async (params, token, next) => {
          const answer = await next(params, token);
          if (!Array.isArray(answer)) return answer;
          const now = config.serverSettings(currentSettings());
          return params.items.map((item, i) => (item.section === config.SECTION ? now : answer[i]));
        },
      },
    },
  };
  const c = new LanguageClient(config.SECTION, 'graphlsp', serverOptions, clientOptions);
  c.onNotification(config.VIEW_CHANGED, (params: { path?: string }) => {
    if (typeof params?.path === 'string') views.changed(viewUri(vscode.Uri.file(params.path)));
  });
  return c;
}

// ---- binary models

/** The view of a model file: the same path under the graphlsp-view scheme. */
function viewUri(file: vscode.Uri): vscode.Uri {
  return file.with({ scheme: config.VIEW_SCHEME });
}

function activeViewPath(): string | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  return doc?.uri.scheme === config.VIEW_SCHEME ? doc.uri.fsPath : undefined;
}

/** The running client, once any start or restart under way is done. */
async function runningClient(): Promise<LanguageClient> {
  await busy;
  if (!client) throw new Error('graphlsp: the language server is not running (graphlsp: Show Language Server Output)');
  return client;
}

/** The views' text, from the server; a watcher per open model tells the server when the file changes. */
class Views implements vscode.TextDocumentContentProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  private readonly watchers = new Map<string, vscode.Disposable>();
  readonly onDidChange = this.emitter.event;

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const c = await runningClient();
    this.watch(uri.fsPath);
    const answer = await c.sendRequest(ExecuteCommandRequest.type, { command: config.RENDER_VIEW,
      arguments: [{ path: uri.fsPath }] }, token);
    return config.viewText(answer);
  }

  changed(uri: vscode.Uri): void {
    this.emitter.fire(uri);
  }

  private watch(file: string): void {
    if (this.watchers.has(file)) return;
    const watcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(vscode.Uri.file(path.dirname(file)), path.basename(file)),
    );
    const tell = () => {
      const c = client;
      if (c?.isRunning()) {
        void c.sendNotification(DidChangeWatchedFilesNotification.type, {
          changes: [{ uri: vscode.Uri.file(file).toString(), type: FileChangeType.Changed }],
        });
      }
    };
    this.watchers.set(file, vscode.Disposable.from(watcher, watcher.onDidChange(tell), watcher.onDidCreate(tell)));
  }

  closed(doc: vscode.TextDocument): void {
    if (doc.uri.scheme !== config.VIEW_SCHEME) return;
    const still = vscode.workspace.textDocuments.some((d) => d !== doc && d.uri.toString() === doc.uri.toString());
    if (!still) {
      this.watchers.get(doc.uri.fsPath)?.dispose();
      this.watchers.delete(doc.uri.fsPath);
    }
  }

  dispose(): void {
    this.watchers.forEach((w) => w.dispose());
    this.watchers.clear();
    this.emitter.dispose();
  }
}

const views = new Views();

/** A model at a git revision, rendered by the server (the left side of "Compare with HEAD"). */
class Revisions implements vscode.TextDocumentContentProvider {
  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const c = await runningClient();
    const answer = await c.sendRequest(ExecuteCommandRequest.type, { command: config.RENDER_REVISION,
      arguments: [{ path: uri.fsPath, rev: config.revisionOf(uri.query) }] }, token);
    return config.viewText(answer);
  }
}

/** What a model shows in a diff view: a binary's text view, a text model's own file. */
function shownUri(file: vscode.Uri): vscode.Uri {
  return config.isModelPath(file.fsPath) ? viewUri(file) : file;
}

/** "Compare with…": the model (explorer, or the active editor's file or view) beside another model or itself at
 * HEAD, in VS Code's diff editor (old on the left). */
async function compareWithCommand(target?: vscode.Uri): Promise<void> {
  let file = target instanceof vscode.Uri ? target : vscode.window.activeTextEditor?.document.uri;
  if (file?.scheme === config.VIEW_SCHEME) file = file.with({ scheme: 'file' });
  if (!file || file.scheme !== 'file' || !config.isComparable(file.fsPath)) {
    void vscode.window.showInformationMessage('graphlsp: open a model (.onnx, .onnxtxt) to compare it');
    return;
  }
  const head = { label: 'HEAD', description: 'the file as last committed (git)' };
  const other = { label: 'Another model...', description: 'pick a .onnx or .onnxtxt file' };
  const choice = await vscode.window.showQuickPick([head, other], { placeHolder: `Compare ${path.basename(file.fsPath)} with` });
  if (!choice) return;
  let left: vscode.Uri;
  let leftLabel: string;
  if (choice === head) {
    left = file.with({ scheme: config.REVISION_SCHEME, query: 'rev=HEAD' });
    leftLabel = `${path.basename(file.fsPath)} (HEAD)`;
  } else {
    const picked = await vscode.window.showOpenDialog({ canSelectMany: false,
      filters: { 'ONNX model': ['onnx', 'onnxtxt', 'onnxtext'] } });
    if (!picked?.[0]) return;
    left = shownUri(picked[0]);
    leftLabel = path.basename(picked[0].fsPath);
  }
  await vscode.commands.executeCommand('vscode.diff', left, shownUri(file),
    config.compareTitle(leftLabel, path.basename(file.fsPath)));
}

/** Opens a model file as its read-only text view (language onnxtxt). */
async function openView(file: vscode.Uri, column?: vscode.ViewColumn): Promise<vscode.TextEditor> {
  let doc = await vscode.workspace.openTextDocument(viewUri(file));
  if (doc.languageId !== config.LANGUAGE_ID) doc = await vscode.languages.setTextDocumentLanguage(doc, config.LANGUAGE_ID);
  return vscode.window.showTextDocument(doc, { viewColumn: column, preview: false });
}

/** `*.onnx` opens here: the custom editor hands over to the text view and closes. */
class ModelEditor implements vscode.CustomReadonlyEditorProvider {
  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose: () => undefined };
  }

  async resolveCustomEditor(document: vscode.CustomDocument, panel: vscode.WebviewPanel): Promise<void> {
    const name = path.basename(document.uri.fsPath);
    panel.webview.html = `<p>Opening ${escapeHtml(name)} as a text view...</p>`;
    try {
      await openView(document.uri, panel.viewColumn);
      panel.dispose();
    } catch (error) {
      output?.error(String(error));
      panel.webview.html = `<p>graphlsp could not show ${escapeHtml(name)}: ${escapeHtml(String(error))}</p>`;
    }
  }
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch] ?? ch);
}

/** "Open ONNX Model as Text View": the explorer's model, the active editor's, or one picked in a dialog. */
async function openViewCommand(target?: vscode.Uri): Promise<void> {
  let file = target instanceof vscode.Uri ? target : undefined;
  const active = vscode.window.activeTextEditor?.document.uri;
  if (!file && active && config.isModelPath(active.fsPath) && active.scheme === 'file') file = active;
  if (!file) {
    const picked = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'ONNX model': ['onnx'] } });
    file = picked?.[0];
  }
  if (file) await openView(file.scheme === config.VIEW_SCHEME ? file.with({ scheme: 'file' }) : file);
}

// ---- the graph picture

const graphs = new GraphPanels({
  request: async (uri, format) => (await runningClient()).sendRequest(GRAPH_REQUEST, { uri, format }),
  createPanel: (title) => {
    const panel = vscode.window.createWebviewPanel(GRAPH_VIEW_TYPE, title,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [] });
    return {
      setHtml: (html) => { panel.webview.html = html; },
      postMessage: (message) => panel.webview.postMessage(message),
      onMessage: (listener) => { panel.webview.onDidReceiveMessage(listener); },
      onDispose: (listener) => { panel.onDidDispose(listener); },
      dispose: () => panel.dispose(),
    };
  },
  reveal: async (uri, line) => {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri)
      ?? await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    const beside = vscode.window.visibleTextEditors.find((e) => e.document === doc);
    const editor = await vscode.window.showTextDocument(doc, { viewColumn: beside?.viewColumn, preview: false });
    const at = new vscode.Position(line, 0);
    editor.selection = new vscode.Selection(at, at);
    editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  },
  error: (message) => {
    output?.error(message);
    void vscode.window.showErrorMessage(message);
  },
});

/** "Show Graph": the active model's graph (or the explorer's model: a binary one opens as its view first). */
async function showGraphCommand(target?: vscode.Uri): Promise<void> {
  let doc = vscode.window.activeTextEditor?.document;
  if (target instanceof vscode.Uri && target.toString() !== doc?.uri.toString()) {
    doc = config.isModelPath(target.fsPath) && target.scheme === 'file'
      ? (await openView(target)).document
      : (await vscode.window.showTextDocument(target, { preview: false })).document;
  }
  if (!doc || doc.languageId !== config.LANGUAGE_ID) {
    void vscode.window.showErrorMessage('graphlsp: Show Graph works on an ONNX model (ONNX text, or a binary model\'s view)');
    return;
  }
  await graphs.open(doc.uri.toString(), path.basename(doc.uri.fsPath));
  const editor = vscode.window.visibleTextEditors.find((e) => e.document === doc);
  if (editor) graphs.cursor(doc.uri.toString(), editor.selection.active.line); // the node under the cursor now
}

async function start(): Promise<void> {
  const settings = currentSettings();
  const next = createClient(settings);
  try {
    await next.start();
    client = next;
  } catch (error) {
    output?.error(String(error));
    await next.dispose().catch(() => undefined);
    const choice = await vscode.window.showErrorMessage(config.startFailure(settings, error), 'Open Settings', 'Show Output');
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'graphlsp.server');
    } else if (choice === 'Show Output') {
      output?.show(true);
    }
  }
}

async function stop(): Promise<void> {
  const old = client;
  client = undefined;
  if (old) {
    try {
      await old.stop(2000);
    } catch (error) {
      output?.warn(`stopping the server: ${String(error)}`);
    }
    await old.dispose().catch(() => undefined);
  }
}

/** Runs lifecycle steps one after another, so a restart never overlaps a start. */
function serialized(step: () => Promise<void>): Promise<void> {
  busy = busy.then(step, step);
  return busy;
}

function restart(): Promise<void> {
  return serialized(async () => {
    await stop();
    await start();
  });
}

function refreshInlayHints(c: LanguageClient): void {
  const feature = c.getFeature(InlayHintRequest.method);
  for (const editor of vscode.window.visibleTextEditors) {
    feature?.getProvider(editor.document)?.onDidChangeInlayHints.fire();
  }
}

async function onConfigurationChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
  if (!event.affectsConfiguration(config.SECTION)) return;
  if (config.RESTART_KEYS.some((key) => event.affectsConfiguration(key))) {
    await restart();
    return;
  }
  if (event.affectsConfiguration('graphlsp.inlayHints') && client?.isRunning()) {
    const c = client;
    await c.sendNotification(DidChangeConfigurationNotification.type, config.didChangeConfigurationParams(currentSettings()));
    refreshInlayHints(c);
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('graphlsp', { log: true });
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand('graphlsp.restartServer', restart),
    vscode.commands.registerCommand('graphlsp.showOutput', () => output?.show(true)),
    vscode.commands.registerCommand('graphlsp.openBinaryView', openViewCommand),
    vscode.commands.registerCommand('graphlsp.showGraph', showGraphCommand),
    vscode.commands.registerCommand('graphlsp.compareWith', compareWithCommand),
    vscode.workspace.registerTextDocumentContentProvider(config.REVISION_SCHEME, new Revisions()),
    vscode.workspace.onDidChangeTextDocument((e) => graphs.edited(e.document.uri.toString())),
    vscode.window.onDidChangeTextEditorSelection((e) => {
      const at = e.selections[0]?.active;
      if (at) graphs.cursor(e.textEditor.document.uri.toString(), at.line);
    }),
    graphs,
    vscode.workspace.onDidChangeConfiguration(onConfigurationChanged),
    vscode.workspace.registerTextDocumentContentProvider(config.VIEW_SCHEME, views),
    vscode.workspace.onDidCloseTextDocument((doc) => views.closed(doc)),
    // a view restored with the window (or opened by its URI) is ONNX text too
    vscode.workspace.onDidOpenTextDocument((doc) => {
      const ours = doc.uri.scheme === config.VIEW_SCHEME || doc.uri.scheme === config.REVISION_SCHEME;
      if (ours && doc.languageId !== config.LANGUAGE_ID) {
        void vscode.languages.setTextDocumentLanguage(doc, config.LANGUAGE_ID);
      }
    }),
    vscode.window.registerCustomEditorProvider(config.VIEW_TYPE, new ModelEditor(), {
      supportsMultipleEditorsPerDocument: true,
    }),
    views,
  );
  await serialized(start);
}

export function deactivate(): Promise<void> {
  return serialized(stop);
}
