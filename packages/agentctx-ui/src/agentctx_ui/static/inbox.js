// The Inbox view: records nobody has confirmed yet (what session-end extraction inferred), newest
// first. Accept makes one explicit, Edit corrects it then accepts it, Reject deletes it, Skip
// leaves it as it is. The same calls as `agentctx review` (POST /api/inbox/{id}/accept|reject).
// Below them, "Re-verification": proposals for records whose anchored code changed (still true,
// update with a draft, no longer true); Accept does what one says, Dismiss rejects it
// (POST /api/inbox/proposals/{id}/accept|reject), as the second part of `agentctx review`.
// Then "Two heads": records superseded twice at once (two machines on a remote, two branches of
// the team file); Keep makes one the current head and supersedes the others with it
// (POST /api/inbox/heads/{id}/keep), as `agentctx review` and `agentctx team resolve` do.
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

const VERDICT_TEXT = {
  still_true: "Still true: accepting re-hashes its anchors as the files are now.",
  update: "Needs an update: accepting supersedes it with this draft.",
  no_longer_true: "No longer true: accepting deletes it.",
};
const OUTCOME_TEXT = {
  confirmed: "confirmed, its anchors re-hashed",
  superseded: "superseded by the draft",
  deleted: "deleted",
};

function proposalCard(proposal, actions) {
  const record = proposal.record;
  const headingId = `proposal-title-${proposal.id}`;
  const draft = proposal.verdict === "update"
    ? h("div", { class: "draft" },
        h("p", {}, h("strong", {}, "Draft: "), proposal.title),
        proposal.body ? h("p", { class: "body" }, proposal.body) : null)
    : null;
  return h(
    "li",
    { class: "inbox-item proposal", "aria-labelledby": headingId, "data-proposal": proposal.id, "data-verdict": proposal.verdict },
    h("h3", { id: headingId, tabindex: "-1" }, record.title),
    h("p", {}, badge(record.type), " ", badge(proposal.verdict.replaceAll("_", " "), "verdict")),
    h("p", { class: "verdict" }, VERDICT_TEXT[proposal.verdict] || proposal.verdict),
    draft,
    proposal.reason ? h("p", { class: "reason" }, h("strong", {}, "Why: "), proposal.reason) : null,
    h("details", {}, h("summary", {}, "The record now"), h("p", { class: "body" }, record.body)),
    h("p", { class: "muted" }, `Proposed ${when(proposal.created_at)}`),
    actions,
  );
}

function proposalSection(data) {
  const list = h("ol", { class: "proposals", "aria-label": "Re-verification proposals, oldest first" });
  const summary = h("p", { id: "proposals-summary", "aria-live": "polite", tabindex: "-1" });
  let left = data.proposals.length;
  const counted = (happened = "") => {
    const rest = left
      ? `${left} proposal${left === 1 ? "" : "s"} to decide, oldest first.`
      : "No re-verification proposals: no record's anchored code changed since it was last checked.";
    summary.textContent = happened ? `${happened} ${rest}` : rest;
  };
  const done = (item, happened) => {
    const next = item.nextElementSibling || item.previousElementSibling;
    item.remove();
    left -= 1;
    counted(happened);
    (next ? next.querySelector("h3") : summary).focus();
  };
  for (const proposal of data.proposals) {
    const title = proposal.record.title;
    const actions = h("div", { class: "actions" });
    const item = proposalCard(proposal, actions);
    const decide = async (action, button) => {
      // accepting "no longer true" deletes the record: ask first, as the records' Reject does
      if (action === "accept" && proposal.verdict === "no_longer_true"
          && !confirm(`Delete "${title}"? Accepting this proposal deletes it for good.`)) return;
      button.disabled = true;
      try {
        const result = await api("POST", `/api/inbox/proposals/${proposal.id}/${action}?${projectQuery()}`);
        done(item, action === "accept"
          ? `Accepted: “${title}” ${OUTCOME_TEXT[result.outcome] || result.outcome}.`
          : `Dismissed: “${title}” is unchanged.`);
      } catch (error) {
        button.disabled = false;
        toast(error.message, "error");
      }
    };
    actions.append(
      h("button", { type: "button", "aria-label": `Accept proposal for ${title}`, onclick: (event) => decide("accept", event.currentTarget) }, "Accept"),
      h("button", { type: "button", class: "danger", "aria-label": `Dismiss proposal for ${title}`, onclick: (event) => decide("reject", event.currentTarget) }, "Dismiss"),
    );
    list.append(item);
  }
  counted();
  return h(
    "section",
    { "aria-labelledby": "proposals-heading" },
    h("h2", { id: "proposals-heading" }, "Re-verification"),
    h("p", { class: "muted" },
      "Records whose anchored code changed, checked again by consolidation. Accept does what a proposal says; Dismiss leaves the record as it is (still marked stale)."),
    summary,
    data.proposals.length ? list : null,
  );
}

function headsSection(data) {
  const list = h("ol", { class: "heads", "aria-label": "Records superseded twice" });
  const summary = h("p", { id: "heads-summary", "aria-live": "polite", tabindex: "-1" });
  let left = data.conflicts.length;
  const counted = (happened = "") => {
    const rest = left
      ? `${left} record${left === 1 ? "" : "s"} with two heads: keep one of each.`
      : "No two heads: every changed record has one current successor.";
    summary.textContent = happened ? `${happened} ${rest}` : rest;
  };
  for (const conflict of data.conflicts) {
    const headingId = `heads-title-${conflict.record.id}`;
    const choices = h("ol", { class: "choices", "aria-label": `Current heads of ${conflict.record.title}` });
    const item = h(
      "li",
      { class: "inbox-item heads-item", "aria-labelledby": headingId, "data-record": conflict.record.id },
      h("h3", { id: headingId, tabindex: "-1" }, conflict.record.title),
      h("details", {}, h("summary", {}, "The record both replaced"), h("p", { class: "body" }, conflict.record.body)),
      choices,
    );
    for (const head of conflict.heads) {
      const keep = async (button) => {
        button.disabled = true;
        try {
          await api("POST", `/api/inbox/heads/${head.id}/keep?${projectQuery()}`);
          item.remove();
          left -= 1;
          counted(`Kept: “${head.title}”.`);
          summary.focus();
        } catch (error) {
          button.disabled = false;
          toast(error.message, "error");
        }
      };
      choices.append(h(
        "li",
        { "data-head": head.id },
        h("p", {}, h("strong", {}, head.title), " ", badge(head.source, "source"), " ", h("span", { class: "muted" }, `recorded ${when(head.recorded_at)}`)),
        h("p", { class: "body" }, head.body),
        h("button", { type: "button", "aria-label": `Keep ${head.title}: ${head.body.slice(0, 60)}`, onclick: (event) => keep(event.currentTarget) }, "Keep this one"),
      ));
    }
    list.append(item);
  }
  counted();
  return h(
    "section",
    { "aria-labelledby": "heads-heading" },
    h("h2", { id: "heads-heading" }, "Two heads"),
    h("p", { class: "muted" },
      "Records two people or two machines replaced at once. Nothing decides by itself which is right: keep one, and the others are superseded by it on every machine that syncs."),
    summary,
    data.conflicts.length ? list : null,
  );
}

export async function renderInbox(main) {
  const query = projectQuery(everything ? { all: "true" } : {});
  const [data, proposals, heads] = await Promise.all([
    api("GET", `/api/inbox?${query}`),
    api("GET", `/api/inbox/proposals?${projectQuery()}`),
    api("GET", `/api/inbox/heads?${projectQuery()}`),
  ]);
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
    proposalSection(proposals),
    headsSection(heads),
  );
}
