// Fleet rollouts (/v1/{project}/rollouts): the list, and one rollout's
// progress batch by batch and target by target, with its actions. The
// section is shown only when the API offers rollouts (not a 404).

import { get, session, v1 } from "./api.js";
import { badge, confirm, errorBox, h, replace, Poller, when } from "./dom.js";
import { stackHref } from "./stacks.js";

const FINISHED = ["COMPLETE", "FAILED", "CANCELLED"];

// Whether this API serves rollouts.
export async function available() {
  try {
    await get("/rollouts");
    return true;
  } catch (err) {
    return false;
  }
}

function rolloutHref(id) {
  return "#/" + encodeURIComponent(session.project) + "/rollouts/" + encodeURIComponent(id);
}

function countsText(counts) {
  const keys = Object.keys(counts || {}).sort();
  return keys.map((k) => k + ": " + counts[k]).join(" · ") || "—";
}

export function rolloutsPage(main) {
  const listEl = h("div", { id: "rollout-list" }, h("p", { class: "muted" }, "Loading…"));
  replace(main, h("h1", {}, "Rollouts"), listEl);
  const poller = new Poller(async () => {
    let rollouts;
    try {
      rollouts = (await get("/rollouts")).rollouts || [];
    } catch (err) {
      replace(listEl, errorBox(err));
      return false;
    }
    if (!rollouts.length) {
      replace(listEl, h("p", { class: "empty" }, "No rollouts in project " + session.project + "."));
      return false;
    }
    replace(
      listEl,
      h(
        "table",
        { class: "rollouts" },
        h("thead", {}, h("tr", {}, ...["Name", "Status", "Progress", "Created"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, rollouts.map((r) =>
          h("tr", { "data-rollout": r.id },
            h("td", {}, h("a", { href: rolloutHref(r.id) }, r.name || r.id)),
            h("td", {}, badge(r.status)),
            h("td", {}, countsText(r.counts)),
            h("td", {}, when(r.created_at))))),
      ),
    );
    return rollouts.some((r) => !FINISHED.includes(r.status));
  });
  poller.run();
  return poller;
}

function batches(targets) {
  const groups = new Map();
  for (const t of targets || []) {
    if (!groups.has(t.batch)) groups.set(t.batch, []);
    groups.get(t.batch).push(t);
  }
  return [...groups.entries()].sort((a, b) => a[0] - b[0]);
}

export function rolloutPage(main, id) {
  const path = "/rollouts/" + encodeURIComponent(id);
  const bodyEl = h("div", { id: "rollout" }, h("p", { class: "muted" }, "Loading…"));
  const messageEl = h("div", { "aria-live": "assertive" });
  replace(main, h("p", {}, h("a", { href: "#/" + encodeURIComponent(session.project) + "/rollouts" }, "« Rollouts")), messageEl, bodyEl);

  async function act(action, title) {
    if (!(await confirm(title, h("p", {}, title + "?")))) return;
    try {
      await v1("POST", path + "/actions", { [action]: null });
      replace(messageEl, h("p", { class: "ok", role: "status" }, title + ": accepted."));
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
      replace(bodyEl, errorBox(err));
      return err.status !== 404;
    }
    const running = !FINISHED.includes(r.status);
    const button = (action, label, enabled) =>
      h("button", { type: "button", id: "ro-" + action, disabled: !enabled, onclick: () => act(action, label) }, label);
    replace(
      bodyEl,
      h("div", { class: "title" }, h("h1", {}, r.name || r.id), badge(r.status)),
      h("p", { class: "reason" }, r.status_reason || ""),
      h("p", { class: "counts" }, countsText(r.counts)),
      h("div", { class: "actions" },
        button("pause", "Pause", r.status === "IN_PROGRESS"),
        button("resume", "Resume", r.status === "PAUSED"),
        button("cancel", "Cancel", running),
        button("rollback", "Roll back", true)),
      batches(r.targets).map(([batch, targets]) =>
        h("section", { class: "batch", "data-batch": batch },
          h("h2", {}, "Batch " + batch + " (" + targets.filter((t) => t.status === "SUCCEEDED").length + "/" + targets.length + " succeeded)"),
          h("table", {},
            h("thead", {}, h("tr", {}, ...["Stack", "Status", "Reason", "Started", "Finished"].map((t) => h("th", { scope: "col" }, t)))),
            h("tbody", {}, targets.map((t) =>
              h("tr", { "data-target": t.stack_id },
                h("td", {}, h("a", { href: stackHref(session.project, t.stack_name, t.stack_id) }, t.stack_name)),
                h("td", {}, badge(t.status)),
                h("td", { class: "reason" }, t.status_reason || ""),
                h("td", {}, when(t.started_at)),
                h("td", {}, when(t.finished_at)))))))),
    );
    return running;
  });
  poller.run();
  return poller;
}
