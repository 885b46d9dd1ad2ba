// graphlsp's graph page: draws the JSON of graphlsp.graphview (embedded in the page, or sent by the editor) with
// the layout elkjs computes. Our code groups nodes by name scope, chooses what is visible, and draws the boxes and
// lines where ELK put them; it places nothing itself.
/* global ELK, acquireVsCodeApi */
(function () {
  "use strict";
  const LIMIT = 200; // visible boxes above which name-scope groups start collapsed
  const LABEL_SHOWN = 60; // characters of an edge's label (a paddle2onnx shape can be three lines long)
  const vscode = typeof acquireVsCodeApi === "function" ? acquireVsCodeApi() : null;
  const elk = new ELK();
  const svgNS = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);
  const canvas = document.createElement("canvas").getContext("2d");
  const widthCache = new Map();
  function textWidth(text, font) {
    const key = font + "|" + text;
    let w = widthCache.get(key);
    if (w === undefined) {
      canvas.font = font;
      w = Math.ceil(canvas.measureText(text).width);
      widthCache.set(key, w);
    }
    return w;
  }
  const FOLDS = {
    constant: "folds to a constant",
    "reshape-target": "computes a Reshape target that folds to a constant (0 and -1 in it)",
  };
  const FONT_OP = "600 12px system-ui, sans-serif";
  const FONT_NAME = "11px system-ui, sans-serif";
  const FONT_LABEL = "10px ui-monospace, monospace";

  let data = null; // the whole JSON
  let trail = []; // [{title, graph}] the graph shown is the last; the first is the model's
  let view = null; // the current graph's groups and visibility
  let building = null; // the view buildView is making (its items, groups by id, the values' producers and readers)
  let layouts = 0;
  let selected = null; // node index in the current graph
  let cursorLine = null;
  let transform = { x: 0, y: 0, k: 1 };
  let pending = Promise.resolve();

  function clip(s, n) {
    return s.length > n ? s.slice(0, n - 1) + "\u2026" : s;
  }

  // ---- grouping by name scope: /model/layers.3/attn/MatMul is in /model, /model/layers.3, /model/layers.3/attn
  function buildView(graph, keep) {
    const root = { id: "", label: "", parent: null, groups: new Map(), nodes: [], total: 0, problems: 0 };
    const byId = new Map([["", root]]);
    // the graph's nodes, then its inputs (which join the scope of their readers like unscoped nodes)
    const items = [...graph.nodes, ...graph.inputs.map((name) => ({ op: "input", name, inputs: [], outputs: [name],
      isInput: true }))];
    building = { graph, byId, items };
    const scopes = scopesOf(items);
    items.forEach((n, i) => {
      const parts = scopes[i];
      let g = root;
      let id = "";
      for (const p of parts) {
        id += "/" + p;
        let c = g.groups.get(id);
        if (!c) {
          c = { id, label: p, parent: g, groups: new Map(), nodes: [], total: 0, problems: 0 };
          g.groups.set(id, c);
          byId.set(id, c);
        }
        g = c;
      }
      g.nodes.push(i);
    });
    // a group of one box is that box; a group holding one group only is named after both
    function simplify(g) {
      for (const c of [...g.groups.values()]) simplify(c);
      for (const [key, c] of [...g.groups]) {
        if (c.groups.size + c.nodes.length <= 1) {
          g.groups.delete(key);
          byId.delete(c.id);
          for (const c2 of c.groups.values()) {
            c2.parent = g;
            g.groups.set(c2.id, c2);
          }
          g.nodes.push(...c.nodes);
        } else if (c.groups.size === 1 && c.nodes.length === 0) {
          const only = [...c.groups.values()][0];
          g.groups.delete(key);
          byId.delete(c.id);
          only.label = c.label + "/" + only.label;
          only.parent = g;
          g.groups.set(only.id, only);
        }
      }
    }
    simplify(root);
    if (graph.nodes.length > LIMIT) bucket(root);
    const groupOf = new Array(items.length);
    (function count(g) {
      for (const i of g.nodes) {
        groupOf[i] = g;
        g.total += 1;
        g.flops = (g.flops || 0) + (items[i].flops || 0); // share of the model's FLOPs (graphlsp/cost)
        const ps = items[i].problems;
        if (ps && ps.some((p) => p[0] === "error" || p[0] === "warning")) g.problems += 1;
        if (items[i].diff) g.diff = true; // graphlsp diff: a change inside (graphlsp/diff/page.py)
      }
      for (const c of g.groups.values()) {
        count(c);
        g.total += c.total;
        g.flops = (g.flops || 0) + (c.flops || 0);
        g.problems += c.problems;
        if (c.diff) g.diff = true;
      }
    })(root);
    const v = { graph, items, root, byId, groupOf, expanded: new Set([""]) };
    if (keep) {
      for (const id of keep) if (byId.has(id)) v.expanded.add(id);
    } else {
      // open the scopes breadth first while the boxes stay few
      let visible = root.groups.size + root.nodes.length;
      let level = [...root.groups.values()];
      while (level.length) {
        // a whole level or none of it: every layer of a model is drawn alike
        const more = level.reduce((sum, g) => sum + g.groups.size + g.nodes.length - 1, 0);
        if (visible + more > LIMIT) break;
        visible += more;
        const next = [];
        for (const g of level) {
          v.expanded.add(g.id);
          next.push(...g.groups.values());
        }
        level = next;
      }
    }
    return v;
  }

  // a node's name scope; a node named outside any scope (an exporter's Constant_12, Identity_7) joins the scope
  // its readers share, so that a layer's constants sit in the layer
  function scopesOf(items) {
    const readers = new Map();
    items.forEach((n, i) => {
      for (const name of [...n.inputs, ...(n.implicit || [])]) {
        if (!name) continue;
        let r = readers.get(name);
        if (!r) readers.set(name, (r = []));
        r.push(i);
      }
    });
    const scopes = new Array(items.length);
    for (let i = items.length - 1; i >= 0; i--) {
      const n = items[i];
      if (!n.isInput && n.scope) { // the modules the exporter says made the node (dynamo's scopes)
        scopes[i] = n.scope.slice();
        continue;
      }
      if (!n.isInput && n.name.includes("/")) {
        const parts = n.name.split("/").filter((p) => p.length > 0);
        parts.pop();
        scopes[i] = parts;
        continue;
      }
      let common = null;
      for (const o of n.outputs) {
        for (const r of (o && readers.get(o)) || []) {
          const s = scopes[r];
          if (!s) continue; // a reader before its producer (a graph with a cycle): no say
          if (common === null) common = s.slice();
          else {
            let k = 0;
            while (k < common.length && k < s.length && common[k] === s[k]) k++;
            common.length = k;
          }
        }
      }
      scopes[i] = common || [];
    }
    return scopes;
  }

  // A scope holding many nodes of its own is cut in groups: a graph without name scopes (paddle2onnx, tf2onnx)
  // into stretches of CHUNK nodes in the file's order, each with the constants and inputs its nodes read first;
  // what is left, mostly sources read all over (weights, shared Constants), into one group per op.
  const CHUNK = 50;
  function bucket(g) {
    for (const c of g.groups.values()) bucket(c);
    if (g.nodes.length <= 40) return;
    const items = building.items;
    const { producer, readers } = flow(items);
    const source = (i) => items[i].isInput || !items[i].inputs.some((x) => x && producer.has(x));
    const mine = new Set(g.nodes);
    const flowing = g.nodes.filter((i) => !source(i));
    if (flowing.length > 40) {
      const chunkOf = new Map();
      flowing.forEach((i, rank) => chunkOf.set(i, Math.floor(rank / CHUNK)));
      for (const i of [...g.nodes].reverse()) {
        if (chunkOf.has(i)) continue;
        let best = Infinity;
        for (const o of items[i].outputs) {
          for (const r of (o && readers.get(o)) || []) if (mine.has(r) && chunkOf.has(r)) best = Math.min(best, chunkOf.get(r));
        }
        chunkOf.set(i, best === Infinity ? 0 : best);
      }
      const chunks = [];
      for (const i of g.nodes) (chunks[chunkOf.get(i)] ||= []).push(i);
      g.nodes = [];
      chunks.forEach((members, k) => {
        if (!members) return;
        const lo = k * CHUNK + 1;
        const hi = Math.min(flowing.length, (k + 1) * CHUNK);
        const id = g.id + "/#" + k;
        const label = (g.label ? g.label + " " : "") + "nodes " + lo + "\u2013" + hi;
        const c = { id, label, parent: g, groups: new Map(), nodes: members, total: 0, problems: 0, chunk: true };
        g.groups.set(id, c);
        building.byId.set(id, c);
      });
      return;
    }
    const byOp = new Map();
    for (const i of g.nodes) {
      const op = items[i].op;
      let b = byOp.get(op);
      if (!b) byOp.set(op, (b = []));
      b.push(i);
    }
    g.nodes = [];
    for (const [op, members] of byOp) {
      if (members.length < 4) {
        g.nodes.push(...members);
        continue;
      }
      const id = g.id + "/" + op + "\u00d7";
      const c = { id, label: op + " \u00d7" + members.length, parent: g, groups: new Map(), nodes: members, total: 0,
        problems: 0, bucket: true };
      g.groups.set(id, c);
      building.byId.set(id, c);
    }
  }

  function flow(items) {
    if (building.flow) return building.flow;
    const producer = new Map();
    const readers = new Map();
    items.forEach((n, i) => {
      for (const o of n.outputs) if (o && !producer.has(o)) producer.set(o, i);
      for (const x of [...n.inputs, ...(n.implicit || [])]) {
        if (!x) continue;
        let r = readers.get(x);
        if (!r) readers.set(x, (r = []));
        r.push(i);
      }
    });
    building.flow = { producer, readers };
    return building.flow;
  }

  function unitOf(v, i) {
    // the outermost collapsed group holding node i, or the node
    let g = v.groupOf[i];
    let unit = "n" + i;
    while (g) {
      if (!v.expanded.has(g.id)) unit = "g" + g.id;
      g = g.parent;
    }
    return unit;
  }

  function problemClass(ps) {
    if (!ps) return "";
    if (ps.some((p) => p[0] === "error")) return " error";
    if (ps.some((p) => p[0] === "warning")) return " warning";
    return " hinted";
  }

  // ---- the ELK graph of what is visible
  function elkGraph(v) {
    const graph = v.graph;
    const counts = { visibleNodes: 0, groups: 0, edges: 0, labelledEdges: 0 };
    const boxes = new Map(); // elk id -> what it draws
    // the lines first: one per value between two boxes; between a collapsed group and another box, one for all
    const producer = new Map();
    v.items.forEach((n, i) => n.outputs.forEach((o) => o && !producer.has(o) && producer.set(o, i)));
    const units = v.items.map((n, i) => {
      const u = unitOf(v, i);
      return i >= graph.nodes.length && u[0] === "n" ? "i:" + n.name : u;
    });
    const bundles = new Map();
    function edge(src, dst, value) {
      if (src === dst) return;
      const key = src[0] === "g" || dst[0] === "g" ? src + "\u0000" + dst : src + "\u0000" + dst + "\u0000" + value;
      const b = bundles.get(key);
      if (!b) bundles.set(key, { src, dst, values: [value] });
      else if (!b.values.includes(value)) b.values.push(value);
    }
    // in a body or a function, a value of the enclosing graph gets a box of its own
    const nested = trail.length > 1;
    const initializers = new Set(graph.initializers || []);
    const outer = [];
    graph.nodes.forEach((n, i) => {
      for (const name of [...n.inputs, ...(n.implicit || [])]) {
        if (!name) continue;
        const p = producer.get(name);
        if (p !== undefined) edge(units[p], units[i], name);
        else if (nested && !initializers.has(name)) {
          if (!outer.includes(name)) outer.push(name);
          edge("u:" + name, units[i], name);
        }
      }
    });
    const outputs = [];
    for (const name of graph.outputs) {
      if (!name || outputs.includes(name)) continue;
      outputs.push(name);
      const p = producer.get(name);
      if (p !== undefined) edge(units[p], "o:" + name, name);
    }
    // a collapsed bucket read all over the graph (a model's weights, an exporter's shared Constants) says so on
    // its box rather than by a line to every reader
    const fanout = new Map();
    for (const b of bundles.values()) {
      const g = b.src[0] === "g" ? v.byId.get(b.src.slice(1)) : null;
      if (g && g.bucket) fanout.set(b.src, (fanout.get(b.src) || 0) + 1);
    }

    function nodeBox(i) {
      const n = graph.nodes[i];
      const name = clip(n.name, 40);
      const w = Math.max(textWidth(n.op, FONT_OP) + (n.fold ? 44 : 0) + (n.bodies || n.call ? 18 : 0),
        name ? textWidth(name, FONT_NAME) : 0) + 20;
      const id = "n" + i;
      boxes.set(id, { kind: "node", index: i, name });
      counts.visibleNodes += 1;
      return { id, width: w, height: name ? 38 : 26 };
    }
    function ioBox(kind, name) {
      const id = { input: "i:", output: "o:", outer: "u:" }[kind] + name;
      boxes.set(id, { kind, name });
      return { id, width: Math.max(textWidth(clip(name, 40), FONT_NAME) + 20, 40), height: 22 };
    }
    function groupBox(g) {
      const id = "g" + g.id;
      counts.groups += 1;
      if (!v.expanded.has(g.id)) {
        const readers = fanout.get(id) || 0;
        const sub = g.total + " nodes" + (g.flops >= 0.0005 ? " \u00b7 " + (100 * g.flops).toFixed(1) + "% FLOPs" : "")
          + (g.problems ? " \u00b7 " + g.problems + " with problems" : "")
          + (readers > 3 ? " \u00b7 read by " + readers + " boxes" : "");
        boxes.set(id, { kind: "group", group: g, sub });
        return { id, width: Math.max(textWidth("\u25b8 " + g.label, FONT_OP), textWidth(sub, FONT_NAME)) + 28,
          height: 42 };
      }
      boxes.set(id, { kind: "frame", group: g });
      return {
        id,
        layoutOptions: { "elk.padding": "[top=26,left=10,bottom=10,right=10]" },
        children: children(g),
      };
    }
    function children(g) {
      return [...[...g.groups.values()].map(groupBox), ...g.nodes.map((i) => (i < graph.nodes.length ? nodeBox(i)
        : ioBox("input", v.items[i].name)))];
    }
    const top = children(v.root);
    for (const name of outputs) top.push(ioBox("output", name));
    for (const name of outer) top.push(ioBox("outer", name));

    const edges = [];
    for (const b of bundles.values()) {
      if ((fanout.get(b.src) || 0) > 3) continue;
      // the first value whose type is known (the whole type is in the line's tooltip)
      const known = b.values.map((x) => graph.types[x] || "?").find((t) => t !== "?");
      const first = clip(known || "?", LABEL_SHOWN);
      const text = b.values.length > 1 ? first + " +" + (b.values.length - 1) : first;
      edges.push({
        id: "e" + edges.length,
        sources: [b.src],
        targets: [b.dst],
        labels: [{ text, width: textWidth(text, FONT_LABEL) + 4, height: 12 }],
        value: b.values.join(", "),
      });
      counts.edges += 1;
      if (known) counts.labelledEdges += 1; // a line whose value's type nothing tells is labelled `?`
    }
    return {
      elk: {
        id: "root",
        layoutOptions: {
          "elk.algorithm": "layered",
          "elk.direction": "DOWN",
          "elk.hierarchyHandling": "INCLUDE_CHILDREN",
          "elk.json.edgeCoords": "ROOT",
          "elk.json.shapeCoords": "ROOT",
          "elk.layered.spacing.nodeNodeBetweenLayers": "24",
          "elk.spacing.nodeNode": "18",
          "elk.spacing.edgeLabel": "2",
          // a quarter of the default's time on a 200-box model (bench: 2.7 s -> 0.7 s), lines still straight:
          // fewer crossing-minimization sweeps, no greedy switch pass
          "elk.layered.thoroughness": "2",
          "elk.layered.crossingMinimization.greedySwitch.type": "OFF",
        },
        children: top,
        edges,
      },
      boxes,
      counts,
    };
  }

  // ---- drawing where ELK placed things
  function el(tag, attrs, parent) {
    const e = document.createElementNS(svgNS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function draw(laid, boxes) {
    const svg = $("graph");
    const layer = $("layer");
    layer.textContent = "";
    const frames = el("g", {}, layer);
    const lines = el("g", {}, layer);
    const shapes = el("g", {}, layer);
    const graph = view.graph;
    function walk(n) {
      for (const c of n.children || []) {
        const b = boxes.get(c.id);
        if (!b) continue;
        if (b.kind === "frame") {
          const g = el("g", { class: "frame", "data-group": b.group.id }, frames);
          el("rect", { x: c.x, y: c.y, width: c.width, height: c.height, rx: 6 }, g);
          const t = el("text", { x: c.x + 8, y: c.y + 16, class: "frame-label" }, g);
          t.textContent = "\u25be " + b.group.label;
          const hit = el("rect", { x: c.x, y: c.y, width: c.width, height: 24, class: "frame-hit" }, g);
          const title = el("title", {}, hit);
          title.textContent = b.group.id + " (click to collapse)";
          walk(c);
        } else if (b.kind === "group") {
          const g = el("g", { class: "group" + (b.group.problems ? " warning" : "") + (b.group.diff ? " diff-group" : ""),
            "data-group": b.group.id }, shapes);
          el("rect", { x: c.x, y: c.y, width: c.width, height: c.height, rx: 6 }, g);
          if (b.group.flops) el("rect", { x: c.x, y: c.y, width: c.width, height: c.height, rx: 6, class: "heat",
            "fill-opacity": (0.08 + 0.6 * b.group.flops).toFixed(3) }, g); // its share of FLOPs, as the legend says
          el("rect", { x: c.x + 3, y: c.y + 3, width: c.width - 6, height: c.height - 6, rx: 4, class: "inner" }, g);
          const t = el("text", { x: c.x + 14, y: c.y + 18, class: "op" }, g);
          t.textContent = "\u25b8 " + b.group.label;
          const s = el("text", { x: c.x + 14, y: c.y + 33, class: "name" }, g);
          s.textContent = b.sub;
          el("title", {}, g).textContent = b.group.id + " (click to expand)";
        } else if (b.kind === "node") {
          const n = graph.nodes[b.index];
          const cls = "node" + problemClass(n.problems) + (n.fold ? " fold" : "") + (b.index === selected ? " selected" : "")
            + (n.diff ? " diff-" + n.diff : "") // graphlsp diff's mark (graphlsp/diff/page.py)
            + (cursorLine !== null && n.line === cursorLine ? " cursor" : "");
          const g = el("g", { class: cls, "data-node": b.index }, shapes);
          el("rect", { x: c.x, y: c.y, width: c.width, height: c.height, rx: 4 }, g);
          const t = el("text", { x: c.x + 10, y: c.y + 16, class: "op" }, g);
          t.textContent = n.op + (n.bodies || n.call ? " \u229e" : "");
          if (b.name) {
            const s = el("text", { x: c.x + 10, y: c.y + 31, class: "name" }, g);
            s.textContent = b.name;
          }
          if (n.fold) {
            const f = el("text", { x: c.x + c.width - 40, y: c.y + 16, class: "tag" }, g);
            f.textContent = n.fold === "constant" ? "const" : "shape";
          }
          const tip = [n.op + (n.name ? " " + n.name : "")];
          for (const p of n.problems || []) tip.push(p[1] + " " + p[2]);
          if (n.fold) tip.push(FOLDS[n.fold]);
          el("title", {}, g).textContent = tip.join("\n");
        } else {
          const g = el("g", { class: "io " + b.kind }, shapes);
          el("rect", { x: c.x, y: c.y, width: c.width, height: c.height, rx: 11 }, g);
          const t = el("text", { x: c.x + c.width / 2, y: c.y + 15, "text-anchor": "middle", class: "name" }, g);
          t.textContent = clip(b.name, 40);
          const what = { input: "graph input ", output: "graph output ", outer: "value of the enclosing graph " };
          el("title", {}, g).textContent = what[b.kind] + b.name + ": " + (graph.types[b.name] || "?");
        }
      }
    }
    walk(laid);
    for (const e of laid.edges || []) {
      for (const s of e.sections || []) {
        const pts = [s.startPoint, ...(s.bendPoints || []), s.endPoint];
        const path = el("path", { d: "M" + pts.map((p) => p.x + "," + p.y).join("L"), class: "edge", "marker-end": "url(#arrow)" }, lines);
        el("title", {}, path).textContent = e.value.split(", ").map((x) => x + ": " + (graph.types[x] || "?")).join("\n");
      }
      for (const l of e.labels || []) {
        const t = el("text", { x: l.x + 2, y: l.y + 10, class: "label" }, lines);
        t.textContent = l.text;
        el("title", {}, t).textContent = e.value;
      }
    }
    svg.dataset.width = laid.width;
    svg.dataset.height = laid.height;
  }

  function applyTransform() {
    $("layer").setAttribute("transform", "translate(" + transform.x + "," + transform.y + ") scale(" + transform.k + ")");
  }

  // `whole` (the fit button): the whole graph, width and height, centred. The first view: the whole width when
  // that stays readable (70% or more), else at 70%; from the graph's top and its left edge, nothing cut off
  function fit(laid, whole) {
    const box = $("graph").getBoundingClientRect();
    const width = box.width - ($("panel").hidden ? 0 : $("panel").getBoundingClientRect().width); // left of the panel
    const w = Math.max(1, laid.width), h = Math.max(1, laid.height);
    const across = Math.min(1, (width - 20) / w);
    if (whole) {
      const k = Math.max(0.02, Math.min(across, (box.height - 20) / h));
      transform = { k, x: (width - w * k) / 2, y: Math.max(10, (box.height - h * k) / 2) };
    } else {
      // smaller, down to 35%, when that brings the topmost box into sight beside the left edge
      const first = (laid.children || []).reduce((a, c) => (a === null || c.y < a.y ? c : a), null);
      const reach = first ? (width - 20) / (first.x + first.width) : across;
      const k = Math.max(across, Math.min(0.7, Math.max(reach, 0.35)));
      transform = { k, x: w * k <= width - 20 ? (width - w * k) / 2 : 10, y: 10 };
    }
    applyTransform();
  }

  function centerOn(x, y) {
    const box = $("graph").getBoundingClientRect();
    const panel = $("panel").hidden ? 0 : $("panel").getBoundingClientRect().width;
    transform.k = Math.max(transform.k, 0.8);
    transform.x = (box.width - panel) / 2 - x * transform.k;
    transform.y = box.height / 2 - y * transform.k;
    applyTransform();
  }

  // ---- relayout: one at a time, the newest request wins
  let wanted = 0;
  function relayout(opts) {
    const ticket = ++wanted;
    pending = pending.then(async () => {
      if (ticket !== wanted) return;
      const t0 = performance.now();
      const built = elkGraph(view);
      window.graphlsp.lastLayoutInput = built.elk; // what ELK was given (for benchmarks and bug reports)
      let laid;
      try {
        laid = await elk.layout(built.elk);
      } catch (err) {
        showError("layout failed: " + err);
        $("stats").textContent = "not drawn";
        document.body.dataset.graphlspStatus = JSON.stringify({ error: String(err), layouts: ++layouts });
        throw err;
      }
      const layoutMs = Math.round(performance.now() - t0);
      draw(laid, built.boxes);
      if (!opts || !opts.keepView) fit(laid);
      layouts += 1;
      const main = data.graph ? data.graph.nodes.length : 0;
      document.body.dataset.graphlspStatus = JSON.stringify({
        nodes: main,
        visibleNodes: built.counts.visibleNodes,
        edges: built.counts.edges,
        labelledEdges: built.counts.labelledEdges,
        groups: built.counts.groups,
        layoutMs,
        layouts,
        graph: trail[trail.length - 1].title,
      });
      $("stats").textContent = view.graph.nodes.length + " nodes, " + built.counts.visibleNodes + " shown, "
        + built.counts.groups + " groups \u00b7 layout " + layoutMs + " ms";
      if (opts && opts.focus !== undefined) focusNode(opts.focus, laid);
      if (opts && opts.group !== undefined) focusGroup(opts.group);
    });
    return pending;
  }

  function showError(text) {
    $("error").textContent = text;
    $("error").hidden = false;
  }

  // the group just opened or closed stays in sight: its top at the top of the view, its middle in the middle
  function focusGroup(id) {
    const r = document.querySelector('[data-group="' + CSS.escape(id) + '"] rect');
    if (!r) return;
    const box = $("graph").getBoundingClientRect();
    transform.x = box.width / 2 - (+r.getAttribute("x") + +r.getAttribute("width") / 2) * transform.k;
    transform.y = 30 - +r.getAttribute("y") * transform.k;
    applyTransform();
  }

  function focusNode(i, laid) {
    const g = document.querySelector('[data-node="' + i + '"] rect');
    if (!g) return;
    const x = +g.getAttribute("x") + +g.getAttribute("width") / 2;
    const y = +g.getAttribute("y") + +g.getAttribute("height") / 2;
    centerOn(x, y);
  }

  // ---- the side panel
  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  }
  function markdown(md) {
    // the hover's markdown as the editor would show it, roughly: code spans, bold, paragraphs
    return md.split(/\n\n+/).map((p) => "<p>" + esc(p).replace(/`([^`]*)`/g, "<code>$1</code>")
      .replace(/\*\*([^*]*)\*\*/g, "<b>$1</b>").replace(/\n/g, "<br>") + "</p>").join("");
  }

  function showNode(i) {
    const graph = view.graph;
    const n = graph.nodes[i];
    let h = "<h2>" + esc(n.op) + "</h2>";
    if (n.name) h += '<div class="nm">' + esc(n.name) + "</div>";
    if (n.line !== null && n.line !== undefined) h += '<div class="ln">line ' + (n.line + 1) + "</div>";
    for (const p of n.problems || []) {
      h += '<div class="problem ' + esc(p[0]) + '"><b>' + esc(p[1]) + "</b> " + esc(p[2]) + "</div>";
    }
    if (n.fold) h += '<div class="problem hint">' + FOLDS[n.fold] + " (<code>graphlsp fold</code>)</div>";
    const row = (name) => "<tr><td>" + esc(name || "(none)") + "</td><td><code>" + esc(name ? graph.types[name] || "?" : "")
      + "</code></td></tr>";
    h += "<h3>Inputs</h3><table>" + n.inputs.map(row).join("") + "</table>";
    h += "<h3>Outputs</h3><table>" + n.outputs.map(row).join("") + "</table>";
    if (n.implicit) h += "<h3>Outer values</h3><table>" + n.implicit.map(row).join("") + "</table>";
    if (n.attrs && n.attrs.length) {
      h += "<h3>Attributes</h3><table>" + n.attrs.map((a) => "<tr><td>" + esc(a[0]) + "</td><td><code>" + esc(a[1])
        + "</code></td></tr>").join("") + "</table>";
    }
    if (n.bodies) {
      h += "<h3>Bodies</h3>" + n.bodies.map((b, k) => '<button class="open-body" data-body="' + k + '">open '
        + esc(b[0]) + " (" + b[1].nodes.length + " nodes)</button>").join(" ");
    }
    if (n.call && data.functions[n.call]) {
      h += '<h3>Function</h3><button class="open-call">open ' + esc(n.call) + "</button>";
    }
    h += '<h3>Hover</h3><div class="hover">' + markdown(data.hovers[n.hover] || "") + "</div>";
    const panel = $("panel");
    panel.innerHTML = h;
    panel.hidden = false;
    panel.querySelectorAll(".open-body").forEach((b) => b.addEventListener("click", () => {
      const body = n.bodies[+b.dataset.body];
      enter((n.name || n.op) + "." + body[0], body[1]);
    }));
    const call = panel.querySelector(".open-call");
    if (call) call.addEventListener("click", () => enter(n.call, data.functions[n.call]));
  }

  function select(i, reveal) {
    selected = i;
    document.querySelectorAll(".node.selected").forEach((e) => e.classList.remove("selected"));
    const g = document.querySelector('[data-node="' + i + '"]');
    if (g) g.classList.add("selected");
    showNode(i);
    const n = view.graph.nodes[i];
    if (reveal && vscode && n.line !== null && n.line !== undefined) {
      vscode.postMessage({ type: "reveal", line: n.line, graph: trail.map((t) => t.title) });
    }
  }

  function crumbs() {
    const c = $("crumbs");
    c.textContent = "";
    trail.forEach((t, k) => {
      const a = document.createElement("a");
      a.textContent = t.title;
      a.href = "#";
      a.addEventListener("click", (ev) => {
        ev.preventDefault();
        trail = trail.slice(0, k + 1);
        show(null);
      });
      c.appendChild(a);
      if (k < trail.length - 1) c.appendChild(document.createTextNode(" \u203a "));
    });
  }

  function enter(title, graph) {
    trail.push({ title, graph });
    show(null);
  }

  function show(keep, opts) {
    const graph = trail[trail.length - 1].graph;
    view = buildView(graph, keep);
    if (selected !== null && selected >= graph.nodes.length) selected = null;
    crumbs();
    if (selected === null) $("panel").hidden = true;
    return relayout(opts);
  }

  // expand the groups holding node i
  function open(i) {
    let g = view.groupOf[i];
    while (g) {
      view.expanded.add(g.id);
      g = g.parent;
    }
  }

  // ---- search by node or value name
  function search(q) {
    const out = $("results");
    out.textContent = "";
    if (!q) {
      out.hidden = true;
      return;
    }
    const low = q.toLowerCase();
    const hits = [];
    view.graph.nodes.forEach((n, i) => {
      if (hits.length >= 50) return;
      let why = null;
      if (n.name.toLowerCase().includes(low)) why = n.name;
      else if (n.op.toLowerCase() === low) why = n.op;
      else {
        const v = n.outputs.find((o) => o && o.toLowerCase().includes(low));
        if (v) why = "\u2192 " + v;
      }
      if (why !== null) hits.push([i, why]);
    });
    for (const [i, why] of hits) {
      const a = document.createElement("div");
      a.className = "hit";
      a.textContent = view.graph.nodes[i].op + "  " + why;
      a.addEventListener("click", () => goTo(i));
      out.appendChild(a);
    }
    if (!hits.length) out.textContent = "no node or value named like that";
    out.hidden = false;
  }

  function goTo(i) {
    open(i);
    selected = i;
    showNode(i);
    relayout({ keepView: true, focus: i }).then(() => select(i, true));
  }

  // ---- events
  function setup() {
    const svg = $("graph");
    let drag = null;
    svg.addEventListener("mousedown", (ev) => {
      drag = { x: ev.clientX, y: ev.clientY, tx: transform.x, ty: transform.y, moved: false };
    });
    window.addEventListener("mousemove", (ev) => {
      if (!drag) return;
      const dx = ev.clientX - drag.x;
      const dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      transform.x = drag.tx + dx;
      transform.y = drag.ty + dy;
      applyTransform();
    });
    window.addEventListener("mouseup", () => {
      setTimeout(() => (drag = null), 0);
    });
    svg.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      if (ev.ctrlKey || ev.metaKey || !ev.shiftKey) {
        const box = svg.getBoundingClientRect();
        const mx = ev.clientX - box.left;
        const my = ev.clientY - box.top;
        const k = Math.min(3, Math.max(0.05, transform.k * Math.exp(-ev.deltaY * 0.0015)));
        transform.x = mx - ((mx - transform.x) * k) / transform.k;
        transform.y = my - ((my - transform.y) * k) / transform.k;
        transform.k = k;
      } else {
        transform.x -= ev.deltaY;
      }
      applyTransform();
    }, { passive: false });
    svg.addEventListener("click", (ev) => {
      if (drag && drag.moved) return;
      const node = ev.target.closest("[data-node]");
      if (node) {
        select(+node.dataset.node, true);
        return;
      }
      const group = ev.target.closest("[data-group]");
      if (group) {
        const id = group.dataset.group;
        if (view.expanded.has(id)) view.expanded.delete(id);
        else view.expanded.add(id);
        relayout({ keepView: true, group: id });
      }
    });
    $("search").addEventListener("input", (ev) => search(ev.target.value.trim()));
    $("search").addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") {
        const first = document.querySelector("#results .hit");
        if (first) first.click();
      }
    });
    $("fit").addEventListener("click", () => {
      const svgEl = $("graph");
      fit({ width: +svgEl.dataset.width, height: +svgEl.dataset.height }, true);
    });
    $("collapse").addEventListener("click", () => {
      view.expanded = new Set([""]);
      relayout();
    });
    window.addEventListener("message", (ev) => onMessage(ev.data));
  }

  // ---- the editor's messages: a new graph after an edit, the cursor's line
  function onMessage(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "graph") load(msg.data, true);
    else if (msg.type === "cursor") cursor(msg.line);
  }

  function cursor(line) {
    cursorLine = line;
    document.querySelectorAll(".cursor").forEach((e) => e.classList.remove("cursor"));
    if (line === null || line === undefined || !view) return;
    const i = view.graph.nodes.findIndex((n) => n.line === line);
    if (i < 0) return;
    const unit = unitOf(view, i);
    const target = unit[0] === "n" ? document.querySelector('[data-node="' + i + '"]')
      : document.querySelector('.group[data-group="' + CSS.escape(unit.slice(1)) + '"]');
    if (target) {
      target.classList.add("cursor");
      const r = target.querySelector("rect");
      const box = $("graph").getBoundingClientRect();
      const sx = +r.getAttribute("x") * transform.k + transform.x;
      const sy = +r.getAttribute("y") * transform.k + transform.y;
      if (sx < 0 || sy < 0 || sx > box.width || sy > box.height) {
        centerOn(+r.getAttribute("x") + +r.getAttribute("width") / 2, +r.getAttribute("y") + +r.getAttribute("height") / 2);
      }
    }
    document.body.dataset.graphlspCursor = String(i);
  }

  function load(json, update) {
    const titles = trail.map((t) => t.title);
    const keep = update && view ? [...view.expanded] : null;
    data = json;
    $("title").textContent = data.title || "graph";
    document.title = (data.title || "graph") + " \u2014 graphlsp";
    const problems = data.problems || [];
    $("model-problems").hidden = !problems.length;
    $("model-problems").textContent = problems.map((p) => p.code + " " + p.message).join("\n");
    costLegend(data.cost);
    if (!data.graph) {
      // a model that cannot be read: its problem (above) says why
      showError(problems.length ? "nothing to draw: the model could not be read" : "the model has no graph");
      $("stats").textContent = "no graph";
      document.body.dataset.graphlspStatus = JSON.stringify({ nodes: 0, visibleNodes: 0, edges: 0, labelledEdges: 0,
        groups: 0, layoutMs: 0, layouts: ++layouts });
      return Promise.resolve();
    }
    $("error").hidden = true;
    trail = [{ title: data.graph.name || "main", graph: data.graph }];
    // after an edit, stay in the body or function shown when it is still there
    for (const t of titles.slice(1)) {
      const g = trail[trail.length - 1].graph;
      const fn = data.functions[t];
      const found = fn ? fn : findBody(g, t);
      if (!found) break;
      trail.push({ title: t, graph: found });
    }
    const sameGraph = update && titles.length === trail.length;
    return show(sameGraph ? keep : null, { keepView: !!update }).then(() => {
      if (update && selected !== null && selected < view.graph.nodes.length) showNode(selected);
      if (cursorLine !== null) cursor(cursorLine);
    });
  }

  // the legend of the groups' colours: their share of the model's FLOPs (graphlsp/cost), the total's formula
  function costLegend(cost) {
    let legend = $("cost-legend");
    if (!cost) {
      if (legend) legend.remove();
      return;
    }
    if (!legend) {
      legend = document.createElement("span");
      legend.id = "cost-legend";
      $("stats").before(legend);
    }
    legend.textContent = "";
    const ramp = legend.appendChild(document.createElement("span"));
    ramp.className = "ramp";
    legend.append(" group shade: share of FLOPs" + (cost.at ? " (at " + cost.at + ")" : ""));
    legend.title = "FLOPs: " + cost.flops;
  }

  function findBody(g, title) {
    for (const n of g.nodes) {
      for (const b of n.bodies || []) if ((n.name || n.op) + "." + b[0] === title) return b[1];
    }
    return null;
  }

  window.graphlsp = { load, cursor, goTo, status: () => document.body.dataset.graphlspStatus };
  setup();
  const embedded = document.getElementById("graph-data");
  if (embedded && embedded.textContent.trim()) {
    load(JSON.parse(embedded.textContent));
  } else if (vscode) {
    vscode.postMessage({ type: "ready" });
  }
})();
