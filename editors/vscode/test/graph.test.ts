// "Show Graph" (src/graph.ts) against the real server: the panel is opened with the server's page for the
// document, follows its edits (`graphlsp/graph` again after didChange, sent to the page as a `graph` message),
// sends the cursor's line (`cursor`), and a `reveal` posted by the page shows the node's line. Panels are recorded
// stand-ins for VS Code's webviews; what the page does with these messages is tested in a real browser
// (tests/graphview/test_graph_webview.py). The server command comes from GRAPHLSP_SERVER as in server.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { pathToFileURL } from 'url';
import * as config from '../src/config';
import { answerNull, connect } from './server-process';
import { GRAPH_REQUEST, GraphPanels, UPDATE_DELAY_MS, pageMessage, type GraphPanel, type PanelMessage } from '../src/graph';

const EXAMPLE = path.resolve(__dirname, '..', '..', '..', '..', 'examples', 'mlp.onnxtxt');
const TIMEOUT_MS = 30_000;

async function until<T>(what: string, get: () => T | undefined): Promise<T> {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${TIMEOUT_MS} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

class RecordedPanel implements GraphPanel {
  html = '';
  posted: PanelMessage[] = [];
  disposed = false;
  private listeners: ((m: unknown) => void)[] = [];
  private closers: (() => void)[] = [];
  constructor(readonly title: string) {}
  setHtml(html: string): void {
    this.html = html;
  }
  async postMessage(message: PanelMessage): Promise<boolean> {
    this.posted.push(JSON.parse(JSON.stringify(message)));
    return true;
  }
  onMessage(listener: (m: unknown) => void): void {
    this.listeners.push(listener);
  }
  onDispose(listener: () => void): void {
    this.closers.push(listener);
  }
  dispose(): void {
    this.disposed = true;
    this.closers.forEach((c) => c());
  }
  /** The page posts a message (as `vscode.postMessage` in the webview). */
  fromPage(m: unknown): void {
    this.listeners.forEach((l) => l(m));
  }
}

type Graph = { version: number; graph: { nodes: { op: string; line: number; outputs: string[] }[]; types: Record<string, string> } };

test('page messages are checked', () => {
  assert.deepEqual(pageMessage({ type: 'reveal', line: 3 }), { type: 'reveal', line: 3 });
  assert.equal(pageMessage({ type: 'reveal', line: -1 }), undefined);
  assert.equal(pageMessage({ type: 'reveal', line: '3' }), undefined);
  assert.equal(pageMessage(null), undefined);
  assert.deepEqual(pageMessage({ type: 'ready' }), { type: 'ready' });
});

test('Show Graph with the real server: open, update after edit, cursor sync, reveal', async (t) => {
  const session = await connect(t);
  if (session === undefined) return;
  const { child, conn } = session;
  answerNull(conn);
  conn.listen();
  const uri = pathToFileURL(EXAMPLE).href;
  let text = fs.readFileSync(EXAMPLE, 'utf8');
  const panels: RecordedPanel[] = [];
  const revealed: [string, number][] = [];
  const errors: string[] = [];
  const graphs = new GraphPanels({
    request: (u, format) => conn.sendRequest(GRAPH_REQUEST, { uri: u, format }),
    createPanel: (title) => {
      const p = new RecordedPanel(title);
      panels.push(p);
      return p;
    },
    reveal: async (u, line) => {
      revealed.push([u, line]);
    },
    error: (m) => errors.push(m),
  });
  try {
    await conn.sendRequest('initialize', { processId: process.pid, rootUri: null,
      capabilities: { general: { positionEncodings: ['utf-16'] } } });
    await conn.sendNotification('initialized', {});
    await conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: config.LANGUAGE_ID, version: 1, text },
    });

    // open: a panel beside the document holding the whole page, its graph that of the document
    const panel = (await graphs.open(uri, 'mlp.onnxtxt')) as RecordedPanel;
    assert.equal(panels.length, 1);
    assert.equal(panel.title, 'Graph: mlp.onnxtxt');
    assert.ok(panel.html.startsWith('<!DOCTYPE html>'), panel.html.slice(0, 100));
    const data = JSON.parse(panel.html.match(/<script type="application\/json" id="graph-data">(.*?)<\/script>/s)![1]) as Graph;
    assert.equal(data.version, 1);
    const lines = text.split('\n');
    for (const n of data.graph.nodes) assert.ok(lines[n.line].includes(n.op), `${n.op} on line ${n.line}`);
    assert.ok((await graphs.open(uri, 'mlp.onnxtxt')) === panel, 'Show Graph again: the same panel');
    panel.posted.length = 0;

    // an edit: the new graph is posted once the edits pause (two quick edits: one request)
    const close = text.lastIndexOf('}');
    const at = text.slice(0, close).split('\n').length - 1;
    const added = '    extra = Relu (h)\n';
    text = text.slice(0, close) + added + text.slice(close);
    await conn.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: 2 }, contentChanges: [{ text }],
    });
    graphs.edited(uri);
    const more = text.replace(added, added + '    extra2 = Neg (extra)\n');
    text = more;
    await conn.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: 3 }, contentChanges: [{ text }],
    });
    graphs.edited(uri);
    const update = await until('the graph after the edits', () => panel.posted.find((m) => m.type === 'graph'));
    await new Promise((r) => setTimeout(r, UPDATE_DELAY_MS * 2));
    assert.equal(panel.posted.filter((m) => m.type === 'graph').length, 1, 'one update for a burst of edits');
    const after = (update as { data: Graph }).data;
    assert.equal(after.version, 3);
    assert.equal(after.graph.nodes.length, data.graph.nodes.length + 2);
    const extra = after.graph.nodes.find((n) => n.outputs.includes('extra'))!;
    assert.equal(extra.op, 'Relu');
    assert.equal(extra.line, at);
    assert.equal(after.graph.types.extra2, after.graph.types.h);

    // the cursor's line goes to the page (once per line)
    graphs.cursor(uri, extra.line);
    graphs.cursor(uri, extra.line);
    assert.deepEqual(panel.posted.filter((m) => m.type === 'cursor'), [{ type: 'cursor', line: extra.line }]);

    // a click in the picture: the page posts reveal, the document shows the line
    panel.fromPage({ type: 'reveal', line: extra.line });
    panel.fromPage({ type: 'reveal', line: 'nowhere' });
    await until('the reveal', () => (revealed.length ? revealed : undefined));
    assert.deepEqual(revealed, [[uri, extra.line]]);

    // a page that waits for its graph is sent one
    panel.posted.length = 0;
    panel.fromPage({ type: 'ready' });
    const sent = await until('the graph for a ready page', () => panel.posted.find((m) => m.type === 'graph'));
    assert.equal((sent as { data: Graph }).data.version, 3);

    // closed: no more messages for it
    panel.dispose();
    assert.equal(graphs.has(uri), false);
    graphs.edited(uri);
    graphs.cursor(uri, 0);
    assert.deepEqual(errors, []);
  } finally {
    graphs.dispose();
    conn.dispose();
    child.kill();
  }
});
