// Fleet rollouts (/v1/{project}/rollouts): the list with a form to start
// one, and one rollout's progress batch by batch and target by target,
// with its actions (each asks for a confirmation). The section is shown
// only when the API offers rollouts (not a 404).

import { get, offered, session, v1 } from "./api.js";
import { badge, confirm, errorBox, h, listPage, redraw, replace, Poller, when } from "./dom.js";
import { loose, parseParams, stackHref } from "./stacks.js";
import { group, initial, mayFollow } from "./states.js";

// The server's groups (states.js).
const finished = (status) => group("rollout", "FINISHED").includes(status);
const targetDone = (status) => group("rollout_target", "TERMINAL").includes(status);

export const available = () => offered("/rollouts");

// The newest this many are listed (the API pages with limit/marker).
const PAGE = 100;

function rolloutHref(id) {
  return "#/" + encodeURIComponent(session.project) + "/rollouts/" + encodeURIComponent(id);
}

// "SUCCEEDED: 3 · ROLLED_BACK: 1" (the states that have targets).
function countsText(counts) {
  const keys = Object.keys(counts || {}).filter((k) => counts[k]);
  return keys.map((k) => k + ": " + counts[k]).join(" · ") || "—";
}

function number(id, label, value, min) {
  return h("label", {}, label, h("input", { id, type: "number", min, step: 1, value, required: true }));
}

// The form starting a rollout: the stacks (a name pattern), the update
// (parameters), the check that decides each target (an output's value)
// and the strategy.
function startForm() {
  const field = (id, label, attrs) => h("label", {}, label, h("input", { id, autocomplete: "off", ...attrs }));
  const out = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    {
      class: "create",
      id: "rollout-form",
      onsubmit: async (ev) => {
        ev.preventDefault();
        const value = (id) => form.querySelector("#" + id).value.trim();
        let body;
        try {
          body = {
            name: value("r-name"),
            selector: { stack_name: value("r-stacks") },
            update: { parameters: parseParams(form.querySelector("#r-params").value) },
            verify: {
              timeout: Number(value("r-timeout")),
              checks: [{ type: "output", output: value("r-output"), equals: loose(value("r-equals")) }],
            },
            strategy: {
              canary: Number(value("r-canary")),
              batch_size: Number(value("r-batch")),
              max_failures: Number(value("r-failures")),
            },
          };
        } catch (err) {
          replace(out, errorBox(err));
          return;
        }
        if (!(await confirm("Start the rollout", h("p", {}, "Update every stack named " + body.selector.stack_name + " with " + JSON.stringify(body.update.parameters) + ", batch by batch?")))) return;
        try {
          const made = (await v1("POST", "/rollouts", body)).rollout;
          location.hash = rolloutHref(made.id);
        } catch (err) {
          replace(out, errorBox(err));
        }
      },
    },
    h("h2", {}, "Start a rollout"),
    field("r-name", "Name", { required: true }),
    field("r-stacks", "Stacks (name, * and ? match any)", { required: true, placeholder: "app-*" }),
    h("label", {}, "New parameters", h("textarea", { id: "r-params", rows: 2, spellcheck: "false", placeholder: "name=value, one a line", required: true })),
    h("fieldset", {}, h("legend", {}, "Verify each stack: an output's value"),
      field("r-output", "Output", { required: true, placeholder: "healthy" }),
      field("r-equals", "Equals", { required: true, placeholder: "yes" }),
      number("r-timeout", "Timeout (s)", 60, 1)),
    h("fieldset", {}, h("legend", {}, "Strategy"),
      number("r-canary", "Canary stacks", 1, 0),
      number("r-batch", "Batch size", 5, 1),
      number("r-failures", "Failures allowed", 0, 0)),
    h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", id: "r-submit" }, "Start rollout")),
    out,
  );
  return form;
}

export function rolloutsPage(main) {
  return listPage(main, {
    id: "rollout",
    title: "Rollouts",
    newLabel: "Start a rollout…",
    form: startForm,
    page: PAGE,
    fetch: async () => (await get("/rollouts?limit=" + PAGE)).rollouts || [],
    empty: "No rollouts in project " + session.project + ".",
    busy: (rollouts) => rollouts.some((r) => !finished(r.status)),
    draw: (rollouts) =>
      h(
        "table",
        { class: "rollouts" },
        h("thead", {}, h("tr", {}, ...["Name", "Status", "Targets", "Created"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, rollouts.map((r) =>
          h("tr", { "data-rollout": r.id, "data-status": r.status },
            h("td", {}, h("a", { href: rolloutHref(r.id) }, r.name || r.id)),
            h("td", {}, badge(r.status)),
            h("td", {}, countsText(r.counts)),
            h("td", {}, when(r.created_at))))),
      ),
  });
}

function batches(targets) {
  const groups = new Map();
  for (const t of targets || []) {
    if (!groups.has(t.batch)) groups.set(t.batch, []);
    groups.get(t.batch).push(t);
  }
  return [...groups.entries()].sort((a, b) => a[0] - b[0]);
}

// "waiting", "running" or "done", said in words beside the counts.
function batchState(targets) {
  if (targets.every((t) => targetDone(t.status))) return "done";
  if (targets.every((t) => t.status === initial("rollout_target"))) return "waiting";
  return "running";
}

function batchSection(batch, targets) {
  const n = (status) => targets.filter((t) => t.status === status).length;
  const state = batchState(targets);
  return h(
    "section",
    { class: "batch", "data-batch": batch, "data-state": state, "aria-label": "Batch " + batch },
    h("h2", {}, (batch === 0 ? "Batch 0" : "Batch " + batch) + " — " + state + " (" + n("SUCCEEDED") + "/" + targets.length + " succeeded" + (n("ROLLED_BACK") + n("FAILED") ? ", " + (n("ROLLED_BACK") + n("FAILED")) + " failed" : "") + ")"),
    h("table", {},
      h("thead", {}, h("tr", {}, ...["Stack", "Status", "Reason", "Started", "Finished"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, targets.map((t) =>
        h("tr", { "data-target": t.stack_name, "data-status": t.status },
          h("td", {}, h("a", { href: stackHref(session.project, t.stack_name, t.stack_id) }, t.stack_name)),
          h("td", {}, badge(t.status)),
          h("td", { class: "reason" }, t.status_reason || ""),
          h("td", {}, when(t.started_at)),
          h("td", {}, when(t.finished_at)))))),
  );
}

const ACTIONS = {
  pause: ["Pause", "No new batch starts until the rollout is resumed; the running one finishes."],
  resume: ["Resume", "The next batches start again."],
  cancel: ["Cancel", "No new batch starts; the stacks not started yet are skipped."],
  rollback: ["Roll back", "Every stack this rollout updated successfully goes back to what it was before."],
};

export function rolloutPage(main, id) {
  const path = "/rollouts/" + encodeURIComponent(id);
  const headEl = h("div", { id: "rollout" }, h("p", { class: "muted" }, "Loading…"));
  const actionsEl = h("div", { class: "actions", id: "rollout-actions" });
  const batchesEl = h("div", { id: "batches" });
  const messageEl = h("div", { id: "message", "aria-live": "assertive" });
  replace(main, h("p", {}, h("a", { href: "#/" + encodeURIComponent(session.project) + "/rollouts" }, "« Rollouts")), headEl, actionsEl, messageEl, batchesEl);

  async function act(action) {
    const [label, detail] = ACTIONS[action];
    if (!(await confirm(label + " the rollout", h("p", {}, detail)))) return;
    try {
      await v1("POST", path + "/actions", { [action]: null });
      replace(messageEl, h("p", { class: "ok", role: "status" }, label + ": accepted."));
    } catch (err) {
      replace(messageEl, errorBox(err));
    }
    poller.run();
  }

  const poller = new Poller(async () => {
    let r;
    try {
      r = (await get(path)).rollout;
    } catch (err) {
      replace(headEl, errorBox(err));
      return err.status !== 404;
    }
    const running = !finished(r.status);
    const enabled = {
      pause: mayFollow("rollout", r.status, "PAUSED"),
      resume: r.status === "PAUSED",
      cancel: running,
      rollback: true,
    };
    redraw(headEl, [r.name, r.status, r.status_reason, r.counts, r.strategy, r.finished_at], () => [
      h("div", { class: "title" }, h("h1", {}, r.name || r.id), h("span", { id: "rollout-status" }, badge(r.status))),
      h("p", { class: "reason", id: "rollout-reason" }, r.status_reason || ""),
      h("dl", { class: "kv" },
        h("dt", {}, "Targets"), h("dd", { id: "rollout-counts" }, countsText(r.counts)),
        h("dt", {}, "Strategy"), h("dd", {}, "canary " + r.strategy.canary + ", batches of " + r.strategy.batch_size + ", " + r.strategy.max_failures + " failure(s) allowed"),
        h("dt", {}, "Started"), h("dd", {}, when(r.created_at)),
        h("dt", {}, "Finished"), h("dd", {}, when(r.finished_at))),
    ]);
    redraw(actionsEl, enabled, () =>
      Object.entries(ACTIONS).map(([action, [label]]) =>
        h("button", { type: "button", id: "ro-" + action, disabled: !enabled[action], onclick: () => act(action) }, label)),
    );
    redraw(batchesEl, r.targets, () => batches(r.targets).map(([batch, targets]) => batchSection(batch, targets)));
    return running || (r.targets || []).some((t) => !targetDone(t.status));
  });
  poller.run();
  return poller;
}
