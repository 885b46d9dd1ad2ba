// "Show Graph": the model's graph in a webview beside its document, drawn by the page graphlsp ships (the same page
// `graphlsp graph` writes), from the server's `graphlsp/graph` request. The panel follows its document: after an
// edit (or a new rendering of a binary model's view) it is sent the new graph; the node on the cursor's line is
// highlighted; a click on a node in the picture reveals the node's line in the document.
//
// No `vscode` import here: extension.ts hands in the editor's parts (GraphHost), and the node tests drive this with
// the real server and recorded panels.

export const SHOW_GRAPH = 'graphlsp.showGraph';
export const GRAPH_REQUEST = 'graphlsp/graph';
export const GRAPH_VIEW_TYPE = 'graphlsp.graph';
/** Milliseconds of quiet after an edit before the graph is asked for again (a burst of typing asks once). */
export const UPDATE_DELAY_MS = 300;

/** What the page posts: `reveal` when a node is clicked, `ready` when it waits for a graph. */
export type PageMessage = { type: 'reveal'; line: number } | { type: 'ready' };
/** What the page is sent: a new graph after an edit, the cursor's line. */
export type PanelMessage = { type: 'graph'; data: unknown } | { type: 'cursor'; line: number };

/** A webview panel, as far as the graph needs one. */
export interface GraphPanel {
  setHtml(html: string): void;
  postMessage(message: PanelMessage): Thenable<boolean> | Promise<boolean>;
  onMessage(listener: (message: unknown) => void): void;
  onDispose(listener: () => void): void;
  dispose(): void;
}

export interface GraphHost {
  /** `graphlsp/graph` for the document: the graph's JSON, or `{html}` the whole page. */
  request(uri: string, format: 'json' | 'html'): Promise<unknown>;
  createPanel(title: string): GraphPanel;
  /** Shows the document with the cursor on the line. */
  reveal(uri: string, line: number): Promise<void>;
  error(message: string): void;
}

interface Shown {
  panel: GraphPanel;
  timer?: ReturnType<typeof setTimeout>;
  asked: number; // requests sent for this panel; an answer older than the newest shown is dropped
  shown: number;
  line?: number;
}

export function pageMessage(m: unknown): PageMessage | undefined {
  if (typeof m !== 'object' || m === null) return undefined;
  const x = m as { type?: unknown; line?: unknown };
  if (x.type === 'reveal' && typeof x.line === 'number' && Number.isInteger(x.line) && x.line >= 0) {
    return { type: 'reveal', line: x.line };
  }
  if (x.type === 'ready') return { type: 'ready' };
  return undefined;
}

export class GraphPanels {
  private readonly panels = new Map<string, Shown>();

  constructor(private readonly host: GraphHost) {}

  /** The document's graph panel: opened (or brought back) and filled with the page. */
  async open(uri: string, name: string): Promise<GraphPanel> {
    const known = this.panels.get(uri);
    if (known) {
      await this.update(uri);
      return known.panel;
    }
    const panel = this.host.createPanel(`Graph: ${name}`);
    const shown: Shown = { panel, asked: 0, shown: 0 };
    this.panels.set(uri, shown);
    panel.onDispose(() => {
      if (shown.timer) clearTimeout(shown.timer);
      if (this.panels.get(uri) === shown) this.panels.delete(uri);
    });
    panel.onMessage((m) => {
      const msg = pageMessage(m);
      if (msg?.type === 'reveal') void this.host.reveal(uri, msg.line).catch((e) => this.host.error(String(e)));
      else if (msg?.type === 'ready') void this.update(uri);
    });
    const ticket = ++shown.asked;
    try {
      const answer = (await this.host.request(uri, 'html')) as { html?: unknown };
      if (typeof answer?.html !== 'string') throw new Error('the server answered no page');
      if (ticket >= shown.shown) {
        shown.shown = ticket;
        panel.setHtml(answer.html);
      }
      if (shown.line !== undefined) await panel.postMessage({ type: 'cursor', line: shown.line });
    } catch (error) {
      this.host.error(`graphlsp: cannot show the graph of ${name}: ${String(error)}`);
      panel.setHtml(`<p>graphlsp could not draw the graph: ${escapeHtml(String(error))}</p>`);
    }
    return panel;
  }

  has(uri: string): boolean {
    return this.panels.has(uri);
  }

  /** After an edit of the document: the graph again, once the edits pause. */
  edited(uri: string): void {
    const shown = this.panels.get(uri);
    if (!shown) return;
    if (shown.timer) clearTimeout(shown.timer);
    shown.timer = setTimeout(() => {
      shown.timer = undefined;
      void this.update(uri);
    }, UPDATE_DELAY_MS);
  }

  /** Sends the document's current graph to its panel (an answer overtaken by a newer one is dropped). */
  async update(uri: string): Promise<void> {
    const shown = this.panels.get(uri);
    if (!shown) return;
    const ticket = ++shown.asked;
    try {
      const data = await this.host.request(uri, 'json');
      if (ticket < shown.shown || this.panels.get(uri) !== shown) return;
      shown.shown = ticket;
      await shown.panel.postMessage({ type: 'graph', data });
    } catch (error) {
      this.host.error(`graphlsp: the graph of ${uri} was not updated: ${String(error)}`);
    }
  }

  /** The cursor moved to `line` in the document: the page highlights the node written there. */
  cursor(uri: string, line: number): void {
    const shown = this.panels.get(uri);
    if (!shown || shown.line === line) return;
    shown.line = line;
    void shown.panel.postMessage({ type: 'cursor', line });
  }

  dispose(): void {
    for (const shown of [...this.panels.values()]) shown.panel.dispose();
    this.panels.clear();
  }
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch] ?? ch);
}
