// Shared helpers of the dashboard's views: building elements, calling the API, small formatting.
const TOKEN = document.querySelector('meta[name="agentctx-token"]').content;

export const state = { meta: null, projects: [], project: null };

/** Build an element: h("a", {href: "#"}, "text", child). `on*` attributes become listeners. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace an element's children, skipping null / false / undefined (conditional parts of a view). */
export function fill(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((child) => child !== null && child !== undefined && child !== false));
  return el;
}

/** Call the API; a refused or failed call throws an Error carrying the server's one-line message. */
export async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") headers["X-Agentctx-Token"] = TOKEN;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || `${response.status} ${response.statusText}`);
  return data;
}

export function projectQuery(extra = {}) {
  const params = new URLSearchParams({ project: state.project, ...extra });
  return params.toString();
}

export function toast(message, kind = "ok") {
  const box = document.getElementById("toast");
  box.textContent = message;
  box.className = `toast show ${kind}`;
  box.setAttribute("role", kind === "error" ? "alert" : "status");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (box.className = "toast"), kind === "error" ? 8000 : 3000);
}

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : DATE_FORMAT.format(date);
}

export function badge(text, kind = text) {
  return h("span", { class: `badge badge-${kind}` }, text);
}

/** A data table in a box that scrolls sideways on a narrow window (the page itself never does). */
export function table(caption, headers, rows) {
  return h(
    "div",
    { class: "table-wrap", role: "region", "aria-label": caption, tabindex: 0 },
    h(
      "table",
      { class: "grid" },
      h("caption", { class: "visually-hidden" }, caption),
      h("thead", {}, h("tr", {}, headers.map((name) => h("th", { scope: "col" }, name)))),
      h("tbody", {}, rows),
    ),
  );
}

export function navigate(view, params = {}) {
  const query = new URLSearchParams(params).toString();
  location.hash = `#/${view}${query ? "?" + query : ""}`;
}
