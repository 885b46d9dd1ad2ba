// The extension's settings and what they become for the language server. No `vscode` import here, so the node
// tests can check it without an editor.

import * as os from 'os';
import * as path from 'path';

/** The `graphlsp.*` settings the extension reads. */
export interface Settings {
  /** `graphlsp.server.command`: the program that runs the server. */
  command: string;
  /** `graphlsp.server.args`: its arguments (the server talks LSP over stdio). */
  args: string[];
  /** `graphlsp.inlayHints`: type-and-shape hints after value names. */
  inlayHints: boolean;
}

export const DEFAULTS: Readonly<Settings> = Object.freeze({ command: 'graphlsp', args: ['serve'], inlayHints: true });

export const LANGUAGE_ID = 'onnxtxt';
/** Op libraries (`*.onnxop`): the declarations of ops outside onnx's schemas, which the server checks too. */
export const OP_LANGUAGE_ID = 'onnxop';
export const SECTION = 'graphlsp';

/** Settings whose change needs a new server process (the rest is sent to the running one). */
export const RESTART_KEYS = ['graphlsp.server.command', 'graphlsp.server.args'];

/** Reads the settings through `get(key, fallback)` (e.g. a WorkspaceConfiguration's `get`), checking their types. */
export function readSettings(get: (key: string) => unknown): Settings {
  const command = get('server.command');
  const args = get('server.args');
  const inlayHints = get('inlayHints');
  return {
    command: typeof command === 'string' && command.trim() !== '' ? command.trim() : DEFAULTS.command,
    args: Array.isArray(args) && args.every((a) => typeof a === 'string') ? [...args] : [...DEFAULTS.args],
    inlayHints: typeof inlayHints === 'boolean' ? inlayHints : DEFAULTS.inlayHints,
  };
}

/** `~` and `${workspaceFolder}`, `${userHome}` and `${env:NAME}` in a command or argument. */
export function expand(value: string, workspaceFolder: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  let out = value.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (whole, name, envName) => {
    if (name === 'workspaceFolder') return workspaceFolder ?? whole;
    if (name === 'userHome') return os.homedir();
    return env[envName] ?? '';
  });
  if (out === '~' || out.startsWith('~/')) out = path.join(os.homedir(), out.slice(1));
  return out;
}

/** Whether the server command is a Python interpreter (`python`, `python3`, `python3.12`, `python.exe`). */
export function isPython(command: string): boolean {
  return /^python(\d+(\.\d+)*)?(\.exe)?$/i.test(path.win32.basename(command)); // either separator
}

/**
 * How to start the server process: what vscode-languageclient calls an `Executable` (stdio transport). A Python
 * interpreter (`python -m graphlsp.cli serve`) is started with `-P`: `python -m` would otherwise put the working
 * directory, the workspace, first on `sys.path`, and a repository that ships a `graphlsp/` or `lark.py` would run
 * its code in the editor the moment a model is opened (docs/security.md).
 */
export function serverExecutable(s: Settings, workspaceFolder?: string): { command: string; args: string[]; options: { cwd?: string } } {
  const command = expand(s.command, workspaceFolder);
  let args = s.args.map((a) => expand(a, workspaceFolder));
  if (isPython(command) && !args.some((a) => a === '-P' || a === '-I' || /^-[A-Za-z]*[PI]/.test(a))) args = ['-P', ...args];
  return { command, args, options: workspaceFolder ? { cwd: workspaceFolder } : {} };
}

/**
 * What the server is told about the settings: the `graphlsp` section as the server reads it (camelCase keys over the
 * project's `[tool.graphlsp]`). Sent as initializationOptions, as the answer to workspace/configuration for the
 * `graphlsp` section, and as `{settings: {graphlsp: ...}}` in workspace/didChangeConfiguration.
 */
export function serverSettings(s: Settings): { inlayHints: boolean } {
  return { inlayHints: s.inlayHints };
}

/** The didChangeConfiguration parameters sent when a setting the server reads changes. */
export function didChangeConfigurationParams(s: Settings): { settings: { graphlsp: { inlayHints: boolean } } } {
  return { settings: { [SECTION]: serverSettings(s) } as { graphlsp: { inlayHints: boolean } } };
}

/** A short, actionable message for a server that could not be started. */
export function startFailure(s: Settings, error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  const cmd = [s.command, ...s.args].join(' ');
  if (/ENOENT|not found|spawn/i.test(reason)) {
    return (
      `graphlsp: could not run \`${cmd}\` (${reason}). Install graphlsp from its repository ` +
      '(`pip install /path/to/graphlsp`) or set "graphlsp.server.command" to its full path, e.g. ' +
      '/path/to/venv/bin/graphlsp.'
    );
  }
  return `graphlsp: the language server \`${cmd}\` failed to start: ${reason}`;
}

// ---- binary models (*.onnx): read-only text views rendered by the server

/** The scheme of a model's view: `graphlsp-view:/path/to/model.onnx` shows `/path/to/model.onnx`. */
export const VIEW_SCHEME = 'graphlsp-view';
/** The custom editor that opens `*.onnx` as its view (package.json `customEditors`). */
export const VIEW_TYPE = 'graphlsp.onnxView';
/** The server's commands: render a view ({path} -> {text}), save the model as text, fold it into a new model. */
export const RENDER_VIEW = 'graphlsp.renderView';
export const SAVE_AS_TEXT = 'graphlsp.saveViewAsText';
export const FOLD_BINARY = 'graphlsp.foldBinary';
/** Server -> client, {uri, path}: the model changed on disk and its view was rendered again. */
export const VIEW_CHANGED = 'graphlsp/viewChanged';
/** Commands the server offers (vscode-languageclient registers them) that the palette shows. */
export const SERVER_COMMANDS = [SAVE_AS_TEXT, FOLD_BINARY];

/** The scheme of a model at a git revision: `graphlsp-rev:/path/to/model.onnx?rev=HEAD` (the server renders it). */
export const REVISION_SCHEME = 'graphlsp-rev';
/** The server's command: a model at a revision ({path, rev} -> {text, error}), the left side of "Compare with…". */
export const RENDER_REVISION = 'graphlsp.renderRevision';

/** The revision a `graphlsp-rev:` URI's query names (`rev=HEAD`; HEAD when none). */
export function revisionOf(query: string): string {
  const rev = new URLSearchParams(query).get('rev');
  return rev && rev.trim() ? rev.trim() : 'HEAD';
}

/** The diff view's title: `model.onnx (HEAD) ↔ model.onnx`. */
export function compareTitle(left: string, right: string): string {
  return `${left} \u2194 ${right}`;
}

/** Whether a path is a model graphlsp compares: binary or text. */
export function isComparable(p: string): boolean {
  return /\.(onnx|onnxtxt|onnxtext)$/i.test(p);
}

/** Whether a path is a binary ONNX model. */
export function isModelPath(p: string): boolean {
  return /\.onnx$/i.test(p);
}

/**
 * The arguments of a server command on a model: the ones given (a command of a code action carries
 * `[{path}]`), else the model of the active view, else none (the command is then refused).
 */
export function commandArguments(args: unknown[], activeViewPath: string | undefined): unknown[] | undefined {
  if (args.length > 0 && args[0] !== undefined) return args;
  return activeViewPath ? [{ path: activeViewPath }] : undefined;
}

/** The answer of `graphlsp.renderView`, checked. */
export function viewText(answer: unknown): string {
  const text = (answer as { text?: unknown } | null)?.text;
  if (typeof text !== 'string') throw new Error(`graphlsp: the server sent no view (${JSON.stringify(answer)})`);
  return text;
}
