// Graph view: decisions with their supersession chains and records linked to files, laid out by a
// small force simulation (repulsion + springs + gravity) and drawn as SVG. A few hundred nodes at
// most, so the O(n²) repulsion is cheap; the start positions are deterministic (same data → same picture).
import { api, fill, h, state } from "./ui.js";

const SVG = "http://www.w3.org/2000/svg";
// `unlinked`: also draw records with no chain and no file link; null = only while the drawing stays small.
const graphFilters = { types: ["decision"], superseded: true, unlinked: null };
const SMALL_GRAPH = 80; // records; above it those with no chain and no file are left out until asked

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) if (value !== null && value !== undefined) el.setAttribute(key, String(value));
  for (const child of children.flat(Infinity)) if (child) el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

function shortTitle(text, limit = 32) {
  return text.length > limit ? text.slice(0, limit - 1) + "…" : text;
}

/** Chains of ≥ 2 records, oldest first, from the supersedes edges (newer → older). */
function chains(records, supersedes) {
  const byId = new Map(records.map((record) => [record.id, record]));
  const older = new Map(supersedes.map((edge) => [edge.from, edge.to]));
  const newer = new Map(supersedes.map((edge) => [edge.to, edge.from]));
  const result = [];
  for (const record of records) {
    if (newer.has(record.id) || !older.has(record.id)) continue; // start from each head that replaced something
    const chain = [];
    let id = record.id;
    const seen = new Set();
    while (id && byId.has(id) && !seen.has(id)) { seen.add(id); chain.unshift(byId.get(id)); id = older.get(id); }
    if (chain.length > 1) result.push(chain);
  }
  return result;
}

// The drawing is a tidy diagram in columns, drawn at its natural size (the box scrolls), so every
// label stays 13 px: folders | files | the records resting on them | what each record replaced.
const ROW = 30, FOLDER_W = 150, FILE_W = 220, RECORD_W = 380, OLD_W = 220, GAP = 14;
const X_FOLDER = 10, X_FILE = X_FOLDER + FOLDER_W + 16, X_RECORD = X_FILE + FILE_W + 60, X_OLD = X_RECORD + RECORD_W + 36;
const WORST = { missing: 3, changed: 2, unchecked: 1, fresh: 0, mentioned: 0 };

function folderOf(path) {
  const cut = path.lastIndexOf("/");
  return cut > 0 ? path.slice(0, cut) : ".";
}

/** Files with the records resting on them (anchors, with their state) or naming them (file links). */
export function fileMap(data) {
  const files = new Map();
  const add = (path, record, state) => {
    if (!files.has(path)) files.set(path, { path, folder: folderOf(path), records: new Map(), state: "fresh", anchored: false });
    const file = files.get(path);
    const before = file.records.get(record);
    if (!before || WORST[state] > WORST[before]) file.records.set(record, state);
    if (WORST[state] > WORST[file.state]) file.state = state;
    if (state !== "mentioned") file.anchored = true;
  };
  for (const anchor of data.anchors || []) add(anchor.path, anchor.record, anchor.state);
  const entities = new Map(data.entities.map((entity) => [entity.id, entity]));
  for (const link of data.links) {
    const entity = entities.get(link.entity);
    if (entity) add(entity.kind === "file" ? entity.name : `${entity.kind}: ${entity.name}`, link.record, "mentioned");
  }
  return files;
}

/** Per record: the files it rests on that changed or are gone. */
function staleness(data) {
  const stale = new Map();
  for (const anchor of data.anchors || []) {
    if (anchor.state !== "changed" && anchor.state !== "missing") continue;
    if (!stale.has(anchor.record)) stale.set(anchor.record, []);
    stale.get(anchor.record).push(`${anchor.path} ${anchor.state}`);
  }
  return stale;
}

function draw(data, focusId) {
  const byId = new Map(data.records.map((record) => [record.id, record]));
  const older = new Map(data.supersedes.map((edge) => [edge.from, edge.to])); // newer → older
  const newer = new Map(data.supersedes.map((edge) => [edge.to, edge.from]));
  const files = fileMap(data);
  const stale = staleness(data);
  const headOf = (id) => { const seen = new Set(); while (newer.has(id) && byId.has(newer.get(id)) && !seen.has(id)) { seen.add(id); id = newer.get(id); } return id; };
  const predecessors = (id) => { const list = [], seen = new Set([id]); while (older.has(id) && byId.has(older.get(id)) && !seen.has(older.get(id))) { id = older.get(id); seen.add(id); list.push(byId.get(id)); } return list; };
  const onFile = new Set([...files.values()].flatMap((file) => [...file.records.keys()]));
  const inChain = new Set(data.supersedes.flatMap((edge) => [edge.from, edge.to]));
  const withUnlinked = graphFilters.unlinked ?? data.records.length <= SMALL_GRAPH;

  const placed = new Map(); // record id → {x, y}
  const folders = [], fileRows = [], rows = [];
  let y = 20;
  const placeRow = (head) => {
    placed.set(head.id, { x: X_RECORD, y });
    predecessors(head.id).forEach((record, index) => placed.set(record.id, { x: X_OLD + index * (OLD_W + 36), y }));
    rows.push(head.id);
    y += ROW;
  };
  const byFolder = new Map();
  for (const file of [...files.values()].sort((a, b) => a.path.localeCompare(b.path))) {
    if (!byFolder.has(file.folder)) byFolder.set(file.folder, []);
    byFolder.get(file.folder).push(file);
  }
  for (const [folder, list] of byFolder) {
    const top = y;
    for (const file of list) {
      file.y = y;
      const heads = [...file.records.keys()].map(headOf).filter((id, index, all) => all.indexOf(id) === index && !placed.has(id) && byId.has(id));
      heads.sort((a, b) => byId.get(a).title.localeCompare(byId.get(b).title));
      if (!heads.length) y += ROW;
      for (const id of heads) placeRow(byId.get(id));
      fileRows.push(file);
    }
    folders.push({ folder, top, bottom: y - ROW, count: list.length });
    y += GAP;
  }
  const looseTop = y;
  const loose = data.records.filter((record) => !placed.has(record.id) && headOf(record.id) === record.id
    && (withUnlinked || inChain.has(record.id) || record.id === focusId || onFile.has(record.id)));
  for (const record of loose) placeRow(record);
  const looseCount = loose.length;
  const height = y + 20;
  const oldest = Math.max(0, ...[...placed.values()].map((spot) => spot.x));
  const width = Math.max(X_RECORD + RECORD_W + 20, oldest + OLD_W + 20);

  const focusChain = new Set();
  if (focusId && byId.has(focusId)) {
    const head = headOf(focusId);
    focusChain.add(head);
    predecessors(head).forEach((record) => focusChain.add(record.id));
  }
  const svg = s("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "group", "aria-label": "Record graph", class: "graph" },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: "userSpaceOnUse", orient: "auto" }, s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow" }))),
  );
  // columns' headings
  svg.append(s("text", { x: X_FOLDER, y: 12, class: "column" }, "Folder"), s("text", { x: X_FILE, y: 12, class: "column" }, "File"),
    s("text", { x: X_RECORD, y: 12, class: "column" }, "Record resting on it"), oldest >= X_OLD ? s("text", { x: X_OLD, y: 12, class: "column" }, "It replaced (← superseded by)") : null);
  for (const band of folders) {
    svg.append(s("g", { class: "folder" }, s("title", {}, `${band.folder === "." ? "the project root" : band.folder}: ${band.count} file${band.count === 1 ? "" : "s"}`),
      s("rect", { x: X_FOLDER, y: band.top + 4, width: FOLDER_W, height: band.bottom - band.top + ROW - 8, rx: 5 }),
      s("text", { x: X_FOLDER + 8, y: band.top + 20 }, shortTitle(band.folder === "." ? "(project root)" : `${band.folder}/`, 19))));
  }
  // file → record edges first, so boxes draw over them
  for (const file of fileRows) {
    for (const [id, state] of file.records) {
      const spot = placed.get(id);
      if (!spot) continue;
      const x1 = X_FILE + FILE_W, y1 = file.y + ROW / 2, x2 = spot.x, y2 = spot.y + ROW / 2;
      const bend = (x2 - x1) / 2;
      svg.append(s("path", { d: `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}`, class: `edge edge-anchor state-${state}`, "data-from": file.path, "data-to": id },
        s("title", {}, `${byId.get(id)?.title || id} rests on ${file.path}: ${state}`)));
    }
  }
  for (const file of fileRows) {
    const label = `${file.path}: ${file.state === "mentioned" ? "named by" : "anchors"} ${file.records.size} record${file.records.size === 1 ? "" : "s"}${file.state === "changed" || file.state === "missing" ? `, ${file.state}` : ""}`;
    svg.append(s("g", { class: `node entity state-${file.state}`, transform: `translate(${X_FILE} ${file.y})`, "aria-label": label },
      s("title", {}, label), s("rect", { x: 0, y: 4, width: FILE_W, height: ROW - 8, rx: 4 }),
      s("text", { x: 8, y: 20 }, shortTitle(file.path.split("/").pop(), 25), file.state === "changed" || file.state === "missing" ? s("tspan", { class: "flag" }, ` ${file.state}`) : null)));
  }
  // supersession: each older record → its successor, "superseded by"
  for (const edge of data.supersedes) {
    const a = placed.get(edge.to), b = placed.get(edge.from);
    if (!a || !b) continue;
    const toX = b.x + (b.x === X_RECORD ? RECORD_W : OLD_W);
    svg.append(s("line", { x1: a.x, y1: a.y + ROW / 2, x2: toX + 2, y2: b.y + ROW / 2,
      class: `edge edge-supersedes${focusChain.has(edge.to) && focusChain.has(edge.from) ? " focus" : ""}`, "marker-end": "url(#arrow)", "data-from": edge.to, "data-to": edge.from }));
  }
  for (const record of data.records) {
    const spot = placed.get(record.id);
    if (!spot) continue;
    const problems = stale.get(record.id) || [];
    const label = `${record.type}: ${record.title}${record.superseded_at ? " (superseded)" : " (current)"}`;
    const boxWidth = spot.x === X_RECORD ? RECORD_W : OLD_W;
    const group = s("g", {
      class: `node type-${record.type}${record.superseded_at ? " superseded" : ""}${focusChain.has(record.id) ? " focus" : ""}${problems.length ? " stale" : ""}`,
      transform: `translate(${spot.x} ${spot.y})`, tabindex: 0, role: "link", "aria-label": label, "data-id": record.id,
    }, s("title", {}, problems.length ? `${label}; stale: ${problems.join(", ")}` : label),
      s("rect", { x: 0, y: 3, width: boxWidth, height: ROW - 6, rx: 5 }),
      s("rect", { x: 0, y: 3, width: 6, height: ROW - 6, rx: 2, class: "stripe" }),
      s("text", { x: 12, y: 20 }, shortTitle(record.title, problems.length ? (boxWidth === RECORD_W ? 41 : 18) : (boxWidth === RECORD_W ? 49 : 26)),
        problems.length ? s("tspan", { class: "flag" }, " ⚠ stale") : null));
    const open = () => { location.hash = `#/records?id=${record.id}`; };
    group.addEventListener("click", open);
    group.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); open(); } });
    svg.append(group);
  }
  if (looseCount && fileRows.length) svg.append(s("text", { x: X_FILE, y: looseTop + 20, class: "column" }, "(not tied to a file)"));
  svg.dataset.hidden = String(data.records.filter((record) => !placed.has(record.id)).length);
  return svg;
}

export async function renderGraph(main, params) {
  const focusId = params.get("focus");
  const meta = state.meta;
  const canvas = h("div", { class: "graph-box" });
  const unlinkedNote = h("p", { class: "muted", id: "unlinked-note" });
  const summary = h("p", { id: "graph-summary" });
  const aside = h("div", { class: "graph-lists" });
  const load = async () => {
    const query = new URLSearchParams({ project: state.project, superseded: String(graphFilters.superseded) });
    for (const type of graphFilters.types) query.append("type", type);
    const data = await api("GET", `/api/graph?${query}`);
    const drawing = data.records.length || data.entities.length ? draw(data, focusId) : null;
    const hidden = Number(drawing?.dataset.hidden || 0);
    fill(canvas, drawing || h("p", {}, "Nothing to draw yet: no records of these types."));
    fill(unlinkedNote, hidden ? `${hidden} records with no chain and no file link are not drawn. ` : "",
      hidden || graphFilters.unlinked
        ? h("button", { type: "button", class: "link", onclick: () => { graphFilters.unlinked = hidden > 0; load(); } }, hidden ? "Draw them too" : "Leave unlinked records out")
        : "");
    const chainList = chains(data.records, data.supersedes);
    const chainItems = chainList.map((chain) =>
      h("li", { class: chain.some((record) => record.id === focusId) ? "focus" : "" },
        chain.map((record, index) => [index ? h("span", { class: "arrow-text", "aria-label": "superseded by" }, " → ") : null,
          h("a", { href: `#/records?id=${record.id}`, class: record.superseded_at ? "superseded" : "current" }, record.title)])));
    const files = fileMap(data);
    const titles = new Map(data.records.map((record) => [record.id, record.title]));
    const staleAnchors = (data.anchors || []).filter((anchor) => anchor.state === "changed" || anchor.state === "missing");
    const staleRecords = new Set(staleAnchors.map((anchor) => anchor.record));
    const folders = new Set([...files.values()].filter((file) => file.anchored).map((file) => file.folder));
    const anchoredFiles = [...files.values()].filter((file) => file.anchored);
    const resting = new Set((data.anchors || []).map((anchor) => anchor.record));
    fill(summary,
      resting.size
        ? `${resting.size} record${resting.size === 1 ? "" : "s"} rest on ${anchoredFiles.length} file${anchoredFiles.length === 1 ? "" : "s"} in ${folders.size} folder${folders.size === 1 ? "" : "s"}; `
        : "No record is anchored to a file yet; ",
      `${staleRecords.size} stale; ${chainList.length} supersession chain${chainList.length === 1 ? "" : "s"}.`);
    const staleItems = staleAnchors.map((anchor) => h("li", {},
      h("a", { href: `#/records?id=${anchor.record}` }, titles.get(anchor.record) || anchor.record), ": ",
      h("code", {}, anchor.anchor), " ", h("span", { class: `state state-${anchor.state}` }, anchor.state)));
    const fileItems = [...files.values()].sort((a, b) => a.path.localeCompare(b.path)).map((file) => h("li", {},
      h("code", {}, file.path), file.state === "changed" || file.state === "missing" ? [" ", h("span", { class: `state state-${file.state}` }, file.state)] : null,
      h("ul", {}, [...file.records].map(([id, state]) => h("li", {}, h("a", { href: `#/records?id=${id}` }, titles.get(id) || id),
        state === "mentioned" ? h("span", { class: "muted" }, " (names it)") : null)))));
    fill(aside,
      h("section", {}, h("h3", {}, "Stale (anchored text changed or gone)"),
        staleItems.length ? h("ul", { class: "links", id: "stale-list" }, staleItems) : h("p", { class: "muted" }, "Nothing stale: every anchored record matches its files.")),
      h("section", {}, h("h3", {}, "Supersession chains (oldest → current)"),
        chainItems.length ? h("ol", { class: "chains", id: "chain-list" }, chainItems) : h("p", { class: "muted" }, "No chains among these records.")),
      h("section", {}, h("h3", {}, "Files and the records resting on them"),
        fileItems.length ? h("ul", { class: "links", id: "file-list" }, fileItems) : h("p", { class: "muted" }, "No record is anchored to or names a file yet.")),
      ...(data.truncated ? [h("p", { class: "notice" }, "Only the newest records are drawn.")] : []),
    );
  };
  const typeBoxes = h("fieldset", { class: "inline" }, h("legend", {}, "Types drawn"),
    meta.types.map((type) => h("label", { class: "check" }, h("input", {
      type: "checkbox", value: type, checked: graphFilters.types.includes(type),
      onchange: (event) => {
        graphFilters.types = event.target.checked ? [...graphFilters.types, type] : graphFilters.types.filter((item) => item !== type);
        load();
      },
    }), ` ${type}`)));
  const supersededBox = h("label", { class: "check" }, h("input", { type: "checkbox", id: "graph-superseded", checked: graphFilters.superseded, onchange: (event) => { graphFilters.superseded = event.target.checked; load(); } }), " include superseded records");
  fill(main,
    h("h2", {}, "Graph"),
    h("div", { class: "filters" }, typeBoxes, supersededBox),
    summary,
    h("p", { class: "legend muted" }, "Each file links to the records that rest on it: grey line fresh, orange dashed changed, red dotted missing, light dotted only named. ",
      "Arrows: superseded by. Faded boxes are superseded records. Enter or click a record to open it."),
    unlinkedNote,
    h("div", { class: "graph-layout" }, canvas, aside),
  );
  await load();
}
