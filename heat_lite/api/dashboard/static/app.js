// The dashboard's entry point: the session (noauth: a project chosen in
// the page; keystone: the login form), the hash router and the header.
//
// Routes: #/<project>/stacks[?name=&status=&tag=&marker=],
// #/<project>/stacks/<name>/<id>, #/<project>/new,
// #/<project>/rollouts[/<id>], #/<project>/promotions[/<id>],
// #/<project>/apps[/<app>[/builds/<id>]], #/login, #/ (start).

import { on, own, session } from "./api.js";
import * as apps from "./apps.js";
import { errorBox, h, replace } from "./dom.js";
import * as promotions from "./promotions.js";
import * as rollouts from "./rollouts.js";
import { loadStates } from "./states.js";
import { stackPage } from "./stack.js";
import { createPage, stacksPage } from "./stacks.js";

const main = document.getElementById("main");
let current = null; // the page's poller
let probedFor = null; // the project whose optional sections were probed

function stop() {
  if (current) current.stop();
  current = null;
}

function projectHref(project, page) {
  return "#/" + encodeURIComponent(project) + "/" + page;
}

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, query] = raw.split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { parts, query: Object.fromEntries(new URLSearchParams(query || "")) };
}

function drawWho() {
  const who = document.getElementById("who");
  if (session.auth === "noauth") {
    const input = h("input", { id: "project-input", "aria-label": "Project", value: session.project || "", size: 14 });
    replace(
      who,
      h("form", { class: "project", onsubmit: (ev) => {
        ev.preventDefault();
        const value = input.value.trim();
        if (value) location.hash = projectHref(value, "stacks");
      } },
        h("label", { for: "project-input" }, "Project "), input,
        h("button", { type: "submit", id: "project-switch" }, "Switch")),
    );
  } else if (session.who) {
    replace(
      who,
      h("span", { id: "whoami" }, session.who.user.name + " @ " + session.who.project.name),
      " ",
      h("button", { type: "button", id: "logout", onclick: logout }, "Log out"),
    );
  } else {
    replace(who);
  }
}

async function logout() {
  try {
    await own("POST", "logout");
  } catch (err) {
    // The cookie is cleared by the answer; a failure leaves it to expire.
  }
  session.who = null;
  session.csrf = null;
  session.project = null;
  location.hash = "#/login";
  route();
}

function loginPage() {
  const field = (id, label, type, value) =>
    h("label", {}, label, h("input", { id, name: id, type, value: value || "", required: id !== "domain", autocomplete: type === "password" ? "current-password" : "on" }));
  const out = h("div", { "aria-live": "assertive" });
  const form = h(
    "form",
    { class: "login", onsubmit: async (ev) => {
      ev.preventDefault();
      const data = Object.fromEntries(new FormData(form));
      try {
        const who = await own("POST", "login", data);
        setLoggedIn(who);
        location.hash = projectHref(session.project, "stacks");
      } catch (err) {
        replace(out, errorBox(err));
      }
    } },
    h("h1", {}, "Log in"),
    field("user", "User", "text"),
    field("password", "Password", "password"),
    field("project", "Project", "text"),
    field("domain", "Domain", "text", "Default"),
    h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", id: "login-submit" }, "Log in")),
    out,
  );
  replace(main, form);
  form.querySelector("input").focus();
}

function projectPage() {
  const input = h("input", { id: "start-project", required: true, value: "demo" });
  replace(
    main,
    h("form", { class: "login", onsubmit: (ev) => {
      ev.preventDefault();
      location.hash = projectHref(input.value.trim(), "stacks");
    } },
      h("h1", {}, "Choose a project"),
      h("p", { class: "muted" }, "This heat_lite runs without authentication (noauth): the project is part of every API URL."),
      h("label", {}, "Project", input),
      h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary" }, "Open"))),
  );
}

function setLoggedIn(who) {
  session.who = who;
  session.csrf = who.csrf_token;
  session.project = who.project.id;
}

// The fleet sections are links only where the API offers them (an API
// without them answers 404), probed once per project.
async function probeSections() {
  if (probedFor === session.project) return;
  probedFor = session.project;
  const sections = [
    ["nav-rollouts", "rollouts", rollouts.available],
    ["nav-promotions", "promotions", promotions.available],
    ["nav-apps", "apps", apps.available],
  ];
  await Promise.all(sections.map(async ([id, page, available]) => {
    const link = document.getElementById(id);
    link.hidden = true;
    if (await available()) {
      link.href = projectHref(session.project, page);
      link.hidden = false;
    }
  }));
}

function route() {
  stop();
  const { parts, query } = parseHash();
  if (session.auth === "keystone" && !session.who) {
    document.getElementById("nav").hidden = true;
    drawWho();
    // A hash change while the form is up keeps what was typed into it.
    if (!main.querySelector("form.login #user")) loginPage();
    return;
  }
  if (!parts.length || parts[0] === "login") {
    if (session.auth === "keystone") location.hash = projectHref(session.project, "stacks");
    else if (session.project) location.hash = projectHref(session.project, "stacks");
    else projectPage();
    return;
  }
  session.project = parts[0];
  const nav = document.getElementById("nav");
  nav.hidden = false;
  document.getElementById("nav-stacks").href = projectHref(session.project, "stacks");
  drawWho();
  probeSections();
  const [, page, ...rest] = parts;
  if (page === "stacks" && rest.length >= 2) current = stackPage(main, rest[0], rest[1]);
  else if (page === "new") current = createPage(main);
  else if (page === "rollouts" && rest.length) current = rollouts.rolloutPage(main, rest[0]);
  else if (page === "rollouts") current = rollouts.rolloutsPage(main);
  else if (page === "promotions" && rest.length) current = promotions.promotionPage(main, rest[0]);
  else if (page === "promotions") current = promotions.promotionsPage(main);
  else if (page === "apps" && rest.length >= 3 && rest[1] === "builds") current = apps.buildPage(main, rest[0], rest[2]);
  else if (page === "apps" && rest.length) current = apps.appPage(main, rest[0]);
  else if (page === "apps") current = apps.appsPage(main);
  else current = stacksPage(main, query);
  main.focus({ preventScroll: true });
}

function connection(ok) {
  const banner = document.getElementById("connection");
  if (ok) {
    banner.hidden = true;
  } else {
    replace(banner, "Connection to the server lost; retrying…");
    banner.hidden = false;
  }
}

async function start() {
  on("connection", connection);
  on("unauthorized", () => {
    // The token expired or was revoked: back to the login form.
    session.who = null;
    session.csrf = null;
    route();
  });
  let info;
  try {
    info = await own("GET", "session");
    await loadStates();
  } catch (err) {
    replace(main, errorBox(err));
    return;
  }
  session.auth = info.auth;
  if (info.auth === "keystone" && info.logged_in) setLoggedIn(info);
  window.addEventListener("hashchange", route);
  route();
}

start();
