// The dependency graph of a stack, laid out left to right: a resource's
// column is the length of the longest chain of resources it depends on,
// so every edge points rightwards. Each node shows the current record
// (name, type, status, physical ID) and, below it, the replaced and
// pending-delete versions that still exist.

import { statusKind, statusSymbol } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const NODE_W = 210;
const NODE_H = 66;
const VERSION_H = 40;
const COL_GAP = 70;
const ROW_GAP = 22;
const PAD = 16;

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function short(text, max) {
  if (!text) return "—";
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

// {name: column}: longest path from a resource without dependencies.
export function columns(resources) {
  const names = new Set(resources.map((r) => r.resource_name));
  const dependsOn = new Map(resources.map((r) => [r.resource_name, []]));
  for (const r of resources) {
    for (const dependent of r.required_by || []) {
      if (names.has(dependent)) dependsOn.get(dependent).push(r.resource_name);
    }
  }
  const column = new Map();
  const visiting = new Set();
  const depth = (name) => {
    if (column.has(name)) return column.get(name);
    if (visiting.has(name)) return 0; // a cycle cannot be stored; be safe
    visiting.add(name);
    const deps = dependsOn.get(name) || [];
    const value = deps.length ? 1 + Math.max(...deps.map(depth)) : 0;
    visiting.delete(name);
    column.set(name, value);
    return value;
  };
  for (const name of names) depth(name);
  return column;
}

// Others than the current version (replaced, pending-delete) still live.
export function otherVersions(versions) {
  return (versions || []).filter((v) => v.role !== "current" && v.role !== "history");
}

function nodeGroup(res, x, y, extra, onSelect) {
  const status = res.resource_status;
  const label =
    res.resource_name + ", " + res.resource_type + ", " + status +
    (res.physical_resource_id ? ", physical ID " + res.physical_resource_id : "");
  const g = s("g", {
    class: "node s-" + statusKind(status),
    transform: "translate(" + x + "," + y + ")",
    tabindex: "0",
    role: "button",
    "aria-label": label,
    "data-resource": res.resource_name,
    "data-status": status,
    onclick: () => onSelect(res.resource_name),
    onkeydown: (ev) => {
      if (ev.key === "Enter" || ev.key === " ") {
        ev.preventDefault();
        onSelect(res.resource_name);
      }
    },
  });
  g.append(
    s("title", {}, label),
    s("rect", { class: "box", width: NODE_W, height: NODE_H, rx: 6 }),
    s("text", { x: 10, y: 18, class: "name" }, short(res.resource_name, 26)),
    s("text", { x: 10, y: 34, class: "type" }, short(res.resource_type, 32)),
    s("text", { x: 10, y: 50, class: "status" }, statusSymbol(status) + " " + status),
    s(
      "text",
      { x: 10, y: 62, class: "physical", "data-physical-id": res.physical_resource_id || "" },
      short(res.physical_resource_id, 31),
    ),
  );
  if (res.nested) {
    g.append(s("text", { x: NODE_W - 10, y: 18, class: "nested", "text-anchor": "end" }, "nested ▸"));
  }
  extra.forEach((v, i) => {
    const vy = NODE_H + 4 + i * VERSION_H;
    const vs = v.resource_status;
    g.append(
      s(
        "g",
        {
          class: "version role-" + v.role + " s-" + statusKind(vs),
          transform: "translate(12," + vy + ")",
          "data-role": v.role,
          "data-version": v.version,
          "data-physical-id": v.physical_resource_id || "",
        },
        s("rect", { class: "box", width: NODE_W - 12, height: VERSION_H - 4, rx: 4 }),
        s("text", { x: 8, y: 14, class: "type" }, v.role + " · v" + v.version + " · " + statusSymbol(vs) + " " + vs),
        s("text", { x: 8, y: 29, class: "physical" }, short(v.physical_resource_id, 29)),
      ),
    );
  });
  return g;
}

// An <svg> of `resources` ({versions: {name: [...]}} gives the other
// live versions); onSelect(name) when a node is chosen.
export function render(resources, versions, selected, onSelect) {
  const column = columns(resources);
  const byColumn = [];
  for (const r of [...resources].sort((a, b) => a.resource_name.localeCompare(b.resource_name))) {
    const c = column.get(r.resource_name) || 0;
    (byColumn[c] = byColumn[c] || []).push(r);
  }
  const pos = new Map();
  let height = 0;
  const nodes = [];
  byColumn.forEach((list, c) => {
    let y = PAD;
    for (const r of list || []) {
      const extra = otherVersions(versions[r.resource_name]);
      const x = PAD + c * (NODE_W + COL_GAP);
      pos.set(r.resource_name, { x, y });
      const g = nodeGroup(r, x, y, extra, onSelect);
      if (r.resource_name === selected) g.classList.add("selected");
      nodes.push(g);
      y += NODE_H + extra.length * VERSION_H + (extra.length ? 6 : 0) + ROW_GAP;
    }
    height = Math.max(height, y);
  });
  const width = PAD * 2 + Math.max(1, byColumn.length) * (NODE_W + COL_GAP) - COL_GAP;
  const edges = [];
  for (const r of resources) {
    const from = pos.get(r.resource_name);
    for (const dependent of r.required_by || []) {
      const to = pos.get(dependent);
      if (!from || !to) continue;
      const x1 = from.x + NODE_W;
      const y1 = from.y + NODE_H / 2;
      const x2 = to.x;
      const y2 = to.y + NODE_H / 2;
      const mid = (x1 + x2) / 2;
      edges.push(
        s("path", {
          class: "edge",
          d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2 - 6},${y2}`,
          "marker-end": "url(#arrow)",
          "data-from": r.resource_name,
          "data-to": dependent,
        }),
      );
    }
  }
  return s(
    "svg",
    {
      class: "graph",
      width,
      height: Math.max(height, NODE_H + 2 * PAD),
      viewBox: `0 0 ${width} ${Math.max(height, NODE_H + 2 * PAD)}`,
      role: "group",
      "aria-label": "Resource dependency graph, left to right",
    },
    s(
      "defs",
      {},
      s(
        "marker",
        { id: "arrow", viewBox: "0 0 10 10", refX: 2, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" },
        s("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }),
      ),
    ),
    ...edges,
    ...nodes,
  );
}
