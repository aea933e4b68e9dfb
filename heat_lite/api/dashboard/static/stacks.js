// The stacks page: counts by status, filters (name, status, tag), the
// list newest first with paging, and a form to create a stack.

import { get, link, parseStackLink, session, v1 } from "./api.js";
import { badge, errorBox, h, replace, Poller, when } from "./dom.js";

const PAGE = 20;
// The counts, in the page's words: "COMPLETE" is a success, so it leaves
// out ROLLBACK_COMPLETE (a change that failed and was undone), counted
// on its own.
const STATUSES = ["IN_PROGRESS", "COMPLETE", "ROLLBACK_COMPLETE", "FAILED"];
const LABELS = { IN_PROGRESS: "in progress", COMPLETE: "complete", ROLLBACK_COMPLETE: "rolled back", FAILED: "failed" };
// The stack actions that end in a success (the API's status filter
// COMPLETE alone matches ROLLBACK_COMPLETE too; a deleted stack is not
// listed).
const SUCCESS_ACTIONS = ["CREATE", "UPDATE", "SUSPEND", "RESUME", "CHECK", "ADOPT", "SNAPSHOT", "RESTORE"];

function listQuery(filters, extra) {
  const q = new URLSearchParams({ sort_keys: "creation_time", sort_dir: "desc" });
  if (filters.name) q.set("name", filters.name);
  if (filters.status) q.set("status", filters.status);
  if (filters.status === "COMPLETE") for (const action of SUCCESS_ACTIONS) q.append("action", action);
  if (filters.tag) q.set("tags", filters.tag);
  for (const [k, v] of Object.entries(extra)) q.set(k, v);
  return "/stacks?" + q.toString();
}

export function stackHref(project, name, id) {
  return "#/" + encodeURIComponent(project) + "/stacks/" + encodeURIComponent(name) + "/" + encodeURIComponent(id);
}

function listHref(filters) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
  const qs = q.toString();
  return "#/" + encodeURIComponent(session.project) + "/stacks" + (qs ? "?" + qs : "");
}

function filterForm(filters) {
  const name = h("input", { id: "f-name", name: "name", value: filters.name || "", placeholder: "exact name" });
  const tag = h("input", { id: "f-tag", name: "tag", value: filters.tag || "", placeholder: "tag" });
  const status = h(
    "select",
    { id: "f-status", name: "status" },
    h("option", { value: "" }, "any status"),
    ...["CREATE_COMPLETE", "UPDATE_COMPLETE", "IN_PROGRESS", "COMPLETE", "ROLLBACK_COMPLETE", "FAILED"].map((s) =>
      h("option", { value: s, selected: s === filters.status }, s === "COMPLETE" ? "COMPLETE (not rolled back)" : s),
    ),
  );
  return h(
    "form",
    {
      class: "filters",
      role: "search",
      onsubmit: (ev) => {
        ev.preventDefault();
        location.hash = listHref({ name: name.value.trim(), status: status.value, tag: tag.value.trim() });
      },
    },
    h("label", {}, "Name ", name),
    h("label", {}, "Status ", status),
    h("label", {}, "Tag ", tag),
    h("button", { type: "submit", id: "f-apply" }, "Filter"),
    h("a", { href: listHref({}), class: "button" }, "Clear"),
  );
}

function row(stack) {
  const name = h("a", { href: stackHref(session.project, stack.stack_name, stack.id) }, stack.stack_name);
  return h(
    "tr",
    { "data-stack": stack.stack_name, "data-status": stack.stack_status },
    h("td", {}, name),
    h("td", {}, badge(stack.stack_status)),
    h("td", { class: "reason" }, stack.stack_status_reason || ""),
    h("td", {}, when(stack.creation_time)),
    h("td", {}, when(stack.updated_time)),
    h("td", {}, (stack.tags || []).join(", ")),
  );
}

async function counts(filters) {
  const base = { name: filters.name, tag: filters.tag };
  const asks = STATUSES.map((s) => get(listQuery({ ...base, status: s }, { limit: 1, with_count: "true" })));
  const found = await Promise.all(asks);
  return Object.fromEntries(STATUSES.map((s, i) => [s, found[i].count]));
}

function countsBar(total, byStatus, filters) {
  const item = (label, status, n) =>
    h(
      "a",
      { href: listHref({ ...filters, status, marker: "" }), class: "count", "data-count": status || "ALL" },
      label + ": ",
      h("strong", {}, String(n)),
    );
  return h(
    "p",
    { class: "counts", "aria-label": "Stacks by status" },
    item("All", "", total),
    ...STATUSES.map((s) => item(LABELS[s], s, byStatus[s])),
  );
}

export function stacksPage(main, filters) {
  const countsEl = h("div", { id: "counts" });
  const listEl = h("div", { id: "stack-list", "aria-live": "polite" }, h("p", { class: "muted" }, "Loading…"));
  replace(
    main,
    h("div", { class: "title" }, h("h1", {}, "Stacks"), h("a", { class: "button", href: "#/" + encodeURIComponent(session.project) + "/new", id: "new-stack" }, "Create stack")),
    countsEl,
    filterForm(filters),
    listEl,
  );
  // Each tick asks for the project's change mark first (an empty 304
  // while nothing moved) and reads the list and its counts again only
  // when it moved.
  let mark = null;
  let busy = false;
  const poller = new Poller(async () => {
    let body;
    let changes;
    try {
      changes = (await get("/changes")).changes;
      if (changes.stacks === mark) return busy;
      const extra = { limit: PAGE, with_count: "true" };
      if (filters.marker) extra.marker = filters.marker;
      body = await get(listQuery(filters, extra));
    } catch (err) {
      replace(listEl, errorBox(err));
      return false;
    }
    const stacks = body.stacks || [];
    mark = changes.stacks;
    try {
      replace(countsEl, countsBar(body.count, await counts(filters), filters));
    } catch (err) {
      mark = null;
      replace(countsEl, errorBox(err));
    }
    const next = link(body, "next");
    const pager = h(
      "nav",
      { class: "pager", "aria-label": "Pages" },
      filters.marker ? h("a", { href: listHref({ ...filters, marker: "" }) }, "« First page") : null,
      next ? h("a", { id: "next-page", href: listHref({ ...filters, marker: stacks[stacks.length - 1].id }) }, "Next page »") : null,
    );
    if (!stacks.length) {
      replace(listEl, h("p", { class: "empty" }, filters.name || filters.status || filters.tag ? "No stack matches these filters." : "No stacks in project " + session.project + " yet."), pager);
      busy = false;
      return false;
    }
    replace(
      listEl,
      h(
        "table",
        { class: "stacks" },
        h("thead", {}, h("tr", {}, ...["Name", "Status", "Reason", "Created", "Updated", "Tags"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, stacks.map(row)),
      ),
      pager,
    );
    busy = stacks.some((s) => s.stack_status.endsWith("IN_PROGRESS"));
    return busy;
  });
  poller.run();
  return poller;
}

// key=value lines → {key: value}
export function parseParams(text) {
  const params = {};
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    const eq = trimmed.indexOf("=");
    if (eq < 1) throw new Error("Parameters are key=value lines: " + trimmed);
    params[trimmed.slice(0, eq).trim()] = trimmed.slice(eq + 1).trim();
  }
  return params;
}

// "name=default" lines of a template's parameters (POST /validate, as
// any client validates a template), for the parameters field.
async function templateParams(template) {
  const doc = await v1("POST", "/validate", { template });
  return Object.entries(doc.Parameters || {})
    .filter(([, p]) => !p.NoEcho || p.NoEcho === "false")
    .map(([k, p]) => k + "=" + (p.Default === undefined || p.Default === null ? "" : typeof p.Default === "string" ? p.Default : JSON.stringify(p.Default)))
    .join("\n");
}

// A JSON value if the text is one ("true", "3"), the text otherwise (an
// output's expected value typed in a form).
export function loose(text) {
  try {
    return JSON.parse(text);
  } catch (err) {
    return text;
  }
}

export function createPage(main) {
  const name = h("input", { id: "c-name", required: true, autocomplete: "off" });
  const template = h("textarea", { id: "c-template", rows: 14, required: true, spellcheck: "false" },
    "heat_template_version: 2018-08-31\nresources:\n  example:\n    type: OS::Heat::None\n");
  const params = h("textarea", { id: "c-params", rows: 3, spellcheck: "false", placeholder: "name=value, one a line" });
  const out = h("div", { "aria-live": "polite" });
  // A template file chosen here is read by the page into the text area
  // (it never leaves the browser but as the create request's body).
  const upload = h("input", { id: "c-file", type: "file", accept: ".yaml,.yml,.json,.template,text/*", onchange: async () => {
    const file = upload.files[0];
    if (!file) return;
    template.value = await file.text();
    replace(out, h("p", { class: "ok", role: "status" }, "Read " + file.name + " (" + file.size + " bytes)."));
  } });
  const readParams = h("button", { type: "button", id: "c-read-params", onclick: async () => {
    try {
      params.value = await templateParams(template.value);
      replace(out, params.value ? null : h("p", { class: "muted" }, "The template has no parameters."));
    } catch (err) {
      replace(out, errorBox(err));
    }
  } }, "Parameters from the template");
  const form = h(
    "form",
    {
      class: "create",
      onsubmit: async (ev) => {
        ev.preventDefault();
        let body;
        try {
          body = { stack_name: name.value.trim(), template: template.value, parameters: parseParams(params.value) };
        } catch (err) {
          replace(out, errorBox(err));
          return;
        }
        try {
          const created = await v1("POST", "/stacks", body);
          const ident = parseStackLink(created.stack.links[0].href);
          location.hash = stackHref(session.project, ident.name, ident.id);
        } catch (err) {
          replace(out, errorBox(err));
        }
      },
    },
    h("label", {}, "Name", name),
    h("label", {}, "Template file", upload),
    h("label", {}, "Template (HOT, YAML or JSON)", template),
    h("label", {}, "Parameters", params),
    h("div", { class: "buttons" }, readParams, h("button", { type: "submit", class: "primary", id: "c-submit" }, "Create")),
    out,
  );
  replace(main, h("h1", {}, "Create a stack"), form);
  name.focus();
  return null;
}
