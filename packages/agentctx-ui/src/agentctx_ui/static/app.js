// agentctx dashboard: a small hash-routed page over the local JSON API (/api/...).
// Plain ES modules, no build step, nothing loaded from the network but this server.
import { renderRecords } from "./records.js";
import { renderGraph } from "./graph.js";
import { renderInbox } from "./inbox.js";
import { api, fill, badge, h, navigate, projectQuery, state, table, toast, when } from "./ui.js";

// ---- views ------------------------------------------------------------------------

async function renderProjects(main) {
  const data = await api("GET", "/api/projects");
  state.projects = data.projects;
  fillPicker();
  const rows = data.projects.map((project) =>
    h(
      "tr",
      { class: project.project_id === state.project ? "selected" : "" },
      h("td", {}, h("button", { type: "button", class: "link", onclick: () => choose(project.project_id, "records") }, project.name),
        project.is_default ? [" ", badge("started here", "default")] : null,
        h("div", { class: "path" }, project.root || "")),
      h("td", {}, when(project.last_activity)),
      h("td", {}, Object.entries(project.counts).map(([type, count]) => badge(`${type} ${count}`, type))),
      h("td", { class: "num" }, project.total),
      h("td", { class: "num", title: "records whose anchored files changed or are gone: agentctx stale" },
        project.stale ? badge(`${project.stale} stale`, "stale") : "0"),
    ),
  );
  fill(main,
    h("h2", {}, "Projects"),
    h("p", { class: "muted" }, "Counts are current records each project sees, including your global ones."),
    table("Projects", ["Project", "Last activity", "Records by type", "Total", "Stale"], rows),
  );
}

async function renderProfile(main) {
  const data = await api("GET", "/api/profile");
  const rows = data.records.map((record) =>
    h(
      "tr",
      {},
      h("td", {}, h("a", { href: `#/records?id=${record.id}` }, record.title)),
      h("td", {}, badge(record.type)),
      h("td", {}, badge(record.confidence)),
      h("td", { class: "num" }, record.reinforce_count),
      h("td", {}, record.pinned ? "pinned" : ""),
      h(
        "td",
        {},
        h("a", { class: "button small", href: `#/records?id=${record.id}`, "aria-label": `Edit ${record.title}` }, "Edit"),
        " ",
        h("button", {
          type: "button",
          class: "small danger",
          "aria-label": `Remove ${record.title}`,
          onclick: async () => {
            if (!confirm(`Remove the preference "${record.title}" for good?`)) return;
            try {
              await api("DELETE", `/api/records/${record.id}?${projectQuery()}`);
              toast("Removed.");
              renderProfile(main);
            } catch (error) {
              toast(error.message, "error");
            }
          },
        }, "Remove"),
      ),
    ),
  );
  fill(main,
    h("h2", {}, "Profile"),
    h("p", { class: "muted" }, "Your global preferences, shared by every project. Inferred ones reach Claude only once reinforced."),
    rows.length
      ? table("Global preferences", ["Preference", "Type", "Confidence", "Times seen", "Pinned", "Actions"], rows)
      : h("p", {}, "No global preferences recorded yet."),
  );
}

/** A session's metadata in a few words: its branch and how many files, tests, commits it saw. */
function sessionDetails(meta) {
  const parts = [];
  if (typeof meta.branch === "string") parts.push(`branch ${meta.branch}`);
  for (const [key, value] of Object.entries(meta)) {
    if (key === "injections" || key === "hook_records") continue; // shown in the injection log
    if (Array.isArray(value) && value.length) parts.push(`${value.length} ${key}`);
  }
  return parts.join(" · ") || "—";
}

/** A session's extraction runs: "1 run (end): 12,345 in · 0 cached · 456 out", or "—". */
function extractionDetails(extraction) {
  if (!extraction.runs && !extraction.calls) return "—";
  const runs = `${extraction.runs} run${extraction.runs === 1 ? "" : "s"}${extraction.last_trigger ? ` (last: ${extraction.last_trigger})` : ""}`;
  const tokens = `${extraction.input_tokens.toLocaleString()} in · ${extraction.cached_tokens.toLocaleString()} cached · ${extraction.output_tokens.toLocaleString()} out`;
  return `${runs}: ${tokens}`;
}

/** "2" split into where they came from: "2 (1 at start, 1 prompt)". */
function injectionCount(session) {
  const start = Math.max(0, session.injections - session.prompt_injections);
  if (!start || !session.prompt_injections) return start ? `${start} at start` : `${session.prompt_injections}`;
  return `${session.injections} (${start} at start, ${session.prompt_injections} prompt${session.prompt_injections === 1 ? "" : "s"})`;
}

/** A session's injection log: each prompt injection with its time, client / hook, tokens and records. */
function injectionLog(session) {
  const log = session.injection_log;
  if (!log.length) return "—";
  const items = log.map((entry) =>
    h(
      "li",
      {},
      when(entry.at), " · ", h("span", { class: "origin" }, [entry.client, entry.hook].filter(Boolean).join(" / ") || "unknown client"),
      ` · ${entry.tokens.toLocaleString()} tokens · `,
      entry.ids.map((id, index) => [index ? ", " : "", h("a", { class: "mono", href: `#/records?id=${id}` }, id.slice(-8))]),
    ),
  );
  const kept = session.prompt_injections > log.length ? ` (the last ${log.length} of ${session.prompt_injections})` : "";
  const label = `${log.length} prompt injection${log.length === 1 ? "" : "s"}${kept}`;
  return h("details", { class: "injection-log" }, h("summary", {}, label), h("ol", { "aria-label": `Injection log of ${session.session_id}` }, items));
}

async function renderSessions(main) {
  const data = await api("GET", `/api/sessions?${projectQuery()}`);
  const rows = data.sessions.map((session) =>
    h(
      "tr",
      {},
      h("td", { class: "mono", title: session.session_id }, session.session_id.slice(0, 12)),
      h("td", {}, session.client || "—"),
      h("td", {}, when(session.started_at)),
      h("td", {}, when(session.ended_at)),
      h("td", { class: "num", title: "the session-start digest and each prompt's injection" }, injectionCount(session)),
      h("td", { class: "num" }, session.tokens_injected.toLocaleString()),
      h("td", { class: "num" }, `$${session.extraction_cost_usd.toFixed(4)}`),
      h("td", {}, extractionDetails(session.extraction)),
      h("td", {}, injectionLog(session)),
      h("td", {}, sessionDetails(session.meta)),
    ),
  );
  fill(main,
    h("h2", {}, "Sessions"),
    h(
      "p",
      {},
      `Tokens injected in all: ${data.total_tokens_injected.toLocaleString()} · extraction cost of the sessions shown: $${data.total_extraction_cost_usd.toFixed(4)}`,
    ),
    h("p", { id: "month-spend" }, `Extraction this month (all projects): $${data.month_extraction_cost_usd.toFixed(4)} of the $${data.monthly_cap_usd.toFixed(2)} cap.`),
    rows.length
      ? table("Sessions", ["Session", "Client", "Started", "Ended", "Injections", "Tokens injected", "Extraction cost", "Extraction tokens", "Injection log", "Details"], rows)
      : h("p", {}, "No sessions recorded for this project yet."),
  );
}

const SYNC_SHOWN = 8; // entries of each list shown before "Show all"

/** A list of drift entries, the first SYNC_SHOWN shown and the rest one click away. */
function syncList(id, entries, item) {
  const list = h("ul", { class: "sync-list", id }, entries.slice(0, SYNC_SHOWN).map(item));
  if (entries.length <= SYNC_SHOWN) return list;
  const more = h("button", { type: "button", class: "link more", onclick: () => { list.append(...entries.slice(SYNC_SHOWN).map(item)); more.remove(); } },
    `Show all ${entries.length}`);
  return h("div", {}, list, more);
}

/** The proposed diff without its context lines: what would change, counted. */
function diffSummary(diff) {
  const lines = diff.split("\n");
  const added = lines.filter((line) => line.startsWith("+") && !line.startsWith("+++")).length;
  const removed = lines.filter((line) => line.startsWith("-") && !line.startsWith("---")).length;
  return { added, removed };
}

function syncReport(report) {
  const contradicted = [...report.contradicted].sort((a, b) => b.drift_score - a.drift_score);
  const missing = [...report.missing].sort((a, b) => b.drift_score - a.drift_score);
  const contradictedItem = (entry) =>
    h("li", {}, h("strong", {}, "Update or remove "), h("code", {}, `${entry.file}:${entry.line}`), ": ", h("q", {}, entry.text),
      h("div", { class: "reason" }, entry.reason || `Superseded by ${entry.current_title}.`, " Open ",
        h("a", { href: `#/records?id=${entry.superseded_by}` }, "the current record"), "."));
  const missingItem = (entry) =>
    h("li", {}, h("strong", {}, "Add "), h("a", { href: `#/records?id=${entry.id}` }, entry.title), " ", badge(entry.type, entry.type),
      h("div", { class: "reason" }, entry.reason || "Not stated in CLAUDE.md."),
      h("details", { class: "statement" }, h("summary", {}, "The line it would add"), h("code", {}, entry.statement)));
  const counts = diffSummary(report.proposed_diff || "");
  const where = report.files.length ? `Compared with ${report.files.join(", ")}.` : `No CLAUDE.md yet: applying creates ${report.target}.`;
  return [
    h("p", { id: "sync-summary" },
      report.candidates
        ? [contradicted.length ? `${contradicted.length} line${contradicted.length === 1 ? " of CLAUDE.md states" : "s of CLAUDE.md state"} a superseded fact` : "",
          missing.length ? `${missing.length} current record${missing.length === 1 ? " is" : "s are"} not in CLAUDE.md` : ""].filter(Boolean).join("; ") + ". "
        : "CLAUDE.md agrees with the store. ",
      where),
    h("h3", {}, "Wrong in CLAUDE.md (superseded facts still written)"),
    contradicted.length ? syncList("sync-contradicted", contradicted, contradictedItem) : h("p", { class: "muted" }, "Nothing: no line states a superseded fact."),
    h("h3", {}, "Missing from CLAUDE.md"),
    missing.length ? syncList("sync-missing", missing, missingItem) : h("p", { class: "muted" }, "Nothing missing."),
    report.proposed_diff
      ? h("details", { class: "diff-box" }, h("summary", {}, `Proposed diff: ${counts.added} line${counts.added === 1 ? "" : "s"} added, ${counts.removed} removed`),
        h("pre", { class: "diff", tabindex: 0, "aria-label": "Proposed diff of CLAUDE.md" }, report.proposed_diff))
      : h("p", { class: "muted" }, "No change proposed."),
    h("p", { class: "muted" }, "Read only here: apply it with `agentctx sync --apply` in a terminal (it asks before writing)."),
  ];
}

async function renderSync(main) {
  const data = await api("GET", `/api/sync?${projectQuery()}`);
  const body = data.available ? syncReport(data.report) : [h("p", { class: "notice" }, data.message || "Not available yet.")];
  fill(main, h("h2", {}, "Sync with CLAUDE.md"), ...body);
}

const VIEWS = { projects: renderProjects, records: renderRecords, inbox: renderInbox, graph: renderGraph, profile: renderProfile, sessions: renderSessions, sync: renderSync };

// ---- routing and the project picker ------------------------------------------------

function fillPicker() {
  const select = document.getElementById("project-select");
  const options = state.projects.map((project) =>
    h("option", { value: project.project_id, selected: project.project_id === state.project }, `${project.name}${project.is_default ? " (here)" : ""}`),
  );
  options.push(h("option", { value: "_global", selected: state.project === "_global" }, "Global only"));
  select.replaceChildren(...options);
}

function choose(projectId, view) {
  state.project = projectId;
  sessionStorage.setItem("agentctx-project", projectId);
  fillPicker();
  if (view) navigate(view);
  else route();
}

export async function route() {
  const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
  const view = VIEWS[path] ? path : "records";
  const params = new URLSearchParams(query || "");
  for (const link of document.querySelectorAll("nav a[data-view]")) {
    if (link.dataset.view === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  const main = document.getElementById("main");
  main.setAttribute("aria-busy", "true");
  document.title = `${view[0].toUpperCase()}${view.slice(1)} · agentctx`;
  try {
    await VIEWS[view](main, params);
  } catch (error) {
    fill(main, h("h2", {}, "Something went wrong"), h("p", { role: "alert", class: "error" }, error.message));
  } finally {
    main.setAttribute("aria-busy", "false");
    document.body.dataset.ready = view;
  }
}

async function start() {
  const [meta, data] = await Promise.all([api("GET", "/api/meta"), api("GET", "/api/projects")]);
  state.meta = meta;
  state.projects = data.projects;
  const remembered = sessionStorage.getItem("agentctx-project");
  const known = state.projects.some((project) => project.project_id === remembered) || remembered === "_global";
  state.project = known ? remembered : data.default_project;
  fillPicker();
  document.getElementById("project-select").addEventListener("change", (event) => choose(event.target.value));
  window.addEventListener("hashchange", route);
  await route();
}

start().catch((error) => {
  fill(document.getElementById("main"), h("p", { role: "alert", class: "error" }, `The dashboard could not start: ${error.message}`));
});
