// The manifest, the grammar, the language configuration and the source agree with each other; the grammar tests
// exercise every scope the grammar can produce.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import * as config from '../src/config';

const ROOT = path.resolve(__dirname, '..', '..');
const read = (p: string) => fs.readFileSync(path.join(ROOT, p), 'utf8');
const manifest = JSON.parse(read('package.json'));
const grammar = JSON.parse(read('syntaxes/onnxtxt.tmLanguage.json'));
const opGrammar = JSON.parse(read('syntaxes/onnxop.tmLanguage.json'));

test('the language: id, file extensions, configuration', () => {
  const [lang] = manifest.contributes.languages;
  assert.equal(lang.id, config.LANGUAGE_ID);
  assert.deepEqual(lang.extensions, ['.onnxtxt', '.onnxtext']);
  const conf = JSON.parse(read(lang.configuration));
  assert.equal(conf.comments.lineComment, '#');
  const pairs = conf.autoClosingPairs.map((p: { open: string; close: string }) => p.open + p.close);
  for (const pair of ['{}', '[]', '()', '<>', '""']) assert.ok(pairs.includes(pair), pair);
  assert.ok(manifest.activationEvents.includes(`onLanguage:${config.LANGUAGE_ID}`));
});

test('the grammar is registered for the language', () => {
  const [g] = manifest.contributes.grammars;
  assert.equal(g.language, config.LANGUAGE_ID);
  assert.equal(g.scopeName, grammar.scopeName);
  assert.equal(path.normalize(g.path), path.normalize('./syntaxes/onnxtxt.tmLanguage.json'));
});

test('op libraries (*.onnxop): their own language, grammar and configuration, in the document selector', () => {
  const lang = manifest.contributes.languages.find((l: { id: string }) => l.id === config.OP_LANGUAGE_ID);
  assert.ok(lang, 'the onnxop language is declared');
  assert.deepEqual(lang.extensions, ['.onnxop']);
  const conf = JSON.parse(read(lang.configuration));
  assert.equal(conf.comments.lineComment, '#');
  const pairs = conf.autoClosingPairs.map((p: { open: string; close: string }) => p.open + p.close);
  for (const pair of ['{}', '[]', '()', '""']) assert.ok(pairs.includes(pair), pair);
  assert.ok(!pairs.includes('<>'), '< and > compare dims in the op DSL');
  assert.ok(manifest.activationEvents.includes(`onLanguage:${config.OP_LANGUAGE_ID}`));
  const g = manifest.contributes.grammars.find((x: { language: string }) => x.language === config.OP_LANGUAGE_ID);
  assert.equal(g.scopeName, opGrammar.scopeName);
  assert.equal(path.normalize(g.path), path.normalize('./syntaxes/onnxop.tmLanguage.json'));
  assert.match(read('src/extension.ts'), /\{ scheme: 'file', language: config\.OP_LANGUAGE_ID \}/);
  assert.match(manifest.scripts['test:grammar'], /test\/grammar\/\*\.test\.onnxop/);
});

test('an untrusted workspace: limited, its own server command and arguments ignored', () => {
  const untrusted = manifest.capabilities.untrustedWorkspaces;
  assert.equal(untrusted.supported, 'limited');
  assert.deepEqual([...untrusted.restrictedConfigurations].sort(), [...config.RESTART_KEYS].sort());
  assert.match(untrusted.description, /graphlsp\.server\.command/);
});

test('settings: declared with the defaults the extension uses', () => {
  const props = manifest.contributes.configuration.properties;
  assert.equal(props['graphlsp.server.command'].default, config.DEFAULTS.command);
  assert.deepEqual(props['graphlsp.server.args'].default, config.DEFAULTS.args);
  assert.equal(props['graphlsp.inlayHints'].default, config.DEFAULTS.inlayHints);
  assert.ok(props['graphlsp.trace.server']);
  for (const key of config.RESTART_KEYS) assert.ok(props[key], key);
});

test('every command the extension registers or the server offers is declared, and the other way round', () => {
  const source = read('src/extension.ts');
  const registered = [...source.matchAll(/registerCommand\('([^']+)'/g)].map((m) => m[1]);
  const declared = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual([...registered, ...config.SERVER_COMMANDS].sort(), declared);
  assert.ok(declared.includes('graphlsp.restartServer'));
  for (const menu of Object.values(manifest.contributes.menus) as { command: string }[][]) {
    for (const item of menu) assert.ok(declared.includes(item.command), item.command);
  }
});

test('*.onnx opens as a read-only text view: custom editor, view scheme, activation', () => {
  const [editor] = manifest.contributes.customEditors;
  assert.equal(editor.viewType, config.VIEW_TYPE);
  assert.deepEqual(editor.selector, [{ filenamePattern: '*.onnx' }]);
  assert.equal(editor.priority, 'default');
  for (const event of [`onCustomEditor:${config.VIEW_TYPE}`, `onFileSystem:${config.VIEW_SCHEME}`, 'onCommand:graphlsp.openBinaryView']) {
    assert.ok(manifest.activationEvents.includes(event), event);
  }
  const source = read('src/extension.ts');
  assert.match(source, /\{ scheme: config\.VIEW_SCHEME, language: config\.LANGUAGE_ID \}/, 'views are in the document selector');
  assert.ok(config.isModelPath('/m/Model.ONNX') && !config.isModelPath('/m/model.onnxtxt'));
  assert.deepEqual(config.commandArguments([], '/m/a.onnx'), [{ path: '/m/a.onnx' }]);
  assert.deepEqual(config.commandArguments([{ path: '/m/b.onnx' }], '/m/a.onnx'), [{ path: '/m/b.onnx' }]);
  assert.equal(config.commandArguments([], undefined), undefined);
  assert.throws(() => config.viewText({}), /no view/);
});

function scopes(node: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => scopes(n, out));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if ((key === 'name' || key === 'contentName') && typeof value === 'string') {
        value.split(/\s+/).forEach((s) => out.add(s));
      } else scopes(value, out);
    }
  }
  return out;
}

for (const [g, suffix] of [[grammar, '.test.onnxtxt'], [opGrammar, '.test.onnxop']] as const) {
  test(`the grammar tests assert every scope the grammar can produce (${g.scopeName})`, () => {
    const all = scopes(g.repository, new Set());
    all.delete(g.name); // the grammar's display name, not a scope
    const dir = path.join(ROOT, 'test', 'grammar');
    const asserted = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(suffix))
      .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
      .join('\n');
    const missing = [...all].filter((s) => !new RegExp(`^#.*(\\^|<-+) .*\\b${s.replace(/\./g, '\\.')}\\b`, 'm').test(asserted));
    assert.deepEqual(missing, []);
  });

  test(`every repository rule is used (${g.scopeName})`, () => {
    const text = JSON.stringify(g);
    const unused = Object.keys(g.repository).filter((k) => !text.includes(`"#${k}"`));
    assert.deepEqual(unused, []);
  });
}
