// Records view: search and filter (the store's own search), then read, correct, pin, supersede or delete one.
import { api, fill, badge, h, projectQuery, state, table, toast, when } from "./ui.js";

// Filters survive switching views (kept in memory only: no cookies, nothing stored server-side).
const filters = { q: "", type: "", scope: "", confidence: "", superseded: "exclude" };
const PAGE = 100;
let shown = PAGE; // rows asked for; "Show more" raises it
let searchTimer = null;
let loadTicket = 0; // only the latest search may draw its results (typing fires several)

function choice(id, label, values, current, allLabel) {
  const options = [allLabel === null ? null : h("option", { value: "" }, allLabel), ...values.map((value) => h("option", { value, selected: value === current }, value))];
  return h("div", { class: "field" }, h("label", { for: id }, label), h("select", { id, name: id }, options));
}

function field(id, label, control) {
  return h("div", { class: "field" }, h("label", { for: id }, label), control);
}

function searchForm(onChange) {
  const meta = state.meta;
  const form = h(
    "form",
    { role: "search", class: "filters", "aria-label": "Search records", onsubmit: (event) => { event.preventDefault(); onChange(); } },
    field("search-q", "Search", h("input", { id: "search-q", type: "search", value: filters.q, placeholder: "words from a title or body", autocomplete: "off" })),
    choice("filter-type", "Type", meta.types, filters.type, "all types"),
    choice("filter-scope", "Scope", meta.scopes, filters.scope, "project + global"),
    choice("filter-confidence", "Confidence", meta.confidences, filters.confidence, "any"),
    h(
      "div",
      { class: "field" },
      h("label", { for: "filter-superseded" }, "Superseded"),
      h(
        "select",
        { id: "filter-superseded" },
        [["exclude", "hide"], ["include", "include"], ["only", "only superseded"]].map(([value, text]) => h("option", { value, selected: filters.superseded === value }, text)),
      ),
    ),
    h("button", { type: "submit" }, "Search"),
  );
  const read = () => {
    filters.q = form.querySelector("#search-q").value;
    filters.type = form.querySelector("#filter-type").value;
    filters.scope = form.querySelector("#filter-scope").value;
    filters.confidence = form.querySelector("#filter-confidence").value;
    filters.superseded = form.querySelector("#filter-superseded").value;
  };
  form.addEventListener("change", () => { read(); onChange(); });
  form.querySelector("#search-q").addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => { read(); onChange(); }, 250);
  });
  form.addEventListener("submit", read, { capture: true });
  return form;
}

function newRecordForm(onCreated) {
  const meta = state.meta;
  const form = h(
    "form",
    { class: "stack" },
    field("new-title", "Title", h("input", { id: "new-title", required: true, maxlength: 120 })),
    field("new-body", "Body", h("textarea", { id: "new-body", required: true, rows: 4, maxlength: 2000 })),
    h("div", { class: "row" }, choice("new-type", "Type", meta.types, "decision", null), choice("new-scope", "Scope", meta.scopes, "project", null)),
    field("new-anchors", "Anchors (optional: PATH, PATH:10-20 or PATH:symbol, comma-separated)", h("input", { id: "new-anchors", placeholder: "worker/retry.py:retry" })),
    h("button", { type: "submit" }, "Record"),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const record = await api("POST", `/api/records?${projectQuery()}`, {
        title: form.querySelector("#new-title").value,
        body: form.querySelector("#new-body").value,
        type: form.querySelector("#new-type").value,
        scope: form.querySelector("#new-scope").value,
        anchors: form.querySelector("#new-anchors").value.split(",").map((spec) => spec.trim()).filter(Boolean),
      });
      toast(`Recorded ${record.id}.`);
      form.reset();
      onCreated(record.id);
    } catch (error) {
      toast(error.message, "error");
    }
  });
  return h("details", { class: "new-record" }, h("summary", {}, "New record"), form);
}

async function loadResults(container, onOpen) {
  const params = { limit: String(shown), superseded: filters.superseded };
  for (const key of ["q", "type", "scope", "confidence"]) if (filters[key]) params[key] = filters[key];
  container.setAttribute("aria-busy", "true");
  const ticket = ++loadTicket;
  const data = await api("GET", `/api/records?${projectQuery(params)}`);
  if (ticket !== loadTicket) return; // a newer search was started while this one ran: it wins
  const rows = data.records.map((record) =>
    h(
      "tr",
      { class: record.superseded_at ? "superseded" : "", "data-id": record.id },
      h("td", {}, badge(record.type)),
      h("td", {}, h("button", { type: "button", class: "link", onclick: () => onOpen(record.id) }, record.title), record.superseded_at ? [" ", badge("superseded")] : null),
      h("td", {}, badge(record.confidence)),
      h("td", {}, record.scope, record.pinned ? [" ", badge("pinned")] : null),
      h("td", {}, when(record.recorded_at)),
    ),
  );
  const query = filters.q.trim();
  const plural = (n, word, suffix) => `${n} ${word}${n === 1 ? "" : suffix}`;
  const summary = query
    ? `${data.more ? `The best ${data.count} matches (more not shown)` : plural(data.count, "match", "es")} for “${query}”`
    : data.more
      ? `Showing ${data.count} of ${plural(data.total, "record", "s")}, newest first`
      : `${plural(data.count, "record", "s")}, newest first`;
  fill(container,
    h("p", { class: "muted", id: "result-summary" }, summary, data.degraded ? ` (search degraded: ${data.degraded})` : ""),
    rows.length ? table("Records", ["Type", "Title", "Confidence", "Scope", "Recorded"], rows) : h("p", {}, "Nothing found."),
    data.more && shown < 1000
      ? h("button", { type: "button", class: "more", onclick: () => { shown += PAGE; loadResults(container, onOpen); } }, "Show more")
      : data.more ? h("p", { class: "notice" }, "Only the first 1000 are listed; narrow the search or the filters.") : null,
  );
  container.setAttribute("aria-busy", "false");
}

function editForm(record, onDone) {
  const meta = state.meta;
  const form = h(
    "form",
    { class: "stack", "aria-label": "Correct this record" },
    field("edit-title", "Title", h("input", { id: "edit-title", value: record.title, required: true, maxlength: 120 })),
    field("edit-body", "Body", h("textarea", { id: "edit-body", rows: 5, required: true, maxlength: 2000 }, record.body)),
    h(
      "div",
      { class: "row" },
      choice("edit-type", "Type", meta.types, record.type, null),
      choice("edit-confidence", "Confidence", meta.confidences, record.confidence, null),
      choice("edit-scope", "Scope", meta.scopes, record.scope, null),
    ),
    h("button", { type: "submit" }, "Save correction"),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api("PATCH", `/api/records/${record.id}?${projectQuery()}`, {
        title: form.querySelector("#edit-title").value,
        body: form.querySelector("#edit-body").value,
        type: form.querySelector("#edit-type").value,
        confidence: form.querySelector("#edit-confidence").value,
        scope: form.querySelector("#edit-scope").value,
      });
      toast("Saved.");
      onDone(record.id);
    } catch (error) {
      toast(error.message, "error");
    }
  });
  return h("details", { class: "panel" }, h("summary", {}, "Correct (edit in place)"), form);
}

function supersedeForm(record, onDone) {
  const form = h(
    "form",
    { class: "stack", "aria-label": "Supersede this record" },
    field("sup-title", "New title", h("input", { id: "sup-title", value: record.title, maxlength: 120 })),
    field("sup-body", "What is true now", h("textarea", { id: "sup-body", rows: 4, required: true, maxlength: 2000 })),
    field("sup-rationale", "Why it changed (optional)", h("input", { id: "sup-rationale" })),
    h("button", { type: "submit" }, "Supersede"),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const result = await api("POST", `/api/records/${record.id}/supersede?${projectQuery()}`, {
        title: form.querySelector("#sup-title").value || null,
        body: form.querySelector("#sup-body").value,
        rationale: form.querySelector("#sup-rationale").value || null,
      });
      toast(`Superseded by ${result.new.id}.`);
      onDone(result.new.id);
    } catch (error) {
      toast(error.message, "error");
    }
  });
  return h("details", { class: "panel" }, h("summary", {}, "Supersede (the fact changed)"), form);
}

/** Which client and hook produced a record: "gemini / AfterTool", "codex", or "—". */
function originText(origin) {
  return origin && origin.client ? [origin.client, origin.hook].filter(Boolean).join(" / ") : "—";
}

async function renderDetail(aside, recordId, refresh) {
  let record, chain;
  try {
    [record, chain] = await Promise.all([
      api("GET", `/api/records/${recordId}?${projectQuery()}`),
      api("GET", `/api/records/${recordId}/history?${projectQuery()}`),
    ]);
  } catch (error) {
    fill(aside, h("p", { role: "alert", class: "error" }, error.message));
    return;
  }
  const reopen = (id) => { refresh(); renderDetail(aside, id, refresh); };
  const anchors = record.anchors || [];
  const pin = h("button", {
    type: "button",
    onclick: async () => {
      try {
        await api("PATCH", `/api/records/${record.id}?${projectQuery()}`, { pinned: !record.pinned });
        toast(record.pinned ? "Unpinned." : "Pinned.");
        reopen(record.id);
      } catch (error) { toast(error.message, "error"); }
    },
  }, record.pinned ? "Unpin" : "Pin");
  const remove = h("button", {
    type: "button",
    class: "danger",
    onclick: async () => {
      if (!confirm(`Delete "${record.title}" for good? Its chain closes over the gap.`)) return;
      try {
        await api("DELETE", `/api/records/${record.id}?${projectQuery()}`);
        toast("Deleted.");
        refresh();
        fill(aside, h("p", { class: "muted" }, "Record deleted. Choose another one."));
      } catch (error) { toast(error.message, "error"); }
    },
  }, "Delete…");
  const chainList = h(
    "ol",
    { class: "chain", "aria-label": "Supersession chain, oldest first" },
    chain.records.map((item) =>
      h(
        "li",
        { class: item.superseded_at ? "superseded" : "current", "aria-current": item.id === record.id ? "true" : null },
        h("button", { type: "button", class: "link", onclick: () => renderDetail(aside, item.id, refresh) }, item.title),
        " ",
        h("span", { class: "muted" }, when(item.recorded_at)),
        item.superseded_at ? null : [" ", badge("current")],
      ),
    ),
  );
  fill(aside,
    h("h3", { id: "detail-title", tabindex: "-1" }, record.title),
    h("p", {}, badge(record.type), " ", badge(record.confidence), " ", badge(record.scope, "scope"), record.pinned ? [" ", badge("pinned")] : null, record.superseded_at ? [" ", badge("superseded")] : null),
    h("p", { class: "body" }, record.body),
    h(
      "dl",
      { class: "kv" },
      h("dt", {}, "Id"), h("dd", { class: "mono" }, record.id),
      h("dt", {}, "Valid from"), h("dd", {}, when(record.valid_from)),
      h("dt", {}, "Recorded"), h("dd", {}, `${when(record.recorded_at)} (${record.source})`),
      record.source === "learn" && anchors.length ? [h("dt", {}, "Learned from"), h("dd", { id: "detail-source", class: "mono" }, anchors[0].anchor)] : null,
      h("dt", {}, "Anchors"), h("dd", { id: "detail-anchors" }, anchors.length
        ? h("ul", { class: "anchors" }, anchors.map((anchor) => h("li", {}, h("code", {}, anchor.anchor), " ", h("span", { class: `state state-${anchor.state}` }, anchor.state))))
        : h("span", { class: "muted" }, "none: not tied to a file")),
      h("dt", {}, "Client"), h("dd", { id: "detail-origin" }, originText(record.origin)),
      h("dt", {}, "Times seen"), h("dd", {}, String(record.reinforce_count)),
      record.superseded_by ? [h("dt", {}, "Superseded by"), h("dd", {}, h("button", { type: "button", class: "link mono", onclick: () => renderDetail(aside, record.superseded_by, refresh) }, record.superseded_by))] : null,
    ),
    h("div", { class: "actions" }, pin, remove),
    editForm(record, reopen),
    record.superseded_at ? null : supersedeForm(record, reopen),
    h("h4", {}, "Supersession chain"),
    chainList,
    h("p", {}, h("a", { href: `#/graph?focus=${record.id}` }, "Show this chain in the graph")),
  );
  aside.querySelector("#detail-title").focus();
}

export async function renderRecords(main, params) {
  const results = h("div", { id: "results", "aria-live": "polite" });
  const aside = h("section", { id: "detail", class: "detail", "aria-label": "Selected record" }, h("p", { class: "muted" }, "Choose a record to see and correct it."));
  const refresh = () => loadResults(results, open).catch((error) => toast(error.message, "error"));
  const search = () => { shown = PAGE; refresh(); };
  const open = (id) => renderDetail(aside, id, refresh);
  fill(main,
    h("h2", {}, "Records"),
    searchForm(search),
    newRecordForm((id) => { refresh(); open(id); }),
    h("div", { class: "split" }, results, aside),
  );
  await loadResults(results, open);
  if (params.get("id")) await open(params.get("id"));
}
