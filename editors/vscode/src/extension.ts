// graphlsp for VS Code: starts `graphlsp serve` for *.onnxtxt / *.onnxtext files and connects it with
// vscode-languageclient. Everything but the settings plumbing comes from the server.

import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  InlayHintRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import * as config from './config';

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
    ],
    initializationOptions: config.serverSettings(settings),
    outputChannel: output,
    middleware: {
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
  return new LanguageClient(config.SECTION, 'graphlsp', serverOptions, clientOptions);
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
    vscode.workspace.onDidChangeConfiguration(onConfigurationChanged),
  );
  await serialized(start);
}

export function deactivate(): Promise<void> {
  return serialized(stop);
}
