// DOM building without innerHTML (every value from the API is text),
// status badges that say their status in words and a symbol (never by
// colour alone), local times, the confirmation dialog and the poller.

import { group } from "./states.js";

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

const drawn = new WeakMap();

// Redraw `el` with fn() only when `data` differs from the last drawing:
// a poll that brings nothing new leaves the DOM (and the focus) alone.
export function redraw(el, data, fn) {
  const key = JSON.stringify(data);
  if (drawn.get(el) === key) return;
  replace(el, fn());
  drawn.set(el, key);
}

export function replace(el, ...children) {
  drawn.delete(el);
  el.replaceChildren();
  append(el, children);
  return el;
}

const SYMBOLS = { COMPLETE: "✓", SUCCEEDED: "✓", DEPLOYED: "✓", REJECTED: "↶", SUPERSEDED: "–", FAILED: "✗", IN_PROGRESS: "⟳", PAUSED: "⏸", CANCELLED: "⊘", ROLLED_BACK: "↶", ROLLBACK_COMPLETE: "↶", SKIPPED: "–", PENDING: "…" };
// Rollout and promotion targets' words for "running", and for a change
// undone: the stack is back where it was (Heat's ROLLBACK_*, a rollout
// target's or a promotion's ROLLING_BACK / ROLLED_BACK): the server's
// groups (states.js).
// A build on its way (the server's "build" ACTIVE group) runs too.
const running = (status) => group("rollout_target", "RUNNING").includes(status) || group("build", "ACTIVE").includes(status);
const undone = (status) => group("rollout_target", "ROLLBACK").includes(status);

// "CREATE_COMPLETE" → "complete", "FAILED", "IN_PROGRESS" → css class.
// A rollback (in progress or done) is neither a success nor an outage:
// the change asked for failed or was cancelled, and the stack runs what
// it ran before; it has its own kind (an amber warning, as Horizon shows
// ROLLBACK_COMPLETE), never "complete". A rollback that failed is a
// failure.
export function statusKind(status) {
  if (!status) return "none";
  if (status.endsWith("FAILED")) return "failed";
  if (status.startsWith("ROLLBACK_") || undone(status)) return "rollback";
  if (status.endsWith("IN_PROGRESS") || running(status)) return "progress";
  if (status.startsWith("DELETE_")) return "deleted";
  if (status.endsWith("COMPLETE") || status === "SUCCEEDED" || status === "DEPLOYED") return "complete";
  // A build whose verification failed: the stack is back on its image.
  if (status === "REJECTED") return "rollback";
  return "other";
}

export function statusSymbol(status) {
  const s = status || "";
  if (SYMBOLS[s]) return SYMBOLS[s];
  if (running(s)) return SYMBOLS.IN_PROGRESS;
  const tail = s.endsWith("IN_PROGRESS") ? "IN_PROGRESS" : s.split("_").pop();
  return SYMBOLS[tail] || "•";
}

export function badge(status) {
  return h(
    "span",
    { class: "badge s-" + statusKind(status), "data-status": status || "" },
    h("span", { "aria-hidden": "true" }, statusSymbol(status) + " "),
    status || "—",
  );
}

export function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return h("time", { datetime: iso, title: iso }, date.toLocaleString());
}

// A time in few characters for a narrow column, on one line: the time of
// day when it is today, else the day and the time ("3 Dec, 14:05"), with
// the year when it is not this one; the full local time and the API's
// value on hover.
export function whenShort(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const now = new Date();
  const time = { hour: "2-digit", minute: "2-digit" };
  let text;
  if (date.toDateString() === now.toDateString()) {
    text = date.toLocaleTimeString([], { ...time, second: "2-digit" });
  } else {
    const year = date.getFullYear() === now.getFullYear() ? {} : { year: "numeric" };
    text = date.toLocaleString([], { day: "numeric", month: "short", ...year, ...time });
  }
  return h("time", { class: "short", datetime: iso, title: date.toLocaleString() + " (" + iso + ")" }, text);
}

// A long identifier shown cut to its column's width (an ellipsis) but
// whole in the page: on hover (title), and a click selects all of it, so
// a copy takes the full value.
export function ident(value) {
  if (!value) return "—";
  // Its end stays in sight (where IDs differ: a UUID's last part); the
  // ellipsis eats the middle.
  const cut = Math.max(0, value.length - 10);
  return h("code", { class: "ident", title: value }, h("span", { class: "head" }, value.slice(0, cut)), h("span", { class: "tail" }, value.slice(cut)));
}

export function errorBox(err) {
  const status = err && err.status ? " (" + err.status + ")" : "";
  return h(
    "div",
    { class: "error", role: "alert" },
    h("strong", {}, err.status === 409 ? "Conflict" + status : "Error" + status),
    " ",
    err.message || String(err),
  );
}

// Ask before an action; resolves true when confirmed.
export function confirm(title, ...body) {
  const dialog = document.getElementById("confirm");
  replace(document.getElementById("confirm-title"), title);
  replace(document.getElementById("confirm-body"), ...body);
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), {
      once: true,
    });
    dialog.returnValue = "";
    dialog.showModal();
    document.getElementById("confirm-yes").focus();
  });
}

// Base polling period; ?poll_ms=N on the page's URL changes it (tests).
const fromUrl = Number(new URLSearchParams(location.search).get("poll_ms"));
export const POLL_MS = fromUrl > 0 ? fromUrl : 2000;

// Runs `tick` again and again while the page shows it: fast while
// something is in progress (tick returns true), slower otherwise, paused
// while the tab is hidden, stopped by stop() (the page changed).
export class Poller {
  constructor(tick) {
    this.tick = tick;
    this.stopped = false;
    this.timer = null;
    this.cleanups = [];
    this.onVisible = () => {
      if (!document.hidden) this.run();
    };
    document.addEventListener("visibilitychange", this.onVisible);
  }

  async run() {
    clearTimeout(this.timer);
    if (this.stopped || document.hidden) return;
    let busy = false;
    try {
      busy = await this.tick();
    } catch (err) {
      busy = false;
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => this.run(), busy ? POLL_MS : POLL_MS * 5);
  }

  // fn() when the page stops (what else the page started).
  onStop(fn) {
    this.cleanups.push(fn);
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    document.removeEventListener("visibilitychange", this.onVisible);
    for (const fn of this.cleanups) fn();
  }
}

// A collection's page (rollouts, promotions): a title with a button
// opening the form that makes one (`form()`), and the list, polled:
// `fetch()` gives the items, `draw(items)` the list, `busy(items)` whether
// to poll fast. Element ids: <id>-new, <id>-start, <id>-list.
// ``page``: at most this many items are fetched (the newest); when the
// list is full a line says so and how the CLI lists the older ones.
export function listPage(main, { id, title, newLabel, form, fetch, empty, draw, busy, page }) {
  const listEl = h("div", { id: id + "-list" }, h("p", { class: "muted" }, "Loading…"));
  const formEl = h("div", { id: id + "-start" });
  const toggle = h("button", { type: "button", id: id + "-new", "aria-expanded": "false", onclick: () => {
    const open = !formEl.childElementCount;
    replace(formEl, open ? form() : null);
    toggle.setAttribute("aria-expanded", String(open));
    if (open) formEl.querySelector("input").focus();
  } }, newLabel);
  replace(main, h("div", { class: "title" }, h("h1", {}, title), toggle), formEl, listEl);
  const poller = new Poller(async () => {
    let items;
    try {
      items = await fetch();
    } catch (err) {
      replace(listEl, errorBox(err));
      return false;
    }
    if (!items.length) {
      replace(listEl, h("p", { class: "empty" }, empty));
      return false;
    }
    const more = page && items.length >= page
      ? h("p", { class: "muted", id: id + "-more" }, "The newest " + page + " are shown; `openstack stack " + id + " list --marker ID` lists older ones.")
      : null;
    redraw(listEl, items, () => [draw(items), more]);
    return busy(items);
  });
  poller.run();
  return poller;
}
