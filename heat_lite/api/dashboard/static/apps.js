// Apps (/v1/{project}/apps): each app with the newest build of each of
// its branches, live; one app's builds branch by branch; one build's
// chain (push, builder, image, template, stack, verification) and its
// log as it grows, with a cancel. The section is shown only when the API
// offers apps (not a 404).

import { get, offered, session, v1 } from "./api.js";
import { badge, confirm, errorBox, h, ident, redraw, replace, Poller, when, whenShort } from "./dom.js";
import { stackHref } from "./stacks.js";
import { group } from "./states.js";

// The server's group (states.js): a build still on its way.
const active = (status) => group("build", "ACTIVE").includes(status);
// Builds fetched per app for its branches' view.
const PAGE = 100;
// Builds shown per branch on an app's page.
const PER_BRANCH = 10;

export const available = () => offered("/apps");

const enc = encodeURIComponent;
const appPath = (app) => "/apps/" + enc(app);

export function appsHref(app, build) {
  let href = "#/" + enc(session.project) + "/apps";
  if (app) href += "/" + enc(app);
  if (build) href += "/builds/" + enc(build);
  return href;
}

// {branch: [builds, newest first]}, branches in the order of their
// newest build.
function byBranch(builds) {
  const found = {};
  for (const b of builds) (found[b.branch] = found[b.branch] || []).push(b);
  return found;
}

async function appsWithBuilds() {
  const apps = (await get("/apps")).apps || [];
  return Promise.all(apps.map(async (app) => ({
    app,
    builds: (await get(appPath(app.id) + "/builds?limit=" + PAGE)).builds || [],
  })));
}

function commit(b) {
  return h("code", { class: "commit", title: b.commit }, b.commit.slice(0, 12));
}

export function appsPage(main) {
  const listEl = h("div", { id: "app-list" }, h("p", { class: "muted" }, "Loading…"));
  replace(main, h("div", { class: "title" }, h("h1", {}, "Apps")), listEl);
  const poller = new Poller(async () => {
    let items;
    try {
      items = await appsWithBuilds();
    } catch (err) {
      replace(listEl, errorBox(err));
      return false;
    }
    if (!items.length) {
      replace(listEl, h("p", { class: "empty" }, "No apps in project " + session.project + "."));
      return false;
    }
    redraw(listEl, items, () =>
      h("table", { class: "apps" },
        h("thead", {}, h("tr", {}, ...["App", "Branch", "Newest build", "Commit", "Pushed"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, items.map(({ app, builds }) => {
          const branches = Object.entries(byBranch(builds));
          const name = h("a", { href: appsHref(app.name) }, app.name);
          if (!branches.length) {
            return h("tr", { "data-app": app.name }, h("td", {}, name), h("td", { colspan: 4, class: "muted" }, "No builds yet"));
          }
          return branches.map(([branch, list], i) =>
            h("tr", { "data-app": app.name, "data-branch": branch, "data-status": list[0].status },
              h("td", {}, i === 0 ? name : ""),
              h("td", {}, branch),
              h("td", {}, h("a", { href: appsHref(app.name, list[0].id) }, badge(list[0].status))),
              h("td", {}, commit(list[0])),
              h("td", {}, whenShort(list[0].created_at))));
        }))));
    return items.some(({ builds }) => builds.some((b) => active(b.status)));
  });
  poller.run();
  return poller;
}

export function appPage(main, app) {
  const headEl = h("div", { id: "app" }, h("p", { class: "muted" }, "Loading…"));
  const buildsEl = h("div", { id: "app-builds" });
  const imagesEl = h("div", { id: "app-images" });
  replace(main, h("p", {}, h("a", { href: appsHref() }, "« Apps")), headEl, buildsEl, imagesEl);
  const poller = new Poller(async () => {
    let found, builds, images;
    try {
      found = (await get(appPath(app))).app;
      builds = (await get(appPath(app) + "/builds?limit=" + PAGE)).builds || [];
      images = await appImages(app);
    } catch (err) {
      replace(headEl, errorBox(err));
      return err.status !== 404;
    }
    redraw(imagesEl, images, () => imagesTable(images));
    redraw(headEl, found, () => [
      h("div", { class: "title" }, h("h1", {}, found.name)),
      h("dl", { class: "kv" },
        h("dt", {}, "Source"), h("dd", {}, h("code", {}, found.source.url)),
        h("dt", {}, "Branches"), h("dd", {}, found.source.branches.join(", ")),
        h("dt", {}, "Builder"), h("dd", {}, found.builder.name),
        h("dt", {}, "Image parameter"), h("dd", {}, found.image_parameter),
        h("dt", {}, "Webhook"), h("dd", {}, found.webhook ? "signed pushes accepted" : "no secret: pushes with a token only")),
    ]);
    const branches = Object.entries(byBranch(builds));
    redraw(buildsEl, builds, () => branches.length
      ? branches.map(([branch, list]) => h("section", { class: "branch", "data-branch": branch },
        h("h2", {}, branch),
        h("table", { class: "builds" },
          h("thead", {}, h("tr", {}, ...["Pushed", "Commit", "Status", "Reason", "Finished"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, list.slice(0, PER_BRANCH).map((b) =>
            h("tr", { "data-build": b.id, "data-status": b.status },
              h("td", {}, h("a", { href: appsHref(app, b.id) }, whenShort(b.created_at))),
              h("td", {}, commit(b)),
              h("td", {}, badge(b.status)),
              h("td", { class: "reason" }, b.status_reason || ""),
              h("td", {}, whenShort(b.finished_at))))))))
      : h("p", { class: "empty" }, "No builds yet: push to a branch the app follows."));
    return builds.some((b) => active(b.status));
  });
  poller.run();
  return poller;
}

// The images the app's builds made (image retention, GET /images?app=):
// null where the API offers no images.
async function appImages(app) {
  try {
    return (await get("/images?app=" + enc(app) + "&limit=" + PAGE)).images || [];
  } catch (err) {
    if (err.status === 404) return null;
    throw err;
  }
}

// One line for what keeps an image (as `openstack app images` says it).
function keptBy(reason) {
  if (reason.kind === "record") return "record " + reason.name + " (" + reason.role + ") of stack " + reason.stack_id;
  if (reason.kind === "keep_last") return "keep_last (newest " + reason.rank + ")";
  return reason.kind + " " + reason.holder;
}

// Why an image stays, or since when nothing names it and when it goes.
function fate(image) {
  if (image.kept_by.length) return image.kept_by.map(keptBy).join("; ");
  if (image.state === "DELETED") return "deleted " + whenShort(image.deleted_at);
  const parts = ["unneeded since " + whenShort(image.unneeded_at || image.hidden_at)];
  const mode = image.retention.mode;
  if (image.goes_at) parts.push("goes " + whenShort(image.goes_at));
  else if (mode === "delete") parts.push("hidden, then deleted " + image.retention.grace + " s later");
  else parts.push(mode === "hide" ? "hidden and kept (policy hide)" : "kept (policy report)");
  if (image.last_error) parts.push("Glance refused: " + image.last_error);
  return parts.join(", ");
}

function imagesTable(images) {
  if (images === null) return [];
  return [
    h("h2", {}, "Images"),
    images.length
      ? h("table", { class: "images" },
        h("thead", {}, h("tr", {}, ...["Image", "Branch", "State", "Why kept / when it goes"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, images.map((i) =>
          h("tr", { "data-image": i.id, "data-state": i.state },
            h("td", {}, ident(i.name || i.id)),
            h("td", {}, i.branch || ""),
            h("td", {}, badge(i.state)),
            h("td", { class: "why" }, fate(i))))))
      : h("p", { class: "empty" }, "No images yet."),
  ];
}

function verification(v) {
  if (!v) return "—";
  return [v.status || "", v.reason ? ": " + v.reason : ""].join("");
}

export function buildPage(main, app, id) {
  const path = appPath(app) + "/builds/" + enc(id);
  const bodyEl = h("div", { id: "build" }, h("p", { class: "muted" }, "Loading…"));
  const actionsEl = h("div", { class: "actions", id: "build-actions" });
  const messageEl = h("div", { id: "message", "aria-live": "assertive" });
  const logEl = h("pre", { id: "build-log", class: "log", tabindex: 0 });
  replace(main, h("p", {}, h("a", { href: appsHref(app) }, "« " + app)), bodyEl, actionsEl, messageEl, h("h2", {}, "Log"), logEl);
  let offset = 0;

  async function cancel() {
    if (!(await confirm("Cancel the build", h("p", {}, "Stop this build? A queued build never starts; a running one stops at its next step.")))) return;
    try {
      await v1("POST", path + "/actions", { cancel: null });
      replace(messageEl, h("p", { class: "ok", role: "status" }, "Cancel: accepted."));
    } catch (err) {
      replace(messageEl, errorBox(err));
    }
    poller.run();
  }

  // What the log gained since the last read (a page at a time).
  async function readLog() {
    for (;;) {
      const page = await get(path + "/log?offset=" + offset);
      if (page.next_offset === offset) return;
      logEl.append(page.log);
      offset = page.next_offset;
    }
  }

  const poller = new Poller(async () => {
    let b;
    try {
      b = (await get(path)).build;
      await readLog();
    } catch (err) {
      replace(bodyEl, errorBox(err));
      return err.status !== 404;
    }
    const stack = b.stack_id
      ? h("a", { href: stackHref(session.project, b.stack_name, b.stack_id) }, b.stack_name)
      : (b.stack_name || "—") + " (not yet)";
    redraw(bodyEl, { ...b, log_tail: null }, () => [
      h("div", { class: "title" }, h("h1", {}, "Build of " + b.branch), h("span", { id: "build-status" }, badge(b.status))),
      h("p", { class: "reason", id: "build-reason" }, b.status_reason || ""),
      h("dl", { class: "kv" },
        h("dt", {}, "Push"), h("dd", { id: "build-push" }, b.ref, " at ", h("code", { id: "build-commit" }, b.commit), " (" + b.source + (b.delivery_id ? ", delivery " + b.delivery_id : "") + ")"),
        h("dt", {}, "Builder"), h("dd", {}, b.builder || "—"),
        h("dt", {}, "Image"), h("dd", { id: "build-image" }, ident(b.image_id)),
        h("dt", {}, "Template"), h("dd", {}, b.template_id === null ? "—" : String(b.template_id)),
        h("dt", {}, "Stack"), h("dd", { id: "build-stack" }, stack),
        h("dt", {}, "Traversal"), h("dd", {}, ident(b.traversal)),
        h("dt", {}, "Verification"), h("dd", { id: "build-verification" }, verification(b.verification)),
        h("dt", {}, "Pushed"), h("dd", {}, when(b.created_at)),
        h("dt", {}, "Started"), h("dd", {}, when(b.started_at)),
        h("dt", {}, "Finished"), h("dd", {}, when(b.finished_at))),
    ]);
    const cancellable = active(b.status) && !b.cancel_requested;
    redraw(actionsEl, cancellable, () =>
      h("button", { type: "button", id: "build-cancel", disabled: !cancellable, onclick: cancel }, "Cancel"));
    return active(b.status);
  });
  poller.run();
  return poller;
}
