// The real server for the node tests: its command from GRAPHLSP_SERVER (a JSON array, e.g.
// ["/venv/bin/python", "-m", "graphlsp.cli", "serve"]), else the extension's default setting (`graphlsp serve`).
import { spawn, type ChildProcess } from 'child_process';
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
