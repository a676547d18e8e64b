// Graph view: decisions with their supersession chains and records linked to files, laid out by a
// small force simulation (repulsion + springs + gravity) and drawn as SVG. A few hundred nodes at
// most, so the O(n²) repulsion is cheap; the start positions are deterministic (same data → same picture).
import { api, fill, h, state } from "./ui.js";

const SVG = "http://www.w3.org/2000/svg";
// `unlinked`: also draw records with no chain and no file link; null = only while the drawing stays small.
const graphFilters = { types: ["decision"], superseded: true, unlinked: null };
const SMALL_GRAPH = 80; // nodes; above it unlinked records are left out and only linked ones are labelled

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) if (value !== null && value !== undefined) el.setAttribute(key, String(value));
  for (const child of children.flat(Infinity)) if (child) el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

/** Positions for nodes given edges [{source, target, length}]; returns nothing, sets node.x / node.y. */
export function layout(nodes, edges, { ticks } = {}) {
  const count = nodes.length;
  const golden = Math.PI * (3 - Math.sqrt(5));
  nodes.forEach((node, index) => {
    const radius = 12 * Math.sqrt(index + 0.5);
    node.x = radius * Math.cos(index * golden);
    node.y = radius * Math.sin(index * golden);
  });
  const rounds = ticks ?? (count > 250 ? 120 : 300);
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const springs = edges.map((edge) => [byId.get(edge.source), byId.get(edge.target), edge.length || 50]).filter(([a, b]) => a && b);
  for (let round = 0; round < rounds; round++) {
    const alpha = 1 - round / rounds;
    const dx = new Float64Array(count), dy = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      for (let j = i + 1; j < count; j++) {
        let x = nodes[i].x - nodes[j].x, y = nodes[i].y - nodes[j].y;
        let d2 = x * x + y * y;
        if (d2 < 0.01) { x = 0.1 * (i - j); y = 0.1; d2 = x * x + y * y; }
        if (d2 > 90000) continue;
        const force = 900 / d2;
        dx[i] += x * force; dy[i] += y * force;
        dx[j] -= x * force; dy[j] -= y * force;
      }
    }
    nodes.forEach((node, index) => node.index = index);
    for (const [a, b, length] of springs) {
      const x = b.x - a.x, y = b.y - a.y;
      const distance = Math.sqrt(x * x + y * y) || 0.01;
      const pull = (distance - length) * 0.08 / distance;
      dx[a.index] += x * pull; dy[a.index] += y * pull;
      dx[b.index] -= x * pull; dy[b.index] -= y * pull;
    }
    for (let i = 0; i < count; i++) {
      dx[i] -= nodes[i].x * 0.01; dy[i] -= nodes[i].y * 0.01; // gravity keeps islands near the middle
      const step = Math.sqrt(dx[i] * dx[i] + dy[i] * dy[i]);
      const cap = 12 * alpha + 0.5;
      const scale = step > cap ? cap / step : 1;
      nodes[i].x += dx[i] * scale; nodes[i].y += dy[i] * scale;
    }
  }
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

function draw(data, focusId) {
  const edges = [
    ...data.supersedes.map((edge) => ({ source: edge.to, target: edge.from, kind: "supersedes", length: 70 })),
    ...data.links.map((link) => ({ source: link.record, target: `entity:${link.entity}`, kind: "link", length: 90 })),
  ];
  const linked = new Set(edges.flatMap((edge) => [edge.source, edge.target]));
  const total = data.records.length + data.entities.length;
  const withUnlinked = graphFilters.unlinked ?? total <= SMALL_GRAPH;
  const nodes = [
    ...data.records.filter((record) => withUnlinked || linked.has(record.id) || record.id === focusId).map((record) => ({ id: record.id, kind: "record", record })),
    ...data.entities.map((entity) => ({ id: `entity:${entity.id}`, kind: "entity", entity })),
  ];
  const labelAll = nodes.length <= SMALL_GRAPH;
  layout(nodes, edges);
  const xs = nodes.map((node) => node.x), ys = nodes.map((node) => node.y);
  const pad = 80;
  const minX = Math.min(...xs, 0) - pad, maxX = Math.max(...xs, 0) + pad + 120;
  const minY = Math.min(...ys, 0) - pad, maxY = Math.max(...ys, 0) + pad;
  const focusChain = new Set();
  if (focusId) {
    for (const chain of chains(data.records, data.supersedes)) if (chain.some((record) => record.id === focusId)) chain.forEach((record) => focusChain.add(record.id));
    focusChain.add(focusId);
  }
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const svg = s("svg", { viewBox: `${minX} ${minY} ${maxX - minX} ${maxY - minY}`, role: "group", "aria-label": "Record graph", class: "graph" },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 21, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: "userSpaceOnUse", orient: "auto" }, s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow" }))),
  );
  for (const edge of edges) {
    const a = byId.get(edge.source), b = byId.get(edge.target);
    if (!a || !b) continue;
    svg.append(s("line", {
      x1: a.x, y1: a.y, x2: b.x, y2: b.y,
      class: `edge edge-${edge.kind}${focusChain.has(a.id) && focusChain.has(b.id) ? " focus" : ""}`,
      "marker-end": edge.kind === "supersedes" ? "url(#arrow)" : null,
      "data-from": edge.source, "data-to": edge.target,
    }));
  }
  for (const node of nodes) {
    if (node.kind === "record") {
      const record = node.record;
      const label = `${record.type}: ${record.title}${record.superseded_at ? " (superseded)" : " (current)"}`;
      const group = s("g", {
        class: `node type-${record.type}${record.superseded_at ? " superseded" : ""}${focusChain.has(record.id) ? " focus" : ""}`,
        transform: `translate(${node.x.toFixed(1)} ${node.y.toFixed(1)})`, tabindex: 0, role: "link", "aria-label": label, "data-id": record.id,
      }, s("title", {}, label), s("circle", { r: record.superseded_at ? 7 : 9 }), labelAll || linked.has(record.id) ? s("text", { x: 13, y: 4 }, shortTitle(record.title)) : null);
      const open = () => { location.hash = `#/records?id=${record.id}`; };
      group.addEventListener("click", open);
      group.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); open(); } });
      svg.append(group);
    } else {
      const name = node.entity.name;
      svg.append(s("g", { class: `node entity kind-${node.entity.kind}`, transform: `translate(${node.x.toFixed(1)} ${node.y.toFixed(1)})` },
        s("title", {}, `${node.entity.kind}: ${name}`), s("rect", { x: -6, y: -6, width: 12, height: 12 }), s("text", { x: 11, y: 4 }, shortTitle(name.split("/").slice(-2).join("/"), 28))));
    }
  }
  svg.dataset.hidden = String(data.records.length - nodes.filter((node) => node.kind === "record").length);
  return svg;
}

export async function renderGraph(main, params) {
  const focusId = params.get("focus");
  const meta = state.meta;
  const canvas = h("div", { class: "graph-box" });
  const unlinkedNote = h("p", { class: "muted", id: "unlinked-note" });
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
    const chainItems = chains(data.records, data.supersedes).map((chain) =>
      h("li", { class: chain.some((record) => record.id === focusId) ? "focus" : "" },
        chain.map((record, index) => [index ? h("span", { class: "arrow-text", "aria-label": "superseded by" }, " → ") : null,
          h("a", { href: `#/records?id=${record.id}`, class: record.superseded_at ? "superseded" : "current" }, record.title)])));
    const files = new Map(data.entities.map((entity) => [entity.id, entity]));
    const titles = new Map(data.records.map((record) => [record.id, record.title]));
    const linkItems = data.links.map((link) => h("li", {}, h("a", { href: `#/records?id=${link.record}` }, titles.get(link.record) || link.record), " — ", h("code", {}, files.get(link.entity)?.name || link.entity)));
    fill(aside,
      h("h3", {}, "Supersession chains (oldest → current)"),
      chainItems.length ? h("ol", { class: "chains", id: "chain-list" }, chainItems) : h("p", { class: "muted" }, "No chains among these records."),
      h("h3", {}, "Records linked to files"),
      linkItems.length ? h("ul", { class: "links" }, linkItems) : h("p", { class: "muted" }, "No file links recorded."),
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
    h("p", { class: "legend muted" }, "● record (faded: superseded) · ■ file · arrow: superseded by · dashed: linked to file. Enter or click a record to open it."),
    unlinkedNote,
    h("div", { class: "graph-layout" }, canvas, aside),
  );
  await load();
}
