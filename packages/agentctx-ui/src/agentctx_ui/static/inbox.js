// The Inbox view: records nobody has confirmed yet (what session-end extraction inferred), newest
// first. Accept makes one explicit, Edit corrects it then accepts it, Reject deletes it, Skip
// leaves it as it is. The same calls as `agentctx review` (POST /api/inbox/{id}/accept|reject).
import { api, badge, fill, h, projectQuery, toast, when } from "./ui.js";

let everything = false;

function card(record, actions) {
  const seen = record.reinforce_count > 1 ? [" ", badge(`seen in ${record.reinforce_count} sessions`, "seen")] : null;
  const headingId = `inbox-title-${record.id}`;
  return h(
    "li",
    { class: "inbox-item", "aria-labelledby": headingId, "data-id": record.id },
    h("h3", { id: headingId, tabindex: "-1" }, record.title),
    h("p", {}, badge(record.type), " ", badge(record.scope, "scope"), " ", badge(record.source, "source"), seen),
    record.body && record.body !== record.title ? h("p", { class: "body" }, record.body) : null,
    h("p", { class: "muted" }, `Recorded ${when(record.recorded_at)}`, record.session_id ? ` in session ${record.session_id.slice(0, 12)}` : ""),
    actions,
  );
}

function editForm(record, onSave) {
  const titleId = `inbox-edit-title-${record.id}`;
  const bodyId = `inbox-edit-body-${record.id}`;
  const form = h(
    "form",
    { class: "stack", "aria-label": `Edit ${record.title}` },
    h("div", { class: "field" }, h("label", { for: titleId }, "Title"), h("input", { id: titleId, value: record.title, maxlength: 120, required: true })),
    h("div", { class: "field" }, h("label", { for: bodyId }, "Body"), h("textarea", { id: bodyId, rows: 4, maxlength: 2000 }, record.body)),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Accept with changes")),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    onSave({ title: form.querySelector(`#${CSS.escape(titleId)}`).value, body: form.querySelector(`#${CSS.escape(bodyId)}`).value });
  });
  return form;
}

export async function renderInbox(main) {
  const query = projectQuery(everything ? { all: "true" } : {});
  const data = await api("GET", `/api/inbox?${query}`);
  const list = h("ol", { class: "inbox", "aria-label": "Records to review, newest first" });
  const summary = h("p", { id: "inbox-summary", "aria-live": "polite" });
  let left = data.records.length;
  const counted = () => {
    summary.textContent = left
      ? `${left} record${left === 1 ? "" : "s"} to review, newest first.`
      : "Nothing left to review: every record here is confirmed.";
  };
  const done = (item, message) => {
    const next = item.nextElementSibling || item.previousElementSibling;
    item.remove();
    left -= 1;
    counted();
    if (message) toast(message);
    (next ? next.querySelector("h3") : summary).focus?.();
  };
  for (const record of data.records) {
    const actions = h("div", { class: "actions" });
    const item = card(record, actions);
    const accept = async (changes) => {
      try {
        await api("POST", `/api/inbox/${record.id}/accept?${projectQuery()}`, changes);
        done(item, changes ? "Edited and accepted." : "Accepted: it is explicit now.");
      } catch (error) { toast(error.message, "error"); }
    };
    actions.append(
      h("button", { type: "button", "aria-label": `Accept ${record.title}`, onclick: () => accept(undefined) }, "Accept"),
      h("button", {
        type: "button",
        "aria-label": `Edit ${record.title}`,
        "aria-expanded": "false",
        onclick: (event) => {
          const open = item.querySelector("form");
          if (open) { open.remove(); event.target.setAttribute("aria-expanded", "false"); return; }
          event.target.setAttribute("aria-expanded", "true");
          item.append(editForm(record, (changes) => accept(changes)));
          item.querySelector("input").focus();
        },
      }, "Edit…"),
      h("button", {
        type: "button",
        class: "danger",
        "aria-label": `Reject ${record.title}`,
        onclick: async () => {
          if (!confirm(`Reject "${record.title}"? It is deleted for good.`)) return;
          try {
            await api("POST", `/api/inbox/${record.id}/reject?${projectQuery()}`);
            done(item, "Rejected: deleted.");
          } catch (error) { toast(error.message, "error"); }
        },
      }, "Reject…"),
      h("button", { type: "button", class: "small link", "aria-label": `Skip ${record.title}`, onclick: () => done(item, "") }, "Skip"),
    );
    list.append(item);
  }
  const toggle = h("input", { type: "checkbox", id: "inbox-all", checked: everything });
  toggle.addEventListener("change", () => { everything = toggle.checked; renderInbox(main); });
  counted();
  fill(main,
    h("h2", {}, "Inbox"),
    h("p", { class: "muted" },
      "What session-end extraction inferred and nobody has confirmed. Accepted records become explicit and reach the session digest; rejected ones are deleted. Skip leaves a record for later."),
    h("p", {}, h("label", { for: "inbox-all" }, toggle, " Every unconfirmed record, not only extraction results")),
    summary,
    data.records.length ? list : null,
  );
}
