// The dependency graph of a stack, laid out left to right: a resource's
// layer is the length of the longest chain of resources it depends on,
// so every edge points rightwards. Each node shows the current record
// (name, type, status, physical ID) and, below it, the replaced and
// pending-delete versions that still exist.
//
// The layout fits the width it is given (the graph's box): nodes are
// between MIN_W and MAX_W wide; a layer much taller than the others is
// split into side-by-side columns while there is room (the resources of
// one layer never depend on each other); a graph still too wide is
// scaled down, at most to MIN_SCALE so that its text stays readable, and
// only a deeper one than that scrolls inside its box. Within a layer,
// resources are ordered after their neighbours' positions, so that
// edges stay short and cross less.

import { statusKind, statusSymbol } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const NODE_H = 66;
const VERSION_H = 50;
const MIN_W = 160;
const PREFERRED_W = 190;
const MAX_W = 230;
const LAYER_GAP = 40;
const SUB_GAP = 16;
const ROW_GAP = 18;
const PAD = 12;
export const MIN_SCALE = 0.8;
// A layer this many rows tall or fewer is never split.
const SHORT = 3;
// The node texts' fonts (as style.css draws them: svg.graph text.*),
// to measure them before they are drawn.
const FONTS = { name: ["700 12px", "page"], type: ["11px", "page"], status: ["11px", "page"], physical: ["10px", "ui-monospace, monospace"] };

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

// `text` in `max` characters: cut in the middle, where names and IDs
// differ least ("lb_pool…server_03").
function cut(text, max) {
  const head = Math.floor((max - 1) * 0.45);
  return text.slice(0, head) + "…" + text.slice(text.length - (max - 1 - head));
}

let context = null;
let pageFont = null;
function width(text, kind) {
  if (!context) {
    context = document.createElement("canvas").getContext("2d");
    pageFont = getComputedStyle(document.documentElement).fontFamily;
  }
  const [size, family] = FONTS[kind];
  context.font = size + " " + (family === "page" ? pageFont : family);
  return context.measureText(text).width;
}

// `text` cut to what `room` px hold in the font of `kind` (the whole
// text is in the node's title).
function fit(text, room, kind) {
  if (!text) return "—";
  if (width(text, kind) <= room) return text;
  let lo = 3;
  let hi = text.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (width(cut(text, mid), kind) <= room) lo = mid;
    else hi = mid - 1;
  }
  return cut(text, lo);
}

// A type too long for its node loses its "OS::" first (every cloud
// type has it), then its middle.
function fitType(type, room) {
  const bare = type && type.startsWith("OS::") && width(type, "type") > room ? type.slice(4) : type;
  return fit(bare, room, "type");
}

// {deps, dependents}: name → names, within the stack.
function links(resources) {
  const names = new Set(resources.map((r) => r.resource_name));
  const deps = new Map([...names].map((n) => [n, []]));
  const dependents = new Map([...names].map((n) => [n, []]));
  for (const r of resources) {
    for (const dependent of r.required_by || []) {
      if (!names.has(dependent)) continue;
      deps.get(dependent).push(r.resource_name);
      dependents.get(r.resource_name).push(dependent);
    }
  }
  return { deps, dependents };
}

// {name: layer}: longest path from a resource without dependencies.
export function columns(resources) {
  const { deps } = links(resources);
  const layer = new Map();
  const visiting = new Set();
  const depth = (name) => {
    if (layer.has(name)) return layer.get(name);
    if (visiting.has(name)) return 0; // a cycle cannot be stored; be safe
    visiting.add(name);
    const mine = deps.get(name) || [];
    const value = mine.length ? 1 + Math.max(...mine.map(depth)) : 0;
    visiting.delete(name);
    layer.set(name, value);
    return value;
  };
  for (const name of deps.keys()) depth(name);
  return layer;
}

// Others than the current version (replaced, pending-delete) still live.
export function otherVersions(versions) {
  return (versions || []).filter((v) => v.role !== "current" && v.role !== "history");
}

// Layers of names, each ordered by the mean position of its neighbours
// (a sweep after dependencies, one back after dependents, one more
// forth): a light form of the usual crossing reduction.
function ordered(resources) {
  const layer = columns(resources);
  const { deps, dependents } = links(resources);
  const layers = [];
  for (const name of [...layer.keys()].sort()) {
    const k = layer.get(name);
    (layers[k] = layers[k] || []).push(name);
  }
  const list = Array.from(layers, (l) => l || []);
  const pos = new Map();
  const place = (names) => names.forEach((n, i) => pos.set(n, (i + 0.5) / names.length));
  const sortBy = (names, neighbours) => {
    const key = new Map(names.map((n) => {
      const near = neighbours.get(n);
      return [n, near.length ? near.reduce((sum, m) => sum + pos.get(m), 0) / near.length : pos.get(n)];
    }));
    names.sort((a, b) => key.get(a) - key.get(b) || a.localeCompare(b));
    place(names);
  };
  list.forEach(place);
  for (let k = 1; k < list.length; k++) sortBy(list[k], deps);
  for (let k = list.length - 2; k >= 0; k--) sortBy(list[k], dependents);
  for (let k = 1; k < list.length; k++) sortBy(list[k], deps);
  return list;
}

// Heights of the rows of a layer of `names` laid in `split` columns
// (row-major, so that rows line up across its columns).
function rowHeights(names, split, heightOf) {
  const rows = [];
  names.forEach((n, i) => {
    const r = Math.floor(i / split);
    rows[r] = Math.max(rows[r] || 0, heightOf(n));
  });
  return rows;
}

const columnHeight = (rows) => rows.reduce((sum, hgt) => sum + hgt + ROW_GAP, 0);

// How many columns each layer takes, the node width and the scale that
// make the graph fit `avail` px.
function plan(layers, heightOf, avail) {
  const split = layers.map(() => 1);
  const widthAt = (w) =>
    2 * PAD + (layers.length - 1) * LAYER_GAP + split.reduce((sum, n) => sum + n * w + (n - 1) * SUB_GAP, 0);
  const height = (k) => columnHeight(rowHeights(layers[k], split[k], heightOf));
  for (;;) {
    let tallest = -1;
    layers.forEach((names, k) => {
      if (Math.ceil(names.length / split[k]) <= SHORT) return;
      if (tallest < 0 || height(k) > height(tallest)) tallest = k;
    });
    if (tallest < 0) break;
    split[tallest] += 1;
    if (widthAt(PREFERRED_W) > avail) {
      split[tallest] -= 1;
      break;
    }
  }
  const count = split.reduce((sum, n) => sum + n, 0);
  const w = Math.round(Math.min(MAX_W, Math.max(MIN_W, (avail - widthAt(0)) / count)));
  const total = widthAt(w);
  const scale = total <= avail ? 1 : Math.max(MIN_SCALE, avail / total);
  return { split, w, scale };
}

// Positions {name: {x, y, sub, row}} and each layer's geometry.
function place(layers, split, w, heightOf) {
  const pos = new Map();
  const geometry = [];
  let x = PAD;
  let height = 0;
  layers.forEach((names, k) => {
    const rows = rowHeights(names, split[k], heightOf);
    const tops = [];
    let y = PAD;
    for (const hgt of rows) {
      tops.push(y);
      y += hgt + ROW_GAP;
    }
    names.forEach((n, i) => {
      const sub = i % split[k];
      const row = Math.floor(i / split[k]);
      pos.set(n, { x: x + sub * (w + SUB_GAP), y: tops[row], layer: k, sub, row });
    });
    const end = x + split[k] * w + (split[k] - 1) * SUB_GAP;
    geometry.push({ x, end, split: split[k], tops, bottoms: tops.map((t, r) => t + rows[r]) });
    x = end + LAYER_GAP;
    height = Math.max(height, y - ROW_GAP + PAD);
  });
  return { pos, geometry, width: x - LAYER_GAP + PAD, height };
}

// An edge from `a` to its dependent `b`. Out of a node that is not in its
// layer's last column, the edge runs down the gap beside it and along the
// gap below its row to the layer's end, so that it never passes under
// another node; into a node that is not in the first column, likewise
// along the gap above its row.
function edgePath(a, b, la, lb, w) {
  const mid = NODE_H / 2;
  let x1 = a.x + w;
  let y1 = a.y + mid;
  let d = `M${x1},${y1}`;
  if (a.sub < la.split - 1) {
    const lane = la.bottoms[a.row] + ROW_GAP / 2;
    const side = x1 + SUB_GAP / 2;
    d += ` L${side},${y1} L${side},${lane} L${la.end},${lane}`;
    x1 = la.end;
    y1 = lane;
  }
  const y2 = b.y + mid;
  if (b.sub === 0) {
    const c = (x1 + b.x) / 2;
    return d + ` C${c},${y1} ${c},${y2} ${b.x - 6},${y2}`;
  }
  const lane = lb.tops[b.row] - ROW_GAP / 2;
  const side = b.x - SUB_GAP / 2;
  const c = (x1 + lb.x) / 2;
  return d + ` C${c},${y1} ${c},${lane} ${lb.x},${lane} L${side},${lane} L${side},${y2} L${b.x - 6},${y2}`;
}

function versionGroup(v, i, w) {
  const vs = v.resource_status;
  const inner = w - 12 - 16;
  return s(
    "g",
    {
      class: "version role-" + v.role + " s-" + statusKind(vs),
      transform: "translate(12," + (NODE_H + 4 + i * VERSION_H) + ")",
      "data-role": v.role,
      "data-version": v.version,
      "data-physical-id": v.physical_resource_id || "",
    },
    s("rect", { class: "box", width: w - 12, height: VERSION_H - 4, rx: 4 }),
    s("svg", { width: w - 12, height: VERSION_H - 4 },
      s("text", { x: 8, y: 14, class: "type" }, v.role + " · v" + v.version),
      s("text", { x: 8, y: 28, class: "status" }, fit(statusSymbol(vs) + " " + vs, inner, "status")),
      s("text", { x: 8, y: 41, class: "physical" }, fit(v.physical_resource_id, inner, "physical"))),
  );
}

function nodeGroup(res, pos, w, extra, onSelect) {
  const status = res.resource_status;
  const label =
    res.resource_name + ", " + res.resource_type + ", " + status +
    (res.physical_resource_id ? ", physical ID " + res.physical_resource_id : "");
  const select = () => onSelect(res.resource_name);
  const g = s("g", {
    class: "node s-" + statusKind(status),
    transform: "translate(" + pos.x + "," + pos.y + ")",
    tabindex: "0",
    role: "button",
    "aria-label": label,
    "data-resource": res.resource_name,
    "data-status": status,
    onclick: select,
    onkeydown: (ev) => {
      if (ev.key === "Enter" || ev.key === " ") {
        ev.preventDefault();
        select();
      }
    },
  });
  const inner = w - 20;
  const nested = res.nested ? 60 : 0;
  // The texts sit in an <svg> of the node's size: whatever the estimate
  // of their width misses is clipped at the node's edge.
  g.append(
    s("title", {}, label),
    s("rect", { class: "box", width: w, height: NODE_H, rx: 6 }),
    s("svg", { width: w, height: NODE_H },
      s("text", { x: 10, y: 18, class: "name" }, fit(res.resource_name, inner - nested, "name")),
      s("text", { x: 10, y: 34, class: "type" }, fitType(res.resource_type, inner)),
      s("text", { x: 10, y: 49, class: "status" }, fit(statusSymbol(status) + " " + status, inner, "status")),
      s("text", { x: 10, y: 62, class: "physical", "data-physical-id": res.physical_resource_id || "" },
        fit(res.physical_resource_id, inner, "physical")),
      res.nested ? s("text", { x: w - 10, y: 18, class: "nested", "text-anchor": "end" }, "nested ▸") : null),
  );
  extra.forEach((v, i) => g.append(versionGroup(v, i, w)));
  return g;
}

function edgesOf(resources, pos, geometry, w) {
  const edges = [];
  for (const r of resources) {
    const a = pos.get(r.resource_name);
    for (const dependent of r.required_by || []) {
      const b = pos.get(dependent);
      if (!a || !b) continue;
      const d = edgePath(a, b, geometry[a.layer], geometry[b.layer], w);
      edges.push(s("path", { class: "edge", d, "marker-end": "url(#arrow)", "data-from": r.resource_name, "data-to": dependent }));
    }
  }
  return edges;
}

// An <svg> of `resources` ({versions: {name: [...]}} gives the other
// live versions) fitted to `avail` px of width; onSelect(name) when a
// node is chosen.
export function render(resources, versions, selected, onSelect, avail) {
  const extraOf = (name) => otherVersions(versions[name]);
  const heightOf = (name) => {
    const n = extraOf(name).length;
    return NODE_H + n * VERSION_H + (n ? 4 : 0);
  };
  const layers = ordered(resources);
  const { split, w, scale } = plan(layers, heightOf, avail || 1000);
  const { pos, geometry, width, height } = place(layers, split, w, heightOf);
  const byName = new Map(resources.map((r) => [r.resource_name, r]));
  const nodes = [];
  for (const [name, p] of pos) {
    const g = nodeGroup(byName.get(name), p, w, extraOf(name), onSelect);
    if (name === selected) g.classList.add("selected");
    nodes.push(g);
  }
  const edges = edgesOf(resources, pos, geometry, w);
  const tall = Math.max(height, NODE_H + 2 * PAD);
  return s(
    "svg",
    {
      class: "graph",
      width: Math.floor(width * scale),
      height: Math.ceil(tall * scale),
      viewBox: `0 0 ${width} ${tall}`,
      "data-scale": scale.toFixed(3),
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
