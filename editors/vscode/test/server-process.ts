// The real server for the node tests: its command from GRAPHLSP_SERVER (a JSON array, e.g.
// ["/venv/bin/python", "-m", "graphlsp.cli", "serve"]), else the extension's default setting (`graphlsp serve`);
// a connection to it over stdio with the protocol library vscode-languageclient is built on, and its end.
import { spawn, type ChildProcess } from 'child_process';
import type { TestContext } from 'node:test';
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type ProtocolConnection,
} from 'vscode-languageserver-protocol/node';
import * as config from '../src/config';

export function serverCommand(): config.Settings {
  const fromEnv = process.env.GRAPHLSP_SERVER;
  if (fromEnv) {
    const argv = JSON.parse(fromEnv) as string[];
    return { ...config.DEFAULTS, command: argv[0], args: argv.slice(1) };
  }
  return { ...config.DEFAULTS };
}

/** Spawns the server; resolves once the process is running, rejects when it cannot be started. */
export function startServer(s: config.Settings): Promise<ChildProcess> {
  const exe = config.serverExecutable(s);
  return new Promise((resolve, reject) => {
    const child = spawn(exe.command, exe.args, { stdio: ['pipe', 'pipe', 'pipe'] });
    child.once('error', reject);
    child.once('spawn', () => resolve(child));
    child.stderr?.on('data', (d) => process.stderr.write(`[server] ${d}`));
  });
}

/** The server's settings, its process, and a connection to it (not listening yet: the test adds its handlers). */
export interface Session {
  settings: config.Settings;
  child: ChildProcess;
  conn: ProtocolConnection;
}

/** Starts the server and connects to it; when it cannot be started the test is skipped with the reason, and the
 * answer is undefined. */
export async function connect(t: TestContext): Promise<Session | undefined> {
  const settings = serverCommand();
  let child: ChildProcess;
  try {
    child = await startServer(settings);
  } catch (error) {
    t.skip(`cannot start \`${[settings.command, ...settings.args].join(' ')}\`: ${String(error)} (set GRAPHLSP_SERVER)`);
    return undefined;
  }
  const conn = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  return { settings, child, conn };
}

/** The requests the server may send the client that a test answers with null (registrations, progress, the
 * refreshes, the settings) unless it answers them itself: set its own handler after calling this. */
export function answerNull(conn: ProtocolConnection): void {
  for (const method of ['client/registerCapability', 'window/workDoneProgress/create', 'workspace/configuration',
    'workspace/inlayHint/refresh', 'workspace/diagnostic/refresh', 'workspace/semanticTokens/refresh']) {
    conn.onRequest(method, () => null);
  }
}

/** The connection closed; the server, told `exit` by the test, is waited for (killed after 5 s). */
export async function stop(s: Session, within: <T>(what: string, p: Promise<T>) => Promise<T>): Promise<void> {
  s.conn.dispose();
  const child = s.child;
  if (child.exitCode === null) {
    await within('server exit', new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      child.once('exit', () => { clearTimeout(timer); resolve(); });
    }));
  }
}
