// The public REST API, as every client uses it: /v1/{project}/...
// (relative to /dashboard/, so a prefix the API is mounted under holds),
// plus the page's own session calls under /dashboard/api/.
//
// No token is ever handled here: in keystone mode the browser sends the
// HttpOnly session cookie and the server puts the token back; this module
// only adds the CSRF header to state-changing requests.

export const session = { auth: null, csrf: null, who: null, project: null };

const listeners = { connection: [], unauthorized: [] };

export function on(event, fn) {
  listeners[event].push(fn);
}

function emit(event, value) {
  for (const fn of listeners[event]) fn(value);
}

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

async function send(method, url, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (session.csrf && !["GET", "HEAD"].includes(method)) {
    headers["X-CSRF-Token"] = session.csrf;
  }
  let resp;
  try {
    resp = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      // Revalidate every time: the API's ETags make an unchanged answer
      // an empty 304, which the browser turns back into the cached 200.
      cache: "no-cache",
    });
  } catch (err) {
    emit("connection", false);
    throw new ApiError(0, "The server cannot be reached (connection lost).");
  }
  emit("connection", true);
  if (resp.status === 204) return null;
  const text = await resp.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (err) {
    data = null;
  }
  if (!resp.ok) {
    const message =
      (data && data.error && data.error.message) ||
      (data && data.explanation) ||
      resp.statusText;
    if (resp.status === 401 && session.auth === "keystone") {
      emit("unauthorized", message);
    }
    throw new ApiError(resp.status, message, data);
  }
  return data;
}

// /v1/{project}{path}
export function v1(method, path, body) {
  return send(method, "../v1/" + encodeURIComponent(session.project) + path, body);
}

export const get = (path) => v1("GET", path);

export function own(method, name, body) {
  return send(method, "api/" + name, body);
}

export function stackPath(name, id) {
  return "/stacks/" + encodeURIComponent(name) + "/" + encodeURIComponent(id);
}

// {name, id} of a stack link ("…/stacks/<name>/<id>"), or null.
export function parseStackLink(href) {
  const m = /\/stacks\/([^/]+)\/([^/?#]+)/.exec(href || "");
  return m ? { name: decodeURIComponent(m[1]), id: decodeURIComponent(m[2]) } : null;
}

export function link(item, rel) {
  const found = (item.links || []).find((l) => l.rel === rel);
  return found ? found.href : null;
}

// Whether this API offers `path` (rollouts, promotions): only a 404 says
// it does not (a 403 or a lost connection is shown on the page itself).
export async function offered(path) {
  try {
    await get(path);
    return true;
  } catch (err) {
    return err.status !== 404;
  }
}
