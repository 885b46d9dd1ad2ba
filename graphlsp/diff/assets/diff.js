// The diff's legend and list on graphview's page: each change in turn, the node shown with window.graphlsp.goTo.
(function () {
  "use strict";
  const raw = document.getElementById("graph-data");
  if (!raw || !raw.textContent.trim()) return;
  const diff = JSON.parse(raw.textContent).diff;
  if (!diff) return;
  const box = document.createElement("div");
  box.id = "diff";
  const counts = {};
  for (const s of diff.steps) counts[s.kind] = (counts[s.kind] || 0) + 1;
  const legend = document.createElement("div");
  legend.className = "legend";
  for (const kind of ["added", "removed", "changed", "moved", "renamed"]) {
    const span = document.createElement("span");
    span.className = kind;
    span.textContent = kind + " " + (counts[kind] || 0);
    legend.appendChild(span);
  }
  box.appendChild(legend);
  const bar = document.createElement("div");
  bar.className = "bar";
  const prev = document.createElement("button");
  prev.textContent = "\u2191 previous";
  const next = document.createElement("button");
  next.textContent = "\u2193 next";
  const where = document.createElement("span");
  bar.append(prev, next, where);
  box.appendChild(bar);
  const list = document.createElement("ol");
  let current = -1;
  diff.steps.forEach((s, k) => {
    const li = document.createElement("li");
    li.className = s.kind;
    li.textContent = s.kind + ": " + s.label;
    if (s.detail) {
      const d = document.createElement("span");
      d.className = "detail";
      d.textContent = s.detail;
      d.title = s.detail;
      li.appendChild(d);
    }
    li.addEventListener("click", () => go(k));
    list.appendChild(li);
  });
  if (!diff.steps.length) {
    const li = document.createElement("li");
    li.textContent = diff.equal ? "no differences" : "no node changed (see the text report)";
    list.appendChild(li);
  }
  box.appendChild(list);
  document.body.appendChild(box);
  where.textContent = diff.steps.length + " changes";

  function go(k) {
    if (!diff.steps.length) return;
    current = (k + diff.steps.length) % diff.steps.length;
    list.querySelectorAll("li").forEach((li, i) => li.classList.toggle("current", i === current));
    list.children[current].scrollIntoView({ block: "nearest" });
    where.textContent = current + 1 + " of " + diff.steps.length;
    const s = diff.steps[current];
    document.body.dataset.graphlspDiffCurrent = String(s.node);
    if (s.node !== null && window.graphlsp) window.graphlsp.goTo(s.node);
  }
  prev.addEventListener("click", () => go(current - 1));
  next.addEventListener("click", () => go(current + 1));
  document.body.dataset.graphlspDiff = JSON.stringify(counts);
})();
