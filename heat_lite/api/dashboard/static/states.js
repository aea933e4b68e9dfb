// The server's state vocabularies (GET /v1/states.json, made from
// heat_lite/common/states.py): every kind of status with its named
// groups and transitions. Loaded once before the first page is drawn;
// the pages read their states here instead of keeping copies.

export const states = {};

export async function loadStates() {
  const resp = await fetch("../v1/states.json", { headers: { Accept: "application/json" }, credentials: "same-origin" });
  if (!resp.ok) throw new Error("The server's states (/v1/states.json) could not be read: " + resp.status);
  Object.assign(states, await resp.json());
}

// The states of group `name` of `vocabulary` ("rollout", "FINISHED").
export function group(vocabulary, name) {
  return (states[vocabulary] && states[vocabulary].groups[name]) || [];
}

// The first state of `vocabulary` (where each of its rows starts).
export function initial(vocabulary) {
  return states[vocabulary] ? states[vocabulary].states[0] : null;
}

// Whether `next` may follow `current` in `vocabulary`.
export function mayFollow(vocabulary, current, next) {
  const v = states[vocabulary];
  return Boolean(v && (v.transitions[current] || []).includes(next));
}
