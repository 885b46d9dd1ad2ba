// Unit tests of the settings plumbing (src/config.ts): node's test runner, no editor needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as os from 'os';
import * as path from 'path';
import * as config from '../src/config';

const from = (values: Record<string, unknown>) => (key: string) => values[key];

test('defaults when nothing is set', () => {
  assert.deepEqual(config.readSettings(from({})), { command: 'graphlsp', args: ['serve'], inlayHints: true });
});

test('settings of the wrong type fall back to the defaults', () => {
  const s = config.readSettings(from({ 'server.command': '  ', 'server.args': ['serve', 3], inlayHints: 'no' }));
  assert.deepEqual(s, { command: 'graphlsp', args: ['serve'], inlayHints: true });
});

test('a Python interpreter as the server command', () => {
  const s = config.readSettings(
    from({ 'server.command': '/venv/bin/python', 'server.args': ['-m', 'graphlsp.cli', 'serve'], inlayHints: false }),
  );
  // -P: the working directory (the workspace) is not put on sys.path, so no module of the repository is imported
  assert.deepEqual(config.serverExecutable(s, '/work/proj'), {
    command: '/venv/bin/python',
    args: ['-P', '-m', 'graphlsp.cli', 'serve'],
    options: { cwd: '/work/proj' },
  });
  assert.deepEqual(config.serverExecutable(s).options, {});
  for (const python of ['python3', 'python3.12', '/usr/bin/python', 'C:\\Python\\python.exe']) {
    assert.ok(config.isPython(python), python);
  }
  for (const other of ['graphlsp', '/venv/bin/graphlsp', 'pythonista']) assert.ok(!config.isPython(other), other);
  const isolated = config.readSettings(from({ 'server.command': 'python3', 'server.args': ['-I', '-m', 'graphlsp.cli'] }));
  assert.deepEqual(config.serverExecutable(isolated).args, ['-I', '-m', 'graphlsp.cli']);
  assert.deepEqual(config.serverExecutable(config.DEFAULTS).args, ['serve']);
});

test('~, ${workspaceFolder}, ${userHome} and ${env:NAME} are expanded', () => {
  const env = { VENV: '/opt/venv' };
  assert.equal(config.expand('${workspaceFolder}/.venv/bin/graphlsp', '/w', env), '/w/.venv/bin/graphlsp');
  assert.equal(config.expand('${env:VENV}/bin/graphlsp', undefined, env), '/opt/venv/bin/graphlsp');
  assert.equal(config.expand('${env:MISSING}x', undefined, env), 'x');
  assert.equal(config.expand('~/bin/graphlsp', undefined, env), path.join(os.homedir(), 'bin/graphlsp'));
  assert.equal(config.expand('${userHome}/g', undefined, env), `${os.homedir()}/g`);
  // without a workspace folder the placeholder stays, so the failure names it
  assert.equal(config.expand('${workspaceFolder}/g', undefined, env), '${workspaceFolder}/g');
  assert.equal(config.expand('a~b', undefined, env), 'a~b');
});

test('what the server is sent: initializationOptions and didChangeConfiguration', () => {
  const s = config.readSettings(from({ inlayHints: false, 'server.command': 'x' }));
  // only what the server reads: the server command is the editor's business
  assert.deepEqual(config.serverSettings(s), { inlayHints: false });
  assert.deepEqual(config.didChangeConfigurationParams(s), { settings: { graphlsp: { inlayHints: false } } });
});

test('a missing server gets an actionable message', () => {
  const msg = config.startFailure(config.DEFAULTS, new Error('spawn graphlsp ENOENT'));
  assert.match(msg, /could not run `graphlsp serve`/);
  assert.match(msg, /graphlsp\.server\.command/);
  assert.match(config.startFailure(config.DEFAULTS, 'boom'), /failed to start: boom/);
});

test('"Compare with…": the revision of a graphlsp-rev URI, the title, the files it compares', () => {
  assert.equal(config.revisionOf('rev=HEAD'), 'HEAD');
  assert.equal(config.revisionOf('rev=main~2'), 'main~2');
  assert.equal(config.revisionOf(''), 'HEAD');
  assert.equal(config.compareTitle('m.onnx (HEAD)', 'm.onnx'), 'm.onnx (HEAD) \u2194 m.onnx');
  assert.ok(config.isComparable('/a/m.onnx') && config.isComparable('/a/m.ONNXTXT') && config.isComparable('m.onnxtext'));
  assert.ok(!config.isComparable('/a/m.onnx.data') && !config.isComparable('/a/ops.onnxop'));
});
