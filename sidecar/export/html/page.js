"use strict";
// The session viewer: reads the export document embedded in the page and shows one
// path of the tree at a time, rendering it in chunks as it scrolls into view.
(function () {
  const CHUNK = 80;
  const doc = JSON.parse(document.getElementById("session-data").textContent);
  const entries = doc.entries;
  const byId = new Map();
  const children = new Map();
  const order = new Map();
  const resultOf = new Map();
  entries.forEach((e, i) => {
    byId.set(e.id, e);
    order.set(e.id, i);
    const key = e.parentId === null ? "" : e.parentId;
    if (!children.has(key)) children.set(key, []);
    children.get(key).push(e);
    if (e.kind === "message" && e.role === "toolResult" && e.toolCallId) resultOf.set(e.toolCallId, e);
  });
  const leaves = entries.filter((e) => !children.has(e.id));
  const state = { leaf: doc.leafId && byId.has(doc.leafId) ? doc.leafId : (leaves.length ? leaves[leaves.length - 1].id : null),
                  path: [], rendered: 0, query: "", hits: [], hit: -1 };
  const main = document.getElementById("main");
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) appendText(node, text);
    return node;
  };

  function appendText(node, text) {
    text = String(text);
    const q = state.query;
    if (!q) { node.appendChild(document.createTextNode(text)); return; }
    const lower = text.toLowerCase();
    let at = 0;
    for (let i = lower.indexOf(q); i >= 0; i = lower.indexOf(q, i + q.length)) {
      node.appendChild(document.createTextNode(text.slice(at, i)));
      const mark = document.createElement("mark");
      mark.textContent = text.slice(i, i + q.length);
      node.appendChild(mark);
      at = i + q.length;
    }
    node.appendChild(document.createTextNode(text.slice(at)));
  }

  function pathTo(leaf) {
    const path = [];
    const seen = new Set();
    for (let e = byId.get(leaf); e && !seen.has(e.id); e = e.parentId === null ? undefined : byId.get(e.parentId)) {
      seen.add(e.id);
      path.push(e);
    }
    return path.reverse();
  }

  function newestLeafUnder(id) {
    let best = id;
    const stack = [id];
    while (stack.length) {
      const cur = stack.pop();
      const kids = children.get(cur);
      if (!kids) { if (order.get(cur) > order.get(best) || best === id) best = cur; continue; }
      for (const k of kids) stack.push(k.id);
    }
    return best;
  }

  function textOf(e) {
    const parts = [e.summary || "", e.label || "", e.customType || "", e.name || ""];
    for (const b of e.content || []) {
      if (b.type === "text") parts.push(b.text);
      else if (b.type === "thinking") parts.push(b.thinking);
      else if (b.type === "toolCall") parts.push(b.name, JSON.stringify(b.arguments));
    }
    if (e.data !== undefined) parts.push(JSON.stringify(e.data));
    return parts.join("\n");
  }

  function head(e, who) {
    const h = el("div", "head");
    h.appendChild(el("span", "who", who));
    if (e.model) h.appendChild(el("span", "", e.model));
    const u = e.usage;
    if (u && (u.input !== undefined || u.output !== undefined)) {
      h.appendChild(el("span", "", `${u.input || 0} in · ${u.output || 0} out` + (u.cacheRead ? ` · ${u.cacheRead} cached` : "")));
    }
    if (e.timestamp) h.appendChild(el("span", "", e.timestamp.replace("T", " ").replace(/\.\d+Z$/, "Z")));
    if (e.label) h.appendChild(el("span", "badge", e.label));
    return h;
  }

  function block(b, parent) {
    if (b.type === "text") parent.appendChild(el("div", "text", b.text));
    else if (b.type === "thinking") { if (b.thinking) parent.appendChild(el("div", "thinking", b.thinking)); }
    else if (b.type === "image" && typeof b.data === "string") {
      const img = el("img");
      img.alt = "image";
      img.src = `data:${b.mimeType || "image/png"};base64,${b.data}`;
      parent.appendChild(img);
    } else if (b.type === "toolCall") parent.appendChild(toolCall(b));
    else parent.appendChild(el("pre", "", JSON.stringify(b, null, 2)));
  }

  function toolCall(b) {
    const d = el("details", "tool");
    const result = resultOf.get(b.id);
    const s = el("summary");
    s.appendChild(el("b", "", b.name));
    s.appendChild(el("span", "args", `  ${preview(b.arguments)}`));
    if (result && result.isError) s.appendChild(el("span", "error", "  error"));
    d.appendChild(s);
    d.appendChild(el("pre", "", JSON.stringify(b.arguments, null, 2)));
    if (result) for (const rb of result.content || []) {
      if (rb.type === "text") d.appendChild(el("pre", "", rb.text)); else block(rb, d);
    }
    if (state.query && (textOf(result || {}) + JSON.stringify(b.arguments)).toLowerCase().includes(state.query)) d.open = true;
    return d;
  }

  function preview(args) {
    if (!args || typeof args !== "object") return "";
    const first = Object.values(args).find((v) => typeof v === "string") || "";
    return first.length > 80 ? first.slice(0, 80) + "…" : first;
  }

  function render(e) {
    const kind = e.kind;
    let node;
    if (kind === "message") {
      if (e.role === "toolResult" && resultOf.get(e.toolCallId) === e && callOnPath.has(e.toolCallId)) return null;
      const who = { user: "User", assistant: "Assistant", toolResult: `Result of ${e.toolName || "tool"}`,
                    bashExecution: "Shell", system: "System" }[e.role] || e.role || "Message";
      node = el("div", `entry ${e.role || ""}`);
      node.appendChild(head(e, who));
      if (e.role === "bashExecution" && e.extra && e.extra.message) {
        node.appendChild(el("pre", "", `$ ${e.extra.message.command || ""}\n${e.extra.message.output || ""}`));
      }
      for (const b of e.content || []) block(b, node);
    } else if (kind === "compaction") {
      node = el("div", "entry compaction");
      node.appendChild(head(e, "Compaction"));
      node.appendChild(el("div", "note", `Earlier messages were folded into this summary (${e.tokensBefore || 0} tokens); the model saw it from here on. They remain above.`));
      node.appendChild(el("div", "text", e.summary || ""));
    } else if (kind === "branch_summary") {
      node = el("div", "entry branch_summary");
      node.appendChild(head(e, "Branch summary"));
      node.appendChild(el("div", "text", e.summary || ""));
    } else if (kind === "custom_message") {
      node = el("div", "entry custom");
      node.appendChild(head(e, e.customType || "custom"));
      for (const b of e.content || []) block(b, node);
    } else if (kind === "model_change") {
      node = el("div", "entry note", `Model: ${[e.provider, e.model].filter(Boolean).join("/")}`);
    } else if (kind === "thinking_level_change") {
      node = el("div", "entry note", `Thinking level: ${e.thinkingLevel}`);
    } else if (kind === "session_info") {
      if (!e.name) return null;
      node = el("div", "entry note", `Named “${e.name}”`);
    } else if (kind === "label") {
      return null;
    } else if (kind === "custom") {
      node = el("div", "entry note");
      const d = el("details", "tool");
      d.appendChild(el("summary", "", `custom data: ${e.customType}`));
      d.appendChild(el("pre", "", JSON.stringify(e.data, null, 2)));
      node.appendChild(d);
    } else {
      node = el("div", "entry note", kind);
      node.appendChild(el("pre", "", JSON.stringify(e.extra || {}, null, 2)));
    }
    node.dataset.entryId = e.id;
    return node;
  }

  let callOnPath = new Set();
  let observer = null;
  const more = el("div", "", "");
  more.id = "more";

  function renderChunk(upTo) {
    const end = Math.min(state.path.length, Math.max(upTo || 0, state.rendered + CHUNK));
    const frag = document.createDocumentFragment();
    for (let i = state.rendered; i < end; i++) {
      const e = state.path[i];
      const siblings = e.parentId === null ? null : children.get(e.parentId);
      if (siblings && siblings.length > 1) switcherBefore(e, frag);
      const node = render(e);
      if (node) frag.appendChild(node);
    }
    main.insertBefore(frag, more);
    state.rendered = end;
    more.textContent = end < state.path.length ? `${state.path.length - end} more entries…` : "";
  }

  function switcherBefore(e, frag) {
    // The entry's parent is a branch point: offer its other children.
    const siblings = children.get(e.parentId);
    const at = siblings.indexOf(e);
    const bar = el("div", "switch", `Branch ${at + 1} of ${siblings.length}`);
    const go = (delta) => {
      const target = siblings[(at + delta + siblings.length) % siblings.length];
      switchTo(newestLeafUnder(target.id));
    };
    const prev = el("button", "", "◀");
    prev.dataset.branchStep = "-1";
    prev.onclick = () => go(-1);
    const next = el("button", "", "▶");
    next.dataset.branchStep = "1";
    next.onclick = () => go(1);
    bar.prepend(prev);
    bar.appendChild(next);
    frag.appendChild(bar);
  }

  function switchTo(leaf, upTo) {
    state.leaf = leaf;
    state.path = pathTo(leaf);
    callOnPath = new Set();
    for (const e of state.path) for (const b of e.content || []) if (b.type === "toolCall") callOnPath.add(b.id);
    state.rendered = 0;
    main.textContent = "";
    main.appendChild(more);
    renderChunk(upTo);
    for (const b of document.querySelectorAll("nav .branch")) b.classList.toggle("current", b.dataset.leaf === leaf);
    document.body.dataset.leaf = leaf;
  }

  function branches() {
    // Depth, nearest label and nearest user message of every entry, parents first: one pass,
    // not a walk to the root per branch (a long session has hundreds of branches).
    const depth = new Map(), labelUp = new Map(), userUp = new Map();
    const facts = (e) => {
      if (depth.has(e.id)) return;
      const chain = [], seen = new Set();
      for (let cur = e; cur && !depth.has(cur.id) && !seen.has(cur.id); cur = cur.parentId === null ? undefined : byId.get(cur.parentId)) {
        seen.add(cur.id);
        chain.push(cur);
      }
      for (let i = chain.length - 1; i >= 0; i--) {
        const cur = chain[i];
        const parent = cur.parentId === null ? undefined : byId.get(cur.parentId);
        const known = parent && depth.has(parent.id);
        depth.set(cur.id, known ? depth.get(parent.id) + 1 : 1);
        labelUp.set(cur.id, cur.label ? cur : (known ? labelUp.get(parent.id) : undefined));
        userUp.set(cur.id, cur.role === "user" ? cur : (known ? userUp.get(parent.id) : undefined));
      }
    };
    const box = document.getElementById("branches");
    const frag = document.createDocumentFragment();
    for (const leaf of leaves.slice().reverse()) {
      facts(leaf);
      const label = labelUp.get(leaf.id), lastUser = userUp.get(leaf.id);
      const b = el("button", "branch", label ? label.label : (lastUser ? textOf(lastUser).slice(0, 60) : leaf.id));
      b.appendChild(el("small", "", `${depth.get(leaf.id)} entries · ${(leaf.timestamp || "").slice(0, 16).replace("T", " ")}`));
      b.dataset.leaf = leaf.id;
      b.onclick = () => switchTo(leaf.id);
      frag.appendChild(b);
    }
    box.appendChild(frag);
  }

  function search(query) {
    state.query = query.trim().toLowerCase();
    state.hits = state.query ? entries.filter((e) => e.kind !== "label" && textOf(e).toLowerCase().includes(state.query)) : [];
    state.hit = -1;
    document.getElementById("hits").textContent = state.query ? `${state.hits.length} found` : "";
    if (state.hits.length) step(1); else switchTo(state.leaf);
  }

  function step(delta) {
    if (!state.hits.length) return;
    state.hit = (state.hit + delta + state.hits.length) % state.hits.length;
    const target = state.hits[state.hit];
    const onPath = state.path.indexOf(target);
    const leaf = onPath >= 0 ? state.leaf : newestLeafUnder(target.id);
    switchTo(leaf, pathTo(leaf).indexOf(target) + CHUNK);
    const node = main.querySelector(`[data-entry-id="${CSS.escape(target.id)}"]`)
      || main.querySelector(`[data-entry-id="${CSS.escape(target.parentId || "")}"]`);
    if (node) { node.classList.add("hit"); node.scrollIntoView({ block: "center" }); }
    document.getElementById("hits").textContent = `${state.hit + 1} / ${state.hits.length}`;
  }

  function theme() {
    const root = document.documentElement;
    const dark = root.dataset.theme ? root.dataset.theme === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
    root.dataset.theme = dark ? "light" : "dark";
  }

  const s = doc.session;
  document.getElementById("meta").textContent =
    `${entries.length} entries · ${leaves.length} branch${leaves.length === 1 ? "" : "es"}${s.cwd ? " · " + s.cwd : ""}`;
  let timer = 0;
  const box = document.getElementById("search");
  box.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => search(box.value), 200); });
  box.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { clearTimeout(timer); if (state.query === box.value.trim().toLowerCase()) step(1); else search(box.value); } });
  document.getElementById("next").onclick = () => step(1);
  document.getElementById("prev").onclick = () => step(-1);
  document.getElementById("theme").onclick = theme;
  observer = new IntersectionObserver((seen) => {
    if (seen.some((x) => x.isIntersecting) && state.rendered < state.path.length) renderChunk();
  }, { rootMargin: "800px" });
  observer.observe(more);
  branches();
  if (state.leaf) switchTo(state.leaf);
  window.sessionView = { state, switchTo, search, theme };
  performance.mark("session-view-ready");  // bench/export.py reads it: the page is usable from here
})();
