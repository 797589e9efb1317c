// Small DOM helpers shared by the views: element building, the error banner, the confirmation
// dialog, labelled form fields. No framework: the views are plain functions of API answers.

/** `h("p", {class: "x"}, "text", child)`: an element with attributes and children. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Shows an API error (status, code, message) in the alert region. */
export function showError(err) {
  const box = document.getElementById("error");
  box.replaceChildren();
  if (!err) return;
  const status = err.status ? `${err.status} ` : "";
  const code = err.code ? `${err.code}: ` : "";
  box.append(h("p", { class: "error", "data-testid": "error" }, h("strong", {}, "Refused: "), `${status}${code}${err.message || err}`));
  if (err.status === 403) {
    box.append(h("p", {}, "This token may not do that. The console shows exactly what the API answers for this token."));
  }
}

/** A labelled input. */
export function field(id, label, attrs = {}) {
  return h("div", { class: "field" }, h("label", { for: id }, label), h("input", { id, name: id, ...attrs }));
}

/** A labelled select with options (strings). */
export function select(id, label, options, value) {
  const s = h("select", { id, name: id }, options.map((o) => h("option", { value: o, selected: o === value }, o)));
  return h("div", { class: "field" }, h("label", { for: id }, label), s);
}

export const val = (id) => document.getElementById(id)?.value.trim() ?? "";
export const list = (id) => val(id).split(/[\s,]+/).filter(Boolean);

/**
 * Asks for confirmation in a modal dialog showing what the action will change (`body`: nodes).
 * Resolves true only on the Confirm button.
 */
export function confirmAction(title, body) {
  const dlg = document.getElementById("confirm");
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-body").replaceChildren(...body);
  return new Promise((resolve) => {
    dlg.addEventListener("close", () => resolve(dlg.returnValue === "ok"), { once: true });
    dlg.returnValue = "";
    dlg.showModal();
    document.getElementById("confirm-cancel").focus();
  });
}

/** A key/value description list. */
export function facts(pairs) {
  return h("dl", { class: "kv" }, pairs.filter(([, v]) => v !== undefined && v !== null && v !== "").flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

/** A badge: text always, colour only in addition. */
export const badge = (text, kind = "") => h("span", { class: `badge ${kind}` }, text);

/** Runs an async view step, showing any error; returns its result or undefined. */
export async function guarded(fn) {
  showError(null);
  try {
    return await fn();
  } catch (e) {
    showError(e);
    return undefined;
  }
}
