// The session page's only script. Every piece of session data reaches the
// page through textContent or a numeric SVG attribute, never as markup.
(function () {
  'use strict';
  var started = performance.now();
  var D = JSON.parse(document.getElementById('session-data').textContent);
  var SVG = 'http://www.w3.org/2000/svg';
  var SLICE = 150;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function size(n) {
    if (n < 1024) return n + ' B';
    if (n < 1048576) return (n / 1024).toFixed(1) + ' KB';
    return (n / 1048576).toFixed(1) + ' MB';
  }
  function lines(s) {
    var n = 1;
    for (var i = 0; i < s.length; i++) if (s.charCodeAt(i) === 10) n++;
    return n;
  }
  // Every count as the terminal writes it: with thousands separators.
  function num(n) { return Number(n).toLocaleString('en-US'); }
  function tokens(n) { return num(n) + ' tokens'; }
  // Round values from 0 to about `max` for an axis: steps of 1, 2 or 5
  // times a power of ten, about `count` of them.
  function ticks(max, count) {
    if (!(max > 0)) return [0];
    var raw = max / count, p = Math.pow(10, Math.floor(Math.log10(raw)));
    var f = raw / p, unit = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
    var out = [];
    for (var v = 0; v <= max + 1e-9; v += unit) out.push(Math.round(v));
    return out;
  }
  function compact(v) {
    if (v >= 1e6) return (v / 1e6) + 'M';
    if (v >= 1e3) return (v / 1e3) + 'k';
    return String(v);
  }

  // ------------------------------------------------------------ the record
  // What the filters hide; set before the first slice is rendered.
  var hideRole = {}, hideType = {}, onlyTool = '';
  var R = D.recorded || { requests: [], compactions: [], subagents: [], tool_names: [] };
  // The agent's own name of each call the import renamed, and of each
  // call the tool its result answers.
  var agentName = {};
  R.tool_names.forEach(function (p) { agentName[p[0]] = p[1]; });
  var toolOf = {};
  D.messages.forEach(function (m) {
    m.blocks.forEach(function (b) {
      if (b.t === 'tool_use' && b.id) toolOf[b.id] = agentName[b.id] || b.name || '?';
    });
  });
  var subagentOf = {};
  R.subagents.forEach(function (l) { if (l.call) subagentOf[l.call] = l; });
  // The agent's compactions before each message.
  var agentAt = {};
  R.compactions.forEach(function (c, k) { (agentAt[c.message] = agentAt[c.message] || []).push(k); });
  function link(l, text) {
    var a = el('a', 'link', text);
    a.href = l.href;
    return a;
  }

  // ------------------------------------------------------------ the chat
  var chat = document.getElementById('chat');
  var rendered = 0;
  var more = el('div', 'more', '');
  var nodes = [];

  function collapsed(label, text, cls) {
    var d = el('details', cls);
    d.appendChild(el('summary', null, label));
    // Filled when opened: a 10 MB session keeps its DOM small.
    d.addEventListener('toggle', function () {
      if (d.open && d.childNodes.length === 1) d.appendChild(el('pre', null, text));
    });
    return d;
  }

  function block(b) {
    var text = b.text === undefined ? '' : b.text;
    switch (b.t) {
      case 'text':
        if (text.length > D.collapse_bytes || lines(text) > D.collapse_lines) {
          var t = el('div', 'text');
          t.appendChild(el('div', 'text', text.split('\n').slice(0, 8).join('\n')));
          t.appendChild(collapsed('long text · ' + size(b.bytes) + ' · ' + lines(text) + ' lines (open all)', text, 'long'));
          return t;
        }
        return el('div', 'text', text);
      case 'thinking':
      case 'redacted_thinking':
        return collapsed((b.t === 'thinking' ? 'thinking' : 'redacted thinking') + ' · ' + size(b.bytes), text, 'thinking');
      case 'tool_use': {
        var c = el('div', 'call');
        c.appendChild(el('span', 'name', '→ ' + ((b.id && toolOf[b.id]) || b.name || '?')));
        if (b.id) c.appendChild(el('span', 'badge', b.id));
        if (b.id && subagentOf[b.id]) {
          c.appendChild(document.createTextNode(' '));
          c.appendChild(link(subagentOf[b.id], 'open the subagent session ' + subagentOf[b.id].label));
        }
        c.appendChild(el('pre', 'args', b.args || ''));
        return c;
      }
      case 'tool_result': {
        var r = el('div', 'result');
        var head = el('div', 'who', 'result' + (b.id ? ' of ' + b.id + (toolOf[b.id] ? ' (' + toolOf[b.id] + ')' : '') : ''));
        if (b.err) head.appendChild(el('span', 'badge error', 'error'));
        r.appendChild(head);
        if (text.length > D.collapse_bytes || lines(text) > D.collapse_lines) {
          r.appendChild(collapsed('long result · ' + size(b.bytes) + ' · ' + lines(text) + ' lines (open)', text, 'long'));
        } else {
          r.appendChild(el('pre', null, text));
        }
        return r;
      }
      default:
        return el('div', 'text', '[' + b.t + ': ' + text + ']');
    }
  }

  function message(i) {
    var m = D.messages[i];
    var box = el('article', 'msg ' + m.role + (m.synthetic ? ' synthetic' : ''));
    box.id = 'm' + i;
    var rec = m.request !== undefined ? R.requests[m.request] : null;
    var q = m.request !== undefined ? D.requests[m.request] : null;
    var who = el('div', 'who', m.role + ' · turn ' + m.turn + ' · #' + i +
      (m.request !== undefined ? ' · request ' + m.request : '') +
      (rec && rec.time ? ' · ' + rec.time.replace('T', ' ').replace(/\.\d+/, '') : '') +
      (rec && rec.model ? ' · ' + rec.model : '') +
      (rec && rec.prompt !== undefined ? ' · billed ' + tokens(rec.prompt) + ' in, ' + num(rec.output) + ' out' : '') +
      (q ? ' · replay sent ' + tokens(q.after) : ''));
    if (m.synthetic) who.appendChild(el('span', 'badge synthetic', 'synthetic'));
    box.appendChild(who);
    for (var j = 0; j < m.blocks.length; j++) box.appendChild(block(m.blocks[j]));
    return box;
  }

  function renderUpTo(n) {
    n = Math.min(n, D.messages.length);
    if (n <= rendered) return;
    var frag = document.createDocumentFragment();
    for (var i = rendered; i < n; i++) {
      (agentAt[i] || []).forEach(function (k) { frag.appendChild(agentMark(k)); });
      var node = message(i);
      node.hidden = !visible(i);
      nodes[i] = node;
      frag.appendChild(node);
    }
    rendered = n;
    chat.insertBefore(frag, more);
    more.textContent = rendered < D.messages.length
      ? num(D.messages.length - rendered) + ' more messages below'
      : 'end of the record: ' + num(D.messages.length) + ' messages';
  }

  function agentLabel(c) {
    return (c.kind === 'microcompact' ? 'The agent cleared old tool results' : 'The agent compacted its context') +
      (c.trigger ? ' (' + c.trigger + ')' : '') +
      (c.pre_tokens ? ' at ' + tokens(c.pre_tokens) : '') + ', after request ' + (c.request - 1) +
      (c.summary_bytes ? '; its summary: ' + size(c.summary_bytes) : '');
  }
  function agentMark(k) {
    var c = R.compactions[k];
    var box = el('aside', 'agent-compaction');
    box.id = 'agent-' + k;
    box.appendChild(el('div', 'who', agentLabel(c)));
    if (c.summary) box.appendChild(collapsed('the summary it carried on under · ' + size(c.summary.length), c.summary, 'long'));
    return box;
  }

  function showMessage(i) {
    if (nodes[i] && nodes[i].hidden) clearFilters();
    renderUpTo(i + SLICE);
    var node = nodes[i];
    if (!node) return;
    node.scrollIntoView({ block: 'center' });
    node.classList.add('flash');
    setTimeout(function () { node.classList.remove('flash'); }, 1600);
  }

  chat.appendChild(more);
  renderUpTo(SLICE);
  if ('IntersectionObserver' in window) {
    new IntersectionObserver(function (entries) {
      if (entries.some(function (e) { return e.isIntersecting; })) renderUpTo(rendered + SLICE);
    }, { rootMargin: '1500px' }).observe(more);
  }

  // ------------------------------------------------------------ the ledger
  var ledger = document.getElementById('ledger');
  var marks = {};

  function jump(i, label) {
    var b = el('button', 'link', label);
    b.type = 'button';
    b.addEventListener('click', function () { showMessage(i); });
    return b;
  }

  function table(head, rows) {
    var wrap = el('div', 'scroll');
    var t = el('table');
    var tr = el('tr');
    head.forEach(function (h) { tr.appendChild(el('th', null, h)); });
    t.appendChild(tr);
    rows.forEach(function (r) {
      var row = el('tr');
      r.forEach(function (c) {
        var td = el('td', typeof c === 'number' ? 'n' : null);
        if (c instanceof Node) td.appendChild(c); else td.textContent = c === null ? '' : String(c);
        row.appendChild(td);
      });
      t.appendChild(row);
    });
    wrap.appendChild(t);
    return wrap;
  }

  function showLedger(k) {
    var q = D.requests[k];
    if (!q || !q.ledger) return;
    var L = q.ledger;
    Object.keys(marks).forEach(function (r) { marks[r].classList.remove('chosen'); });
    if (marks[k]) marks[k].classList.add('chosen');
    ledger.textContent = '';
    var p = el('div', 'panel');
    p.id = 'ledger-' + k;
    p.appendChild(el('h2', null, 'Compaction at request ' + q.r + ': ' + q.strategy));
    var facts = el('p');
    facts.appendChild(document.createTextNode(tokens(q.before) + ' → ' + tokens(q.after) + ', ' +
      num(L.messages_before) + ' → ' + num(L.messages_after) + ' messages; stages: ' + (L.stages.join(', ') || 'none') +
      (q.missed ? '; missed its target' : '') + (q.over ? '; still over the window' : '') +
      (q.after > q.before ? '; the history grew' : '') + '. '));
    facts.appendChild(jump(q.m, 'show the answer (#' + q.m + ')'));
    p.appendChild(facts);
    if (L.reclaimed.length) {
      p.appendChild(table(['stage', 'tokens reclaimed'], L.reclaimed.map(function (s) { return [s[0], s[1]]; })));
    }
    if (L.summarized > 0) {
      var s = el('p');
      var range = L.summarized_messages;
      s.appendChild(document.createTextNode(L.summarized + ' messages replaced by a summary' +
        (range ? ' (record #' + range[0] + '–#' + range[1] + ')' : '') +
        (L.summarized_turns.length ? ', turns ' + L.summarized_turns.join(', ') : '') + '. '));
      if (range) s.appendChild(jump(range[0], 'show the first'));
      p.appendChild(s);
    }
    if (L.edits.length) {
      p.appendChild(el('h2', null, 'What it cut (' + L.edits.length + ')'));
      p.appendChild(table(['message', 'block', 'what', 'tool', 'bytes before', 'bytes after'],
        L.edits.map(function (e) {
          return [e.message === null ? 'summary' : jump(e.message, '#' + e.message),
            e.block === null ? '' : e.block, e.kind, e.tool || '', e.bytes_before, e.bytes_after];
        })));
    }
    ledger.appendChild(p);
  }

  // ------------------------------------------------------------ the timeline
  (function timeline() {
    var host = document.getElementById('timeline');
    var n = D.requests.length;
    // The config is in the lead already; repeating it made the heading wrap.
    host.appendChild(el('h2', null, n + ' requests (click a compaction)'));
    if (!n) return;
    var W = 1000, H = 140;
    var top = D.max;
    D.requests.forEach(function (q) { top = Math.max(top, q.before); });
    R.requests.forEach(function (rq) { if (rq.prompt) top = Math.max(top, rq.prompt); });
    var y = function (v) { return H - (v / top) * (H - 6); };
    var svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('role', 'img');
    var step = W / n;
    var bad = {};
    D.misfires.forEach(function (f) { bad[f.request] = true; });
    function rect(cls, x, y0, w, h) {
      var r = document.createElementNS(SVG, 'rect');
      r.setAttribute('class', cls);
      r.setAttribute('x', x); r.setAttribute('y', y0);
      r.setAttribute('width', Math.max(w, 0.5)); r.setAttribute('height', Math.max(h, 0));
      svg.appendChild(r);
      return r;
    }
    D.requests.forEach(function (q, i) {
      rect('before', i * step, y(q.before), step, H - y(q.before));
      rect('after', i * step, y(q.after), step, H - y(q.after));
    });
    [['max', D.max], ['trigger', D.trigger], ['target', D.target]].forEach(function (l) {
      var line = document.createElementNS(SVG, 'line');
      line.setAttribute('class', 'limit ' + l[0]);
      line.setAttribute('x1', 0); line.setAttribute('x2', W);
      line.setAttribute('y1', y(l[1])); line.setAttribute('y2', y(l[1]));
      svg.appendChild(line);
    });
    R.compactions.forEach(function (c, k) {
      var r = rect('agent', Math.min(c.request, n - 1) * step, H - 10, Math.max(step, 3), 10);
      r.setAttribute('tabindex', '0');
      var title = document.createElementNS(SVG, 'title');
      title.textContent = agentLabel(c);
      r.appendChild(title);
      r.addEventListener('click', function () { showMessage(c.message); });
    });
    var billed = [];
    R.requests.forEach(function (rq, i) { if (rq.prompt !== undefined) billed.push((i + 0.5) * step + ',' + y(rq.prompt)); });
    if (billed.length) {
      var pl = document.createElementNS(SVG, 'polyline');
      pl.setAttribute('class', 'billed');
      pl.setAttribute('points', billed.join(' '));
      svg.appendChild(pl);
    }
    D.requests.forEach(function (q, i) {
      if (!q.ledger) return;
      var r = rect('compaction' + (bad[q.r] ? ' misfire' : ''), i * step, 0, Math.max(step, 3), 10);
      r.setAttribute('tabindex', '0');
      r.setAttribute('data-request', q.r);
      var title = document.createElementNS(SVG, 'title');
      title.textContent = 'request ' + q.r + ': ' + q.strategy + ', ' + num(q.before) + ' → ' + tokens(q.after);
      r.appendChild(title);
      r.addEventListener('click', function () { showLedger(i); });
      r.addEventListener('keydown', function (e) { if (e.key === 'Enter') showLedger(i); });
      marks[i] = r;
    });
    // The scale: gridlines in the chart, their values beside it as text
    // (text inside the stretched SVG would be distorted).
    var plot = el('div', 'plot');
    var yTicks = ticks(top, 4), xTicks = ticks(n - 1, 8);
    yTicks.forEach(function (v) {
      var g = document.createElementNS(SVG, 'line');
      g.setAttribute('class', 'grid');
      g.setAttribute('x1', 0); g.setAttribute('x2', W);
      g.setAttribute('y1', y(v)); g.setAttribute('y2', y(v));
      svg.insertBefore(g, svg.firstChild);
      var t = el('span', 'tick y', compact(v));
      t.style.top = (y(v) / H * 100) + '%';
      plot.appendChild(t);
    });
    xTicks.forEach(function (r) {
      var t = el('span', 'tick x', String(r));
      t.style.left = (((r + 0.5) * step) / W * 100) + '%';
      plot.appendChild(t);
    });
    plot.appendChild(el('span', 'axis y', 'tokens'));
    plot.appendChild(svg);
    host.appendChild(plot);
    var legend = el('div', 'legend');
    [['after', 'sent (after compaction)'], ['before', 'before compaction'], ['cut', 'compaction'], ['bad', 'compaction that misfired']]
      .concat(R.compactions.length ? [['agent', "the agent's own compaction"]] : [])
      .concat(R.requests.some(function (rq) { return rq.prompt !== undefined; }) ? [['billed', 'billed prompt (recorded)']] : [])
      .forEach(function (k) {
        var s = el('span');
        s.appendChild(el('span', 'key ' + k[0]));
        s.appendChild(document.createTextNode(k[1]));
        legend.appendChild(s);
      });
    legend.appendChild(el('span', null, 'lines: window ' + num(D.max) + ', trigger ' + num(D.trigger) + ', target ' + num(D.target) +
      '; across: request, up: tokens (' + D.units + ')'));
    host.appendChild(legend);
  })();

  // ------------------------------------------------------------ misfires
  (function misfires() {
    var host = document.getElementById('misfires');
    if (!D.misfires.length) return;
    host.appendChild(el('h2', null, D.misfires.length + ' misfires'));
    // A session that compacts at every request misfires the same way at
    // each: a run of one kind over consecutive requests is one line, its
    // requests listed when it is opened, so the chat is not pushed down.
    var runs = [], open = {};
    D.misfires.forEach(function (f) {
      var r = open[f.kind];
      if (r && f.request === r.to + 1) { r.to = f.request; r.items.push(f); return; }
      r = { kind: f.kind, from: f.request, to: f.request, items: [f] };
      open[f.kind] = r;
      runs.push(r);
    });
    runs.sort(function (a, b) { return a.from - b.from; });
    function line(f) {
      var li = el('li', null, f.kind.replace('_', ' ') + ' at request ' + f.request +
        (f.gap ? ' (' + f.gap + ' after the previous compaction)' : '') + ': ' + num(f.before) + ' → ' + tokens(f.after) + ' ');
      li.id = 'misfire-' + f.kind + '-' + f.request;
      li.appendChild(jump(f.message_index, 'show'));
      return li;
    }
    var ul = el('ul');
    runs.forEach(function (r) {
      if (r.items.length === 1) { ul.appendChild(line(r.items[0])); return; }
      var li = el('li', 'run');
      var d = el('details');
      d.appendChild(el('summary', null, 'requests ' + r.from + '–' + r.to + ': ' +
        (D.misfire_kinds[r.kind] || r.kind.replace('_', ' ')) + ', at each of ' + r.items.length + ' requests'));
      var inner = el('ul');
      r.items.forEach(function (f) { inner.appendChild(line(f)); });
      d.appendChild(inner);
      li.appendChild(d);
      ul.appendChild(li);
    });
    host.appendChild(ul);
  })();

  // ------------------------------------------------------------ links
  (function links() {
    var host = document.getElementById('links');
    if (R.parent) {
      var p = el('p', 'lead', 'A subagent of ');
      p.appendChild(link(R.parent, R.parent.label));
      host.appendChild(p);
    }
    if (R.subagents.length) {
      var s = el('p', 'lead', R.subagents.length + ' subagent sessions: ');
      R.subagents.forEach(function (l, k) {
        if (k) s.appendChild(document.createTextNode(', '));
        s.appendChild(link(l, l.label));
      });
      host.appendChild(s);
    }
  })();

  // ------------------------------------------------------------ the agent's compactions
  (function agent() {
    var host = document.getElementById('agent');
    if (!R.compactions.length) return;
    host.appendChild(el('h2', null, R.compactions.length + " compactions by the agent itself"));
    var ul = el('ul');
    R.compactions.forEach(function (c, k) {
      var li = el('li', null, agentLabel(c) + ' ');
      li.appendChild(jump(c.message, 'show (#' + c.message + ')'));
      ul.appendChild(li);
    });
    host.appendChild(ul);
  })();

  // ------------------------------------------------------------ search and filters
  var haystack = [];
  function textOf(i) {
    if (haystack[i] === undefined) {
      var parts = [];
      D.messages[i].blocks.forEach(function (b) {
        if (b.text) parts.push(b.text);
        if (b.args) parts.push(b.args);
        if (b.name) parts.push(b.name);
        if (b.id && toolOf[b.id]) parts.push(toolOf[b.id]);
      });
      haystack[i] = parts.join('\n').toLowerCase();
    }
    return haystack[i];
  }
  function visible(i) {
    var m = D.messages[i];
    if (hideRole[m.role]) return false;
    var any = m.blocks.length === 0;
    for (var j = 0; j < m.blocks.length; j++) {
      var b = m.blocks[j];
      if (hideType[b.t]) continue;
      if (onlyTool && !(b.id && toolOf[b.id] === onlyTool)) continue;
      any = true;
    }
    return any && !(onlyTool && m.blocks.length === 0);
  }
  function refilter() {
    for (var i = 0; i < rendered; i++) nodes[i].hidden = !visible(i);
    hits = null;
    find();
  }
  var hits = null, at = -1;
  var box, count;
  function find() {
    var q = box ? box.value.trim().toLowerCase() : '';
    for (var i = 0; i < rendered; i++) nodes[i].classList.remove('hit');
    if (!q) { hits = []; at = -1; count.textContent = ''; return; }
    hits = [];
    for (var k = 0; k < D.messages.length; k++) if (visible(k) && textOf(k).indexOf(q) >= 0) hits.push(k);
    at = -1;
    count.textContent = hits.length ? hits.length + ' messages match' : 'no match';
  }
  function step(d) {
    if (hits === null) find();
    if (!hits.length) return;
    at = at < 0 ? (d > 0 ? 0 : hits.length - 1) : (at + d + hits.length) % hits.length;
    var i = hits[at];
    renderUpTo(i + SLICE);
    hits.forEach(function (h) { if (nodes[h]) nodes[h].classList.add('hit'); });
    if (nodes[i]) {
      nodes[i].scrollIntoView({ block: 'center' });
      nodes[i].classList.add('current');
      hits.forEach(function (h) { if (h !== i && nodes[h]) nodes[h].classList.remove('current'); });
    }
    count.textContent = (at + 1) + ' of ' + hits.length + ' messages';
    count.setAttribute('data-at', i);
  }
  var checks = [];
  function clearFilters() {
    hideRole = {}; hideType = {}; onlyTool = '';
    checks.forEach(function (c) { c.checked = true; });
    if (toolPick) toolPick.value = '';
    refilter();
  }
  var toolPick = null;
  (function toolbar() {
    var host = document.getElementById('find');
    var bar = el('div', 'bar');
    box = el('input');
    box.type = 'search'; box.id = 'search'; box.placeholder = 'search the messages';
    box.addEventListener('input', function () { hits = null; find(); });
    box.addEventListener('keydown', function (e) { if (e.key === 'Enter') step(e.shiftKey ? -1 : 1); });
    var prev = el('button', null, '↑ previous'); prev.type = 'button'; prev.id = 'prev';
    var next = el('button', null, '↓ next'); next.type = 'button'; next.id = 'next';
    prev.addEventListener('click', function () { step(-1); });
    next.addEventListener('click', function () { step(1); });
    count = el('span', 'count'); count.id = 'search-count';
    bar.appendChild(box); bar.appendChild(prev); bar.appendChild(next); bar.appendChild(count);
    host.appendChild(bar);
    var filters = el('div', 'bar');
    function toggle(group, name, map) {
      var l = el('label');
      var c = el('input');
      c.type = 'checkbox'; c.checked = true; c.id = 'show-' + group + '-' + name;
      c.addEventListener('change', function () { map[name] = !c.checked; refilter(); });
      checks.push(c);
      l.appendChild(c); l.appendChild(document.createTextNode(name.replace('_', ' ')));
      filters.appendChild(l);
    }
    var roles = {}, types = {}, tools = {};
    D.messages.forEach(function (m) {
      roles[m.role] = true;
      m.blocks.forEach(function (b) { types[b.t] = true; if (b.t === 'tool_use' && b.id) tools[toolOf[b.id]] = true; });
    });
    filters.appendChild(el('span', 'muted', 'show:'));
    Object.keys(roles).sort().forEach(function (r) { toggle('role', r, hideRole); });
    filters.appendChild(el('span', 'muted', '· blocks:'));
    Object.keys(types).sort().forEach(function (t) { toggle('type', t, hideType); });
    var names = Object.keys(tools).sort();
    if (names.length) {
      toolPick = el('select'); toolPick.id = 'tool-filter';
      var all = el('option', null, 'every tool'); all.value = '';
      toolPick.appendChild(all);
      names.forEach(function (t) { var o = el('option', null, t); o.value = t; toolPick.appendChild(o); });
      toolPick.addEventListener('change', function () { onlyTool = toolPick.value; refilter(); });
      filters.appendChild(el('span', 'muted', '· tool:'));
      filters.appendChild(toolPick);
    }
    host.appendChild(filters);
  })();

  // A link such as session.html#q=timeout&n=2 opens the search at its
  // second match; #hide=role:tool,type:thinking and #tool=Bash set the
  // filters (n=-1 is the last match).
  function settings() {
    var p = new URLSearchParams(location.hash.slice(1));
    if (!p.has('q') && !p.has('hide') && !p.has('tool')) return;
    hideRole = {}; hideType = {};
    (p.get('hide') || '').split(',').forEach(function (h) {
      var kv = h.split(':');
      if (kv.length !== 2) return;
      if (kv[0] === 'role') hideRole[kv[1]] = true;
      if (kv[0] === 'type') hideType[kv[1]] = true;
    });
    checks.forEach(function (c) {
      var m = /^show-(role|type)-(.*)$/.exec(c.id);
      if (m) c.checked = !(m[1] === 'role' ? hideRole : hideType)[m[2]];
    });
    onlyTool = p.get('tool') || '';
    if (toolPick) toolPick.value = onlyTool;
    refilter();
    if (p.has('q')) {
      box.value = p.get('q');
      hits = null;
      var n = Number(p.get('n') || 1);
      for (var k = 0; k < Math.abs(n); k++) step(n < 0 ? -1 : 1);
    }
  }

  // A link such as session.html#r12 opens that request's compaction.
  function follow() {
    settings();
    var h = /^#r(\d+)$/.exec(location.hash);
    if (h) {
      var k = Number(h[1]);
      showLedger(k);
      // The ledger's buttons lead on to the messages it names.
      if (ledger.getBoundingClientRect().top > window.innerHeight) ledger.scrollIntoView();
    }
    var m = /^#m(\d+)$/.exec(location.hash);
    if (m) showMessage(Number(m[1]));
  }
  window.addEventListener('hashchange', follow);
  follow();

  // From the start of navigation: reading the page, parsing its data and
  // the first render, what a person waits for.
  var ms = performance.now();
  var out = document.getElementById('load-ms');
  out.textContent = num(D.messages.length) + ' messages, ' + n_compactions() + ' compactions; loaded in ' +
    ms.toFixed(0) + ' ms (script ' + (ms - started).toFixed(0) + ' ms)';
  out.setAttribute('data-ms', ms.toFixed(1));
  function n_compactions() { return D.requests.filter(function (q) { return q.ledger; }).length; }
})();
