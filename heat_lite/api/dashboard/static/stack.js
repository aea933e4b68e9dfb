// One stack: header, actions, the live dependency graph with record
// versions, the chosen resource's version history, live events, and the
// template, environment and files.

import { ApiError, get, link, parseStackLink, session, stackPath, v1 } from "./api.js";
import { badge, confirm, errorBox, h, ident, redraw, replace, Poller, statusKind, when, whenShort } from "./dom.js";
import { otherVersions, render } from "./graph.js";
import { promotedFrom } from "./promotions.js";
import { stackHref } from "./stacks.js";

const EVENTS = 50;

function kv(obj) {
  const keys = Object.keys(obj || {}).sort();
  if (!keys.length) return h("p", { class: "muted" }, "None.");
  return h("dl", { class: "kv" }, keys.flatMap((k) => [h("dt", {}, k), h("dd", {}, format(obj[k]))]));
}

function format(value) {
  if (value === null || value === undefined) return "—";
  return typeof value === "string" ? value : JSON.stringify(value);
}

// Heat says "Stack ROLLBACK completed successfully": the rollback did,
// the change asked for did not. The page says so in words.
function rollbackNote(status) {
  if (statusKind(status) !== "rollback") return null;
  const text = status.endsWith("IN_PROGRESS")
    ? "The last change failed or was cancelled: the stack is being rolled back to what it was before."
    : "The last change failed or was cancelled and was rolled back: the stack is back on what it was before.";
  return h("p", { id: "stack-rollback", class: "note s-rollback", role: "note" }, h("span", { "aria-hidden": "true" }, "↶ "), text);
}

function header(stack) {
  const parent = stack.parent ? h("p", {}, "Nested in stack ", h("code", {}, stack.parent)) : null;
  const outputs = (stack.outputs || []).map((o) => [o.output_key, o.output_error ? "error: " + o.output_error : o.output_value]);
  return h(
    "section",
    { class: "header", "aria-label": "Stack" },
    h("div", { class: "title" }, h("h1", { id: "stack-name" }, stack.stack_name), h("span", { id: "stack-status" }, badge(stack.stack_status))),
    h("p", { id: "stack-reason", class: "reason" }, stack.stack_status_reason || ""),
    rollbackNote(stack.stack_status),
    parent,
    promotedFrom(stack),
    h(
      "dl",
      { class: "kv times" },
      h("dt", {}, "ID"), h("dd", {}, h("code", {}, stack.id)),
      h("dt", {}, "Created"), h("dd", {}, when(stack.creation_time)),
      h("dt", {}, "Updated"), h("dd", {}, when(stack.updated_time)),
      stack.deletion_time ? [h("dt", {}, "Deleted"), h("dd", {}, when(stack.deletion_time))] : null,
      h("dt", {}, "Tags"), h("dd", {}, (stack.tags || []).join(", ") || "—"),
    ),
    stack.description ? h("p", { class: "description" }, stack.description) : null,
    h("div", { class: "columns" },
      h("div", {}, h("h2", {}, "Parameters"), kv(stack.parameters)),
      h("div", { id: "outputs" }, h("h2", {}, "Outputs"), kv(Object.fromEntries(outputs)))),
  );
}

function eventsTable(events) {
  if (!events.length) return h("p", { class: "empty" }, "No events yet.");
  return h(
    "table",
    { class: "events" },
    h("thead", {}, h("tr", {}, ...["Time", "Resource", "Status", "Reason", "Physical ID"].map((t) => h("th", { scope: "col" }, t)))),
    h(
      "tbody",
      {},
      events.map((e) =>
        h(
          "tr",
          { "data-event": e.id },
          h("td", {}, when(e.event_time)),
          h("td", {}, e.resource_name),
          h("td", {}, badge(e.resource_status)),
          h("td", { class: "reason" }, e.resource_status_reason),
          h("td", {}, h("code", {}, e.physical_resource_id || "")),
        ),
      ),
    ),
  );
}

// What each role means, on hover of its name.
const ROLES = {
  current: "the resource as the stack's template has it now",
  replaced: "replaced by a newer version; kept until the stack finishes, for a rollback",
  "pending-delete": "no longer in the template; being deleted",
  history: "a past version, deleted",
};

// A resource's versions, newest first: one aligned row each, its role and
// status in words, long IDs cut (whole on hover and when copied), short
// times (whole on hover).
function versionsTable(versions) {
  const head = ["Version", "Role", "Status", "Physical ID", "Template", "Times"];
  return h(
    "table",
    { class: "versions" },
    h("thead", {}, h("tr", {}, head.map((t) => h("th", { scope: "col" }, t)))),
    h(
      "tbody",
      {},
      [...versions].sort((a, b) => b.version - a.version).map((v) =>
        h(
          "tr",
          { class: "role-" + v.role, "data-role": v.role, "data-version": v.version },
          h("th", { scope: "row", class: "num" }, "v" + v.version),
          h("td", {}, h("span", { class: "role role-" + v.role, title: ROLES[v.role] || null }, v.role)),
          h("td", { class: "status" }, badge(v.resource_status),
            v.resource_status_reason ? h("div", { class: "reason", title: v.resource_status_reason }, v.resource_status_reason) : null),
          h("td", { class: "pid" }, ident(v.physical_resource_id)),
          h("td", { class: "num" }, v.template_id === null || v.template_id === undefined ? "—" : "#" + v.template_id),
          h("td", { class: "time" },
            h("div", {}, h("span", { class: "muted" }, "created "), whenShort(v.creation_time)),
            h("div", {}, h("span", { class: "muted" }, "updated "), whenShort(v.updated_time))),
        ),
      ),
    ),
  );
}

function resourcePanel(res, versions) {
  if (!res) return h("p", { class: "muted" }, "Choose a resource in the graph to see its details and versions.");
  const nested = parseStackLink(link(res, "nested"));
  return h(
    "div",
    { class: "resource-detail", "data-resource": res.resource_name },
    h("div", { class: "title" },
      h("h2", {}, "Resource ", h("code", {}, res.resource_name)),
      nested ? h("a", { id: "open-nested", class: "button", href: stackHref(session.project, nested.name, nested.id) }, "Open nested stack ▸") : null),
    h("div", { class: "detail-grid" },
      h("dl", { class: "kv" },
        h("dt", {}, "Type"), h("dd", {}, res.resource_type),
        h("dt", {}, "Status"), h("dd", {}, badge(res.resource_status)),
        h("dt", {}, "Reason"), h("dd", {}, res.resource_status_reason || "—"),
        h("dt", {}, "Physical ID"), h("dd", {}, h("code", {}, res.physical_resource_id || "—")),
        h("dt", {}, "Required by"), h("dd", {}, (res.required_by || []).join(", ") || "—")),
      h("div", { class: "history" },
        h("h3", {}, "Version history"),
        versions ? versionsTable(versions) : h("p", { class: "muted" }, "Loading…"))),
  );
}

// A lazily loaded <details> (template, environment, files).
function lazy(title, path) {
  const pre = h("pre", {}, "Loading…");
  const details = h("details", { class: "source" }, h("summary", {}, title), pre);
  details.addEventListener("toggle", async () => {
    if (!details.open) return;
    try {
      replace(pre, JSON.stringify(await get(path), null, 2));
    } catch (err) {
      replace(pre, errorBox(err));
    }
  });
  return details;
}

export function stackPage(main, name, id) {
  const base = stackPath(name, id);
  const state = { stack: null, resources: [], versions: {}, selected: null, gone: false };
  const headerEl = h("div", { id: "stack-header" }, h("p", { class: "muted" }, "Loading…"));
  const actionsEl = h("div", { id: "actions", class: "actions" });
  const messageEl = h("div", { id: "message", "aria-live": "assertive" });
  const graphEl = h("div", { id: "graph", class: "graph-wrap" }, h("p", { class: "muted" }, "Loading…"));
  const panelEl = h("section", { id: "resource", class: "panel", "aria-label": "Chosen resource", "aria-live": "polite" }, resourcePanel(null));
  const eventsEl = h("div", { id: "events", "aria-live": "off" });
  const formEl = h("div", { id: "update-form" });
  replace(
    main,
    h("p", {}, h("a", { href: "#/" + encodeURIComponent(session.project) + "/stacks" }, "« Stacks")),
    headerEl,
    actionsEl,
    messageEl,
    formEl,
    h("section", { "aria-label": "Resources" }, h("h2", {}, "Resources"), graphEl, panelEl),
    h("section", { "aria-label": "Events" }, h("h2", {}, "Events (newest first)"), eventsEl),
    h("section", { "aria-label": "Sources" }, h("h2", {}, "Template, environment and files"),
      lazy("Template", base + "/template"), lazy("Environment", base + "/environment"), lazy("Files", base + "/files")),
  );

  // The panel is below the graph (which takes the page's width): a
  // choice brings it into sight when it is not, up to the middle of the
  // window, so that the graph's lower part stays in sight above it.
  const select = (resName) => {
    state.selected = resName;
    drawGraph();
    drawPanel();
    const top = panelEl.getBoundingClientRect().top;
    if (top > window.innerHeight - 120) window.scrollBy({ top: top - window.innerHeight * 0.45, behavior: "smooth" });
    refreshVersions([resName]).then(drawPanel);
  };

  const drawGraph = () => {
    if (!state.resources.length) {
      replace(graphEl, h("p", { class: "empty" }, "This stack has no resources."));
      return;
    }
    const focused = document.activeElement && document.activeElement.getAttribute("data-resource");
    const avail = graphEl.clientWidth;
    redraw(graphEl, [state.resources, state.versions, state.selected, avail], () =>
      render(state.resources, state.versions, state.selected, select, avail),
    );
    if (focused) {
      const again = graphEl.querySelector('g.node[data-resource="' + CSS.escape(focused) + '"]');
      if (again) again.focus({ preventScroll: true });
    }
  };
  // The layout fits the box's width: drawn again when that changes.
  let drawnWidth = null;
  const resized = new ResizeObserver(() => {
    if (!graphEl.isConnected || graphEl.clientWidth === drawnWidth) return;
    drawnWidth = graphEl.clientWidth;
    if (state.resources.length) drawGraph();
  });
  resized.observe(graphEl);

  const drawPanel = () => {
    const res = state.resources.find((r) => r.resource_name === state.selected);
    const versions = res && state.versions[res.resource_name];
    redraw(panelEl, [res, versions], () => resourcePanel(res, versions));
  };

  async function refreshVersions(names) {
    await Promise.all(
      names.map(async (n) => {
        try {
          state.versions[n] = (await get(base + "/resources/" + encodeURIComponent(n) + "/versions")).versions;
        } catch (err) {
          if (!(err instanceof ApiError) || err.status !== 404) throw err;
          delete state.versions[n];
        }
      }),
    );
  }

  // Versions are read for resources that may have others than the current
  // one: every resource once at the start, then those in progress, those
  // that had other versions last time (until they are gone), the chosen
  // one, and all of them while an update runs (a replacement may start
  // between two reads).
  function versionsToRead(busy, first) {
    const updating = busy && state.stack.stack_status.startsWith("UPDATE");
    return state.resources
      .filter(
        (r) =>
          first ||
          updating ||
          r.resource_status.endsWith("IN_PROGRESS") ||
          otherVersions(state.versions[r.resource_name]).length ||
          r.resource_name === state.selected,
      )
      .map((r) => r.resource_name);
  }

  // The newest EVENTS events, newest first: once read, only those after
  // the newest one shown are asked for (all again when there are more
  // of them than the page shows, or the newest one is gone).
  let shown = [];
  async function readEvents() {
    if (shown.length) {
      try {
        const after = "/events?sort_dir=asc&limit=" + EVENTS + "&marker=" + encodeURIComponent(shown[0].id);
        const newer = (await get(base + after)).events;
        if (newer.length < EVENTS) {
          shown = [...newer.reverse(), ...shown].slice(0, EVENTS);
          return shown;
        }
      } catch (err) {
        if (err.status !== 404) throw err;
      }
    }
    shown = (await get(base + "/events?sort_dir=desc&limit=" + EVENTS)).events;
    return shown;
  }

  // Each tick asks only for the stack's change marks (one small request,
  // an empty 304 while nothing moved); the stack, its resources (and
  // record versions) and its events are read again only when their own
  // mark moved.
  let first = true;
  let marks = {};
  const poller = new Poller(async () => {
    let changes;
    try {
      changes = (await get(base + "/changes")).changes;
    } catch (err) {
      if (err.status === 404) {
        state.gone = true;
        replace(headerEl, h("h1", {}, name), h("p", { class: "empty", id: "stack-gone" }, "This stack does not exist (any more)."));
        replace(actionsEl);
        replace(graphEl);
        return false;
      }
      replace(messageEl, errorBox(err));
      return true;
    }
    const busy = changes.stack_status.endsWith("IN_PROGRESS");
    const moved = (part) => first || marks[part] !== changes[part];
    if (moved("stack")) {
      const stack = (await get(base)).stack;
      state.stack = stack;
      redraw(headerEl, stack, () => header(stack));
      if (stack.stack_status === "DELETE_COMPLETE") {
        headerEl.append(h("p", { class: "empty", id: "stack-gone" }, "This stack was deleted."));
        replace(actionsEl);
        replace(graphEl);
        replace(panelEl);
        return false;
      }
      drawActions();
    }
    const [resources, events] = await Promise.all([
      moved("resources") ? get(base + "/resources") : null,
      moved("events") ? readEvents() : null,
    ]);
    if (resources) {
      state.resources = resources.resources;
      const names = new Set(state.resources.map((r) => r.resource_name));
      for (const key of Object.keys(state.versions)) if (!names.has(key)) delete state.versions[key];
      await refreshVersions(versionsToRead(busy, first));
      drawGraph();
      drawPanel();
    }
    if (events) redraw(eventsEl, events, () => eventsTable(events));
    marks = changes;
    first = false;
    return busy;
  });

  async function act(title, method, path, body, detail) {
    if (!(await confirm(title, h("p", {}, detail)))) return;
    try {
      await v1(method, base + path, body);
      replace(messageEl, h("p", { class: "ok", role: "status" }, title + ": accepted."));
    } catch (err) {
      replace(messageEl, errorBox(err));
    }
    poller.run();
  }

  function drawActions() {
    const st = state.stack;
    const busy = st.stack_status.endsWith("IN_PROGRESS");
    const button = (id, label, enabled, fn) => h("button", { id, type: "button", disabled: !enabled, onclick: fn }, label);
    redraw(actionsEl, st.stack_status, () => [
      button("act-update", "Update parameters…", !busy, () => updateForm()),
      button("act-cancel", "Cancel update", st.stack_status === "UPDATE_IN_PROGRESS", () =>
        act("Cancel the update", "POST", "/actions", { cancel_update: null }, "Roll the stack back to its previous template.")),
      button("act-check", "Check", !busy, () => act("Check the stack", "POST", "/actions", { check: null }, "Check every resource against the cloud.")),
      button("act-suspend", "Suspend", !busy && !st.stack_status.startsWith("SUSPEND"), () =>
        act("Suspend the stack", "POST", "/actions", { suspend: null }, "Suspend every resource.")),
      button("act-resume", "Resume", st.stack_status === "SUSPEND_COMPLETE", () =>
        act("Resume the stack", "POST", "/actions", { resume: null }, "Resume every resource.")),
      button("act-delete", "Delete", st.stack_status !== "DELETE_IN_PROGRESS", () =>
        act("Delete the stack", "DELETE", "", undefined, "Delete stack " + st.stack_name + " and all its resources.")),
    ]);
  }

  async function updateForm() {
    let template;
    try {
      template = await get(base + "/template");
    } catch (err) {
      replace(formEl, errorBox(err));
      return;
    }
    const schema = template.parameters || {};
    const current = state.stack.parameters || {};
    const inputs = {};
    const fields = Object.keys(schema).sort().map((key) => {
      const p = schema[key] || {};
      const allowed = (p.constraints || []).find((c) => c.allowed_values);
      let input;
      if (allowed) {
        input = h("select", { name: key }, allowed.allowed_values.map((v) => h("option", { value: String(v), selected: String(v) === String(current[key]) }, String(v))));
      } else if (p.type === "boolean") {
        input = h("select", { name: key }, ["true", "false"].map((v) => h("option", { value: v, selected: String(current[key]).toLowerCase() === v }, v)));
      } else {
        input = h("input", { name: key, type: p.hidden ? "password" : p.type === "number" ? "number" : "text", step: p.type === "number" ? "any" : null, value: p.hidden ? "" : format(current[key] ?? p.default ?? "") });
      }
      inputs[key] = input;
      return h("label", {}, key + (p.description ? " — " + p.description : ""), " ", h("small", { class: "muted" }, "(" + (p.type || "string") + ")"), input);
    });
    const preview = h("div", { id: "preview", "aria-live": "polite" });
    const changed = () => {
      const out = {};
      for (const [key, input] of Object.entries(inputs)) {
        if (schema[key].hidden && input.value === "") continue;
        if (input.value !== format(current[key] ?? "")) out[key] = input.value;
      }
      return out;
    };
    // Plan -> review -> apply: the preview is saved as a plan
    // (POST .../plans), and "Apply" runs exactly that plan, or is refused
    // (409 "stale plan") when the stack changed since.
    let plan = null;
    const apply = h("button", { type: "button", class: "primary", id: "u-apply", disabled: true, onclick: async () => {
      if (!plan) return;
      if (!(await confirm("Update the stack", h("p", {}, "Apply plan " + plan.id + " as reviewed?")))) return;
      try {
        await v1("POST", base + "/plans/" + encodeURIComponent(plan.id) + "/apply", {});
        replace(formEl);
        replace(messageEl, h("p", { class: "ok", role: "status" }, "Update accepted."));
      } catch (err) {
        replace(preview, errorBox(err));
        plan = null;
        apply.disabled = true;
      }
      poller.run();
    } }, "Apply plan");
    const forget = () => {
      plan = null;
      apply.disabled = true;
    };
    for (const input of Object.values(inputs)) {
      input.addEventListener("input", forget);
      input.addEventListener("change", forget);
    }
    const previewButton = h("button", { type: "button", id: "u-preview", onclick: async () => {
      const params = changed();
      forget();
      if (!Object.keys(params).length) {
        replace(preview, h("p", { class: "muted" }, "Nothing changed."));
        return;
      }
      try {
        const result = await v1("POST", base + "/plans", { existing: true, parameters: params });
        plan = result.plan;
        replace(
          preview,
          changes(plan.resource_changes || {}),
          h("p", { class: "muted", id: "u-plan", "data-plan": plan.id },
            "Plan " + plan.id + ", valid until " + plan.expires_at + " UTC: applied exactly as shown, or refused if the stack changes meanwhile."),
        );
        apply.disabled = false;
      } catch (err) {
        replace(preview, errorBox(err));
      }
    } }, "Plan changes");
    replace(
      formEl,
      h("form", { class: "update", onsubmit: (ev) => ev.preventDefault() },
        h("h2", {}, "Update parameters"),
        fields.length ? fields : h("p", { class: "muted" }, "The template has no parameters."),
        h("div", { class: "buttons" }, previewButton, apply, h("button", { type: "button", onclick: () => replace(formEl) }, "Close")),
        preview),
    );
  }

  poller.onStop(() => resized.disconnect());
  poller.run();
  return poller;
}

function changes(rc) {
  const kinds = ["replaced", "updated", "added", "deleted", "unchanged"];
  return h(
    "div",
    { class: "changes" },
    h("h3", {}, "Preview of the changes"),
    h("dl", { class: "kv" }, kinds.flatMap((k) => [
      h("dt", {}, k),
      h("dd", { "data-change": k }, (rc[k] || []).map((r) => r.resource_name || r).join(", ") || "—"),
    ])),
  );
}
