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
  function tokens(n) { return Number(n).toLocaleString('en-US') + ' tokens'; }

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
        c.appendChild(el('span', 'name', '→ ' + (b.name || '?')));
        if (b.id) c.appendChild(el('span', 'badge', b.id));
        c.appendChild(el('pre', 'args', b.args || ''));
        return c;
      }
      case 'tool_result': {
        var r = el('div', 'result');
        var head = el('div', 'who', 'result' + (b.id ? ' of ' + b.id : ''));
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
    var who = el('div', 'who', m.role + ' · turn ' + m.turn + ' · #' + i +
      (m.request !== undefined ? ' · request ' + m.request : ''));
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
      var node = message(i);
      nodes[i] = node;
      frag.appendChild(node);
    }
    rendered = n;
    chat.insertBefore(frag, more);
    more.textContent = rendered < D.messages.length
      ? (D.messages.length - rendered) + ' more messages below'
      : 'end of the record: ' + D.messages.length + ' messages';
  }

  function showMessage(i) {
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
      L.messages_before + ' → ' + L.messages_after + ' messages; stages: ' + (L.stages.join(', ') || 'none') +
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
    host.appendChild(el('h2', null, n + ' requests under ' + D.config + ' (click a compaction)'));
    if (!n) return;
    var W = 1000, H = 140;
    var top = D.max;
    D.requests.forEach(function (q) { top = Math.max(top, q.before); });
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
    D.requests.forEach(function (q, i) {
      if (!q.ledger) return;
      var r = rect('compaction' + (bad[q.r] ? ' misfire' : ''), i * step, 0, Math.max(step, 3), 10);
      r.setAttribute('tabindex', '0');
      r.setAttribute('data-request', q.r);
      var title = document.createElementNS(SVG, 'title');
      title.textContent = 'request ' + q.r + ': ' + q.strategy + ', ' + q.before + ' → ' + q.after + ' tokens';
      r.appendChild(title);
      r.addEventListener('click', function () { showLedger(i); });
      r.addEventListener('keydown', function (e) { if (e.key === 'Enter') showLedger(i); });
      marks[i] = r;
    });
    host.appendChild(svg);
    var legend = el('div', 'legend');
    [['after', 'sent (after compaction)'], ['before', 'before compaction'], ['cut', 'compaction'], ['bad', 'compaction that misfired']]
      .forEach(function (k) {
        var s = el('span');
        s.appendChild(el('span', 'key ' + k[0]));
        s.appendChild(document.createTextNode(k[1]));
        legend.appendChild(s);
      });
    legend.appendChild(el('span', null, 'lines: window ' + D.max + ', trigger ' + D.trigger + ', target ' + D.target));
    host.appendChild(legend);
  })();

  // ------------------------------------------------------------ misfires
  (function misfires() {
    var host = document.getElementById('misfires');
    if (!D.misfires.length) return;
    host.appendChild(el('h2', null, D.misfires.length + ' misfires'));
    var ul = el('ul');
    D.misfires.forEach(function (f) {
      var li = el('li', null, f.kind.replace('_', ' ') + ' at request ' + f.request +
        (f.gap ? ' (' + f.gap + ' after the previous compaction)' : '') + ': ' + f.before + ' → ' + f.after + ' tokens ');
      li.id = 'misfire-' + f.kind + '-' + f.request;
      li.appendChild(jump(f.message_index, 'show'));
      ul.appendChild(li);
    });
    host.appendChild(ul);
  })();

  // A link such as session.html#r12 opens that request's compaction.
  function follow() {
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
  out.textContent = D.messages.length + ' messages, ' + n_compactions() + ' compactions; loaded in ' +
    ms.toFixed(0) + ' ms (script ' + (ms - started).toFixed(0) + ' ms)';
  out.setAttribute('data-ms', ms.toFixed(1));
  function n_compactions() { return D.requests.filter(function (q) { return q.ledger; }).length; }
})();
