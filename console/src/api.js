// The console's only way to the data: the public /v1 API with the token the user typed (kept in
// sessionStorage). Every error answer becomes an ApiError carrying the API's own code.

const TOKEN_KEY = "earshot.token";
const STORE_KEY = "earshot.store";

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export const session = {
  get token() {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  },
  set token(t) {
    sessionStorage.setItem(TOKEN_KEY, t);
  },
  get store() {
    return sessionStorage.getItem(STORE_KEY) || "";
  },
  set store(s) {
    sessionStorage.setItem(STORE_KEY, s);
  },
};

/** One request; JSON in and out (text for /metrics). Throws ApiError on any non-2xx answer. */
export async function call(method, path, body) {
  const headers = { accept: "application/json" };
  if (session.token) headers.authorization = `Bearer ${session.token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await resp.text();
  if (!resp.ok) {
    let err = {};
    try {
      err = JSON.parse(text).error || {};
    } catch {
      err = {};
    }
    throw new ApiError(resp.status, err.code || `http_${resp.status}`, err.message || resp.statusText, err.details);
  }
  if ((resp.headers.get("content-type") || "").includes("json")) return JSON.parse(text);
  return text;
}

/** A path under the current store, each segment escaped. */
export function storePath(...segments) {
  return ["", "v1", "stores", session.store, ...segments].map(encodeURIComponent).join("/");
}

export const get = (p) => call("GET", p);
export const post = (p, b) => call("POST", p, b);
export const del = (p) => call("DELETE", p);

/** Every page of a list (at most `max` elements, so a huge store cannot hang the page). */
export async function listAll(list, query = {}, max = 5000) {
  const out = [];
  let cursor;
  do {
    const q = new URLSearchParams({ ...query, limit: "1000" });
    if (cursor) q.set("cursor", cursor);
    const page = await get(`${storePath(list)}?${q}`);
    out.push(...(page.results || []));
    cursor = page.next_cursor;
  } while (cursor && out.length < max);
  return out;
}
