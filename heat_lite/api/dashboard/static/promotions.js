// Promotions (/v1/{project}/promotions): the list with a form to promote
// a stack into another (created or updated in place, behind an optional
// gate), and one promotion's progress, provenance and one-step undo. The
// section is shown only when the API offers promotions (not a 404).

import { get, offered, session, v1 } from "./api.js";
import { badge, confirm, errorBox, h, listPage, redraw, replace, Poller, when } from "./dom.js";
import { loose, parseParams, stackHref } from "./stacks.js";
import { group } from "./states.js";

// The server's group (states.js).
const finished = (status) => group("promotion", "FINISHED").includes(status);

export const available = () => offered("/promotions");

// The newest this many are listed (the API pages with limit/marker).
const PAGE = 100;

export function promotionHref(id) {
  return "#/" + encodeURIComponent(session.project) + "/promotions/" + encodeURIComponent(id);
}

// A stack of a promotion ({stack_id, stack_name, project}): a link when
// it is in this project, its name and project otherwise.
function stackRef(ref) {
  if (!ref || !ref.stack_name) return "—";
  if (ref.stack_id && ref.project === session.project) {
    return h("a", { href: stackHref(session.project, ref.stack_name, ref.stack_id) }, ref.stack_name);
  }
  return h("span", {}, ref.stack_name + (ref.project ? " (project " + ref.project + ")" : ""));
}

function promoteForm() {
  const field = (id, label, attrs) => h("label", {}, label, h("input", { id, autocomplete: "off", ...attrs }));
  const out = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    {
      class: "create",
      id: "promote-form",
      onsubmit: async (ev) => {
        ev.preventDefault();
        const value = (id) => form.querySelector("#" + id).value.trim();
        let body;
        try {
          body = {
            source: { stack: value("p-source") },
            target: { stack: value("p-target") },
            parameters: parseParams(form.querySelector("#p-params").value),
          };
        } catch (err) {
          replace(out, errorBox(err));
          return;
        }
        if (value("p-project")) body.target.project = value("p-project");
        if (value("p-output")) {
          body.verify = {
            timeout: Number(value("p-timeout")),
            checks: [{ type: "output", output: value("p-output"), equals: loose(value("p-equals")) }],
          };
        }
        const where = body.target.stack + (body.target.project ? " in project " + body.target.project : "");
        if (!(await confirm("Promote the stack", h("p", {}, "Put " + body.source.stack + "'s last complete template on " + where + (body.verify ? ", checked by its " + body.verify.checks[0].output + " output" : "") + "?")))) return;
        try {
          const made = (await v1("POST", "/promotions", body)).promotion;
          location.hash = promotionHref(made.id);
        } catch (err) {
          replace(out, errorBox(err));
        }
      },
    },
    h("h2", {}, "Promote a stack"),
    field("p-source", "Source stack (name or ID)", { required: true }),
    field("p-target", "Target stack (created if missing)", { required: true }),
    field("p-project", "Target project (empty: this one)", {}),
    h("label", {}, "Parameters laid over the source's", h("textarea", { id: "p-params", rows: 2, spellcheck: "false", placeholder: "name=value, one a line" })),
    h("fieldset", {}, h("legend", {}, "Gate (optional): an output's value on the target"),
      field("p-output", "Output", { placeholder: "healthy" }),
      field("p-equals", "Equals", { placeholder: "yes" }),
      h("label", {}, "Timeout (s)", h("input", { id: "p-timeout", type: "number", min: 1, step: 1, value: 60 }))),
    h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", id: "p-submit" }, "Promote")),
    out,
  );
  return form;
}

export function promotionsPage(main) {
  return listPage(main, {
    id: "promotion",
    title: "Promotions",
    newLabel: "Promote a stack…",
    form: promoteForm,
    page: PAGE,
    fetch: async () => (await get("/promotions?limit=" + PAGE)).promotions || [],
    empty: "No promotions in project " + session.project + ".",
    busy: (promotions) => promotions.some((p) => !finished(p.status)),
    draw: (promotions) =>
      h(
        "table",
        { class: "promotions" },
        h("thead", {}, h("tr", {}, ...["Started", "Source", "Target", "Status", "Reason", "By"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, promotions.map((p) =>
          h("tr", { "data-promotion": p.id, "data-status": p.status },
            h("td", {}, h("a", { href: promotionHref(p.id) }, when(p.created_at))),
            h("td", {}, stackRef(p.source)),
            h("td", {}, stackRef(p.target)),
            h("td", {}, badge(p.status)),
            h("td", { class: "reason" }, p.status_reason || ""),
            h("td", {}, p.user || "—")))),
      ),
  });
}

function format(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

export function promotionPage(main, id) {
  const path = "/promotions/" + encodeURIComponent(id);
  const bodyEl = h("div", { id: "promotion" }, h("p", { class: "muted" }, "Loading…"));
  const actionsEl = h("div", { class: "actions", id: "promotion-actions" });
  const messageEl = h("div", { id: "message", "aria-live": "assertive" });
  replace(main, h("p", {}, h("a", { href: "#/" + encodeURIComponent(session.project) + "/promotions" }, "« Promotions")), bodyEl, actionsEl, messageEl);

  async function rollback() {
    if (!(await confirm("Roll the promotion back", h("p", {}, "Put the target back on the template, files and environment it had before this promotion?")))) return;
    try {
      await v1("POST", path + "/actions", { rollback: null });
      replace(messageEl, h("p", { class: "ok", role: "status" }, "Roll back: accepted."));
    } catch (err) {
      replace(messageEl, errorBox(err));
    }
    poller.run();
  }

  const poller = new Poller(async () => {
    let p;
    try {
      p = (await get(path)).promotion;
    } catch (err) {
      replace(bodyEl, errorBox(err));
      return err.status !== 404;
    }
    const params = p.parameters || {};
    redraw(bodyEl, p, () => [
      h("div", { class: "title" }, h("h1", {}, "Promotion"), h("span", { id: "promotion-status" }, badge(p.status))),
      h("p", { class: "reason", id: "promotion-reason" }, p.status_reason || ""),
      h("dl", { class: "kv" },
        h("dt", {}, "Source"), h("dd", { id: "promotion-source" }, stackRef(p.source)),
        h("dt", {}, "Template"), h("dd", {}, h("code", { id: "promotion-sha" }, (p.source && p.source.template_sha256) || "—")),
        h("dt", {}, "Target"), h("dd", { id: "promotion-target" }, stackRef(p.target), p.target && p.target.created ? " (created by it)" : ""),
        h("dt", {}, "Parameters"), h("dd", {}, Object.keys(params).sort().map((k) => k + "=" + format(params[k])).join(", ") || "—"),
        h("dt", {}, "Gate"), h("dd", {}, p.verify ? (p.verify.checks || []).map((c) => c.type === "output" ? c.output + " = " + format(c.equals) : c.type).join(", ") : "none"),
        h("dt", {}, "By"), h("dd", {}, p.user || "—"),
        h("dt", {}, "Started"), h("dd", {}, when(p.created_at)),
        h("dt", {}, "Finished"), h("dd", {}, when(p.finished_at))),
    ]);
    // Only the newest promotion of a target rolls back: one overtaken by
    // a newer promotion says which, and offers no button that would 409.
    const undoable = p.status === "COMPLETE" && !p.rolled_back && !p.overtaken_by;
    redraw(actionsEl, [undoable, p.overtaken_by], () => [
      h("button", { type: "button", id: "pr-rollback", disabled: !undoable, onclick: rollback }, "Roll back"),
      p.overtaken_by
        ? h("p", { class: "muted", id: "pr-overtaken" }, "Promotion ",
            h("a", { href: promotionHref(p.overtaken_by) }, p.overtaken_by.slice(0, 8)),
            " changed the target since: only the newest promotion of a stack rolls back.")
        : null,
    ]);
    return !finished(p.status);
  });
  poller.run();
  return poller;
}

// The stack header's line about where the stack was promoted from.
export function promotedFrom(stack) {
  const from = stack.promoted_from;
  if (!from) return null;
  return h(
    "p",
    { id: "promoted-from" },
    "Promoted from ",
    stackRef(from),
    " (",
    h("a", { href: promotionHref(from.promotion_id) }, "promotion"),
    ", ",
    when(from.promoted_at),
    ")",
  );
}
