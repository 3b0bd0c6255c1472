// packbot dashboard: reads only the bot's read API (/api/v1/*) and follows /api/v1/events.
// No dependencies, no network beyond the bot. A token (needed once the bot has a control token)
// is given once as #token=... in the URL and kept in this tab's sessionStorage.

const state = { status: null, pnl: null, pulls: null, orders: null, listings: null, scores: null };
let serverOffsetMs = 0; // the bot's clock (sped up in the simulator) minus ours

(function takeToken() {
  const m = /token=([^&]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem('packbot-token', decodeURIComponent(m[1]));
    history.replaceState(null, '', location.pathname);
  }
})();

function headers() {
  const t = sessionStorage.getItem('packbot-token');
  return t ? { authorization: `Bearer ${t}` } : {};
}

async function get(name) {
  const res = await fetch(`/api/v1/${name}`, { headers: headers(), cache: 'no-store' });
  if (!res.ok)
    throw new Error(
      `${name}: HTTP ${res.status}${res.status === 401 ? ' (open the page with #token=…)' : ''}`,
    );
  return res.json();
}

// ---------------------------------------------------------------- formatting

const usdFmt = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const usd = (v) => (v === null || v === undefined ? '–' : usdFmt.format(v));
const signed = (v) => (v === null || v === undefined ? '–' : `${v > 0 ? '+' : ''}${usdFmt.format(v)}`);
const cls = (v) => (v > 0 ? 'up' : v < 0 ? 'down' : '');
const now = () => Date.now() + serverOffsetMs;

function rel(isoTime) {
  if (!isoTime) return '–';
  const d = Date.parse(isoTime) - now();
  const a = Math.abs(d) / 1000;
  const span =
    a < 45
      ? `${Math.round(a)} s`
      : a < 5400
        ? `${Math.round(a / 60)} min`
        : a < 129600
          ? `${Math.round(a / 3600)} h`
          : `${Math.round(a / 86400)} d`;
  if (a < 1) return 'now';
  return d >= 0 ? `in ${span}` : `${span} ago`;
}

function esc(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function timeCell(isoTime) {
  return `<span title="${esc(isoTime ?? '')}" data-rel="${esc(isoTime ?? '')}">${rel(isoTime)}</span>`;
}

function pill(text, kind) {
  return `<span class="pill ${esc(kind ?? text)}">${esc(text)}</span>`;
}

// ---------------------------------------------------------------- chart

function chart(points, key, cssClass, label) {
  const w = 600;
  const h = 160;
  const pad = { l: 56, r: 8, t: 14, b: 18 };
  const pts = points.filter((p) => p[key] !== null);
  if (pts.length === 0)
    return `<svg class="chart" viewBox="0 0 ${w} ${h}"><text x="${pad.l}" y="${h / 2}">${label}: no data yet</text></svg>`;
  const xs = pts.map((p) => Date.parse(p.at));
  const ys = pts.map((p) => p[key]);
  let x0 = Math.min(...xs);
  let x1 = Math.max(...xs);
  if (x1 === x0) {
    x0 -= 1000;
    x1 += 1000;
  }
  let y0 = Math.min(...ys, key === 'cash_pnl_usd' ? 0 : Number.POSITIVE_INFINITY);
  let y1 = Math.max(...ys, key === 'cash_pnl_usd' ? 0 : Number.NEGATIVE_INFINITY);
  if (y1 === y0) {
    y0 -= 1;
    y1 += 1;
  }
  const X = (x) => pad.l + ((x - x0) / (x1 - x0)) * (w - pad.l - pad.r);
  const Y = (y) => pad.t + (1 - (y - y0) / (y1 - y0)) * (h - pad.t - pad.b);
  // A step line: a balance holds until the next change.
  let d = `M${X(xs[0]).toFixed(1)},${Y(ys[0]).toFixed(1)}`;
  for (let i = 1; i < pts.length; i++) d += `H${X(xs[i]).toFixed(1)}V${Y(ys[i]).toFixed(1)}`;
  d += `H${(w - pad.r).toFixed(1)}`;
  const zero =
    key === 'cash_pnl_usd'
      ? `<line class="zero" x1="${pad.l}" x2="${w - pad.r}" y1="${Y(0)}" y2="${Y(0)}"/>`
      : '';
  return `<svg class="chart" viewBox="0 0 ${w} ${h}" preserveAspectRatio="none" data-points="${pts.length}">
    <text x="4" y="${pad.t}">${usd(y1)}</text><text x="4" y="${h - pad.b}">${usd(y0)}</text>
    <text x="${pad.l}" y="${h - 4}">${rel(new Date(x0).toISOString())}</text>
    <text x="${w - pad.r}" y="${h - 4}" text-anchor="end">${label}: ${usd(ys[ys.length - 1])}</text>
    ${zero}<path class="${cssClass}" d="${d}"/></svg>`;
}

/**
 * Expected vs realized over time: the cumulative gap (realized − expected net, open pulls marked
 * by the model) after each order, inside the band where 95% of gaps fall if the model is right
 * (±1.96 standard errors around 0). A gap leaving the band and staying out is a drift.
 */
function gapChart(series, z) {
  const w = 600;
  const h = 160;
  const pad = { l: 56, r: 8, t: 14, b: 18 };
  if (series.length === 0)
    return `<svg class="chart" viewBox="0 0 ${w} ${h}" data-points="0"><text x="${pad.l}" y="${h / 2}">expected vs realized: no order with the model's promise yet</text></svg>`;
  const xs = series.map((p) => Date.parse(p.at));
  const band = series.map((p) => 1.96 * p.se_usd);
  let x0 = Math.min(...xs);
  let x1 = Math.max(...xs);
  if (x1 === x0) {
    x0 -= 1000;
    x1 += 1000;
  }
  let y0 = Math.min(0, ...series.map((p, i) => Math.min(p.gap_usd, -band[i])));
  let y1 = Math.max(0, ...series.map((p, i) => Math.max(p.gap_usd, band[i])));
  if (y1 === y0) {
    y0 -= 1;
    y1 += 1;
  }
  const X = (x) => pad.l + ((x - x0) / (x1 - x0)) * (w - pad.l - pad.r);
  const Y = (y) => pad.t + (1 - (y - y0) / (y1 - y0)) * (h - pad.t - pad.b);
  const upper = xs.map((x, i) => `${X(x).toFixed(1)},${Y(band[i]).toFixed(1)}`);
  const lower = xs.map((x, i) => `${X(x).toFixed(1)},${Y(-band[i]).toFixed(1)}`).reverse();
  const gap = xs
    .map((x, i) => `${i === 0 ? 'M' : 'L'}${X(x).toFixed(1)},${Y(series[i].gap_usd).toFixed(1)}`)
    .join('');
  const last = series[series.length - 1];
  const outside = Math.abs(last.gap_usd) > 1.96 * last.se_usd;
  return `<svg class="chart" viewBox="0 0 ${w} ${h}" preserveAspectRatio="none" data-points="${series.length}" data-outside="${outside}">
    <text x="4" y="${pad.t}">${usd(y1)}</text><text x="4" y="${h - pad.b}">${usd(y0)}</text>
    <text x="${pad.l}" y="${h - 4}">${rel(new Date(x0).toISOString())}</text>
    <text x="${w - pad.r}" y="${h - 4}" text-anchor="end">gap ${signed(last.gap_usd)} · 95% band ±${usd(1.96 * last.se_usd)} · z ${z === null ? '–' : z.toFixed(2)}</text>
    <polygon class="band" points="${[...upper, ...lower].join(' ')}"/>
    <line class="zero" x1="${pad.l}" x2="${w - pad.r}" y1="${Y(0)}" y2="${Y(0)}"/><path class="gap${outside ? ' outside' : ''}" d="${gap}"/></svg>`;
}

/** The whole and each part: expected, realized, gap, its 95% band and z (|z| > 3 is a drift). */
/** The books against the balance: cash P&L = balance change − adjustments, and each adjustment. */
function booksSection(name, b) {
  if (!b) return '';
  const fee =
    b.listing_fee_rate === null
      ? ''
      : ` · marketplace fee measured ${(b.listing_fee_rate * 100).toFixed(2)}%`;
  const waiting =
    b.sales_awaiting_credit > 0 ? ` · ${b.sales_awaiting_credit} sale(s) awaiting their credit` : '';
  const rows = b.adjustments
    .map(
      (x) =>
        `<tr><td>${timeCell(x.at)}</td><td class="num">${signed(x.amount_usd)}</td><td>${esc(x.reason)}</td><td>${esc(x.source)}</td></tr>`,
    )
    .join('');
  return `<h3>Books against the balance</h3>
  <p data-testid="books-${esc(name)}">cash P&amp;L ${signed(b.cash_pnl_usd)} = balance change ${signed(b.balance_change_usd)} − adjustments ${signed(b.adjustments_usd)} · residual <span class="${b.residual_usd === 0 ? 'up' : 'down'}">${signed(b.residual_usd)}</span>${fee}${waiting}</p>
  ${rows ? `<div class="scroll"><table data-testid="adjustments-${esc(name)}"><thead><tr><th>when</th><th class="num">amount</th><th>reason</th><th>reading</th></tr></thead><tbody>${rows}</tbody></table></div>` : ''}`;
}

function modelSection(name, m) {
  if (!m) return '';
  const zCell = (z) =>
    z === null
      ? '–'
      : `<span class="${Math.abs(z) > 3 ? 'down' : ''}">${z >= 0 ? '+' : ''}${z.toFixed(2)}</span>`;
  const row = (label, g) =>
    `<tr><td>${label}</td><td class="num">${g.packs}</td><td class="num">${signed(g.expected_net_usd)}</td><td class="num">${signed(g.realized_net_usd)}</td><td class="num ${cls(g.gap_usd)}">${signed(g.gap_usd)}</td><td class="num">±${usd(1.96 * g.se_usd)}</td><td class="num">${zCell(g.z)}</td></tr>`;
  const version = m.by_strategy.length > 0 ? m.by_strategy[m.by_strategy.length - 1].version : '';
  return `<h3>Expected vs realized <span class="muted">· ${m.resolved_packs} of ${m.packs} packs resolved${version ? ` · version ${esc(version)}` : ''}</span></h3>
  <div class="charts" data-testid="model-${esc(name)}">${gapChart(m.series, m.z)}
  <table data-testid="model-table-${esc(name)}"><thead><tr><th></th><th class="num">packs</th><th class="num">expected</th><th class="num">realized</th><th class="num">gap</th><th class="num">95% band</th><th class="num">z</th></tr></thead><tbody>
    ${row('all', m)}${row('sell-back', m.parts.sell_back)}${row('listing (cards listed)', m.parts.listing)}${row('held', m.parts.held)}
  </tbody></table></div>`;
}

// ---------------------------------------------------------------- sections

function kpi(label, value, sub, extraClass, testid, ratio) {
  const bar =
    ratio === undefined
      ? ''
      : `<div class="bar"><span style="width:${Math.min(100, Math.max(0, ratio * 100)).toFixed(0)}%"></span></div>`;
  return `<div class="kpi"><div class="label">${label}</div><div class="value ${extraClass ?? ''}"${testid ? ` data-testid="${testid}"` : ''}>${value}</div>${sub ? `<div class="sub">${sub}</div>` : ''}${bar}</div>`;
}

/** What an order bought: `2 × starter`, or the card by name (its id when the name is not known yet). */
function orderWhat(o) {
  if (o.operation === 'card') return `card ${esc(o.card_name ?? o.card_id ?? '–')}`;
  return `${o.quantity} × ${esc(o.pack_type ?? '–')}`;
}

/**
 * What an order cost: the service's charge once known; until then its bound (a card's max_price +
 * fee, a pack order's planned price), marked ≤ so it is never read as a charge (docs/api.md).
 */
function orderAmount(o) {
  if (!o.amount_is_bound) return usd(o.charged_usd);
  return `<span title="a bound: the most it can have cost">≤ ${usd(o.charged_usd ?? o.bound_usd)}</span>`;
}

function accountSection(a) {
  const name = a.name;
  const pnlAccount = state.pnl?.accounts.find((x) => x.name === name);
  const pnl = pnlAccount?.points ?? [];
  const scores = state.scores?.accounts.find((x) => x.name === name);
  const pulls = (state.pulls?.pulls ?? []).filter((p) => p.account === name);
  const listings = (state.listings?.listings ?? []).filter((l) => l.account === name);
  const doubt = (state.orders?.orders ?? []).filter((o) => o.account === name && o.in_doubt);
  const recent = (state.orders?.orders ?? []).filter((o) => o.account === name).slice(0, 10);
  const packs = a.packs;
  const packsSub =
    packs.max_per_day === null
      ? 'service ceiling unknown yet'
      : `of ${packs.max_per_day} a day · ${packs.left_today} left · resets ${rel(packs.resets_at)}`;
  const pauses =
    a.pauses.length === 0
      ? '<span class="up">opening</span>'
      : a.pauses.map((p) => `${pill(p.reason, 'wait')} ${esc(p.detail)}`).join('<br>');
  return `<section class="account" data-account="${esc(name)}">
  <h2>${esc(name)} <span class="muted">· strategy ${esc(a.strategy)}</span></h2>
  <div class="kpis">
    ${kpi('balance', usd(a.balance_usd), a.balance_at ? `reported ${rel(a.balance_at)}` : '', '', `balance-${name}`)}
    ${kpi('net P&L', signed(a.net_pnl_usd), `cash ${signed(a.cash_pnl_usd)} · marked (stop-loss) ${signed(a.marked_pnl_usd)}`, cls(a.net_pnl_usd), `net-${name}`)}
    ${kpi('packs today', String(packs.today), packsSub, '', `packs-${name}`, packs.max_per_day ? packs.today / packs.max_per_day : undefined)}
    ${kpi('spend today', usd(a.spend.today_usd), `cap ${usd(a.spend.daily_cap_usd)} a day`, '', '', a.spend.today_usd / a.spend.daily_cap_usd)}
    ${kpi('spend in total', usd(a.spend.total_usd), `cap ${usd(a.spend.total_cap_usd)} · reserve ${usd(a.spend.min_balance_usd)} · stop loss ${usd(a.spend.stop_loss_usd)}`, '', '', a.spend.total_usd / a.spend.total_cap_usd)}
    ${kpi('next purchase', a.next_purchase_at && Date.parse(a.next_purchase_at) <= now() ? 'allowed now' : rel(a.next_purchase_at), esc(a.waiting ?? ''), '', `next-${name}`)}
    ${kpi('orders in doubt', String(a.orders_in_doubt), `${a.listings_active} listed · ${a.holdings} held`, a.orders_in_doubt > 0 ? 'down' : '', `doubt-${name}`)}
  </div>
  <h3>Pauses</h3><div data-testid="pauses-${esc(name)}">${pauses}</div>
  <h3>Balance and cash P&amp;L</h3>
  <div class="charts" data-testid="pnl-${esc(name)}">${chart(pnl, 'balance_usd', 'balance', 'balance')}${chart(pnl, 'cash_pnl_usd', 'cash', 'cash P&L')}</div>
  ${booksSection(name, a.books)}
  ${modelSection(name, pnlAccount?.model)}
  <div class="grid2">
  <div><h3>Scores ${scores?.scored_at ? `<span class="muted">· ${rel(scores.scored_at)}</span>` : ''}</h3>
    ${scores?.decision ? `<p>${pill(scores.decision.action)} ${esc(scores.decision.reason)}</p>` : ''}
    <div class="scroll"><table data-testid="scores-${esc(name)}"><thead><tr><th>pack</th><th>risk</th><th class="num">price</th><th class="num">EV</th><th class="num">realized EV / price</th><th class="num">P(loss)</th><th>decision</th></tr></thead><tbody>
    ${(scores?.rows ?? []).map((r) => `<tr><td>${esc(r.name)}</td><td>${esc(r.risk_level)}</td><td class="num">${usd(r.price_usd)}</td><td class="num">${usd(r.ev_usd)}</td><td class="num">${r.realized_ev_ratio === null ? '–' : r.realized_ev_ratio.toFixed(3)}</td><td class="num">${(r.p_loss * 100).toFixed(0)}%</td><td>${pill(r.decision)} <span class="muted">${esc(r.reason)}</span></td></tr>`).join('')}
    </tbody></table></div></div>
  <div><h3>Recent pulls</h3><div class="scroll"><table data-testid="pulls-${esc(name)}"><thead><tr><th></th><th>card</th><th>grade</th><th class="num">value</th><th>decision</th><th>outcome</th><th>pulled</th></tr></thead><tbody>
    ${pulls.map((p) => `<tr data-pull="${esc(p.pull_id)}"><td>${p.image_url ? `<img src="${esc(p.image_url)}" alt="" loading="lazy">` : ''}</td><td>${esc(p.name)}${p.is_chase ? ' ★' : ''}<div class="muted">${esc(p.rarity)}</div></td><td>${esc(p.grade ?? '–')}</td><td class="num">${usd(p.value_usd)}</td><td>${p.decision ? `${pill(p.decision.action)} ${p.decision.price_usd !== null ? usd(p.decision.price_usd) : ''}<div class="muted">${esc(p.decision.reason)}</div>` : pill('undecided', 'pending')}</td><td>${pill(p.outcome.kind.replace('_', ' '), p.outcome.kind)} ${p.outcome.amount_usd !== null ? usd(p.outcome.amount_usd) : ''}</td><td>${timeCell(p.pulled_at)}</td></tr>`).join('')}
    </tbody></table></div></div>
  <div><h3>Active listings</h3><table data-testid="listings-${esc(name)}"><thead><tr><th>card</th><th class="num">price</th><th>listed</th><th>next reprices</th><th>sells back</th><th>lock ends</th></tr></thead><tbody>
    ${
      listings.length === 0
        ? '<tr><td colspan="6" class="muted">nothing listed</td></tr>'
        : listings
            .map(
              (l) =>
                `<tr><td>${esc(l.name)}<div class="muted">value ${usd(l.value_usd)}</div></td><td class="num">${usd(l.price_usd)}</td><td>${timeCell(l.listed_at)}</td><td>${
                  l.schedule
                    .slice(0, 3)
                    .map((s) => `${rel(s.at)} → ${usd(s.price_usd)}`)
                    .join('<br>') || '–'
                }</td><td>${timeCell(l.sell_back_at)}</td><td>${timeCell(l.lock_ends_at)}</td></tr>`,
            )
            .join('')
    }
    </tbody></table></div>
  <div><h3>Orders in doubt</h3><table data-testid="doubt-${esc(name)}"><thead><tr><th>key</th><th>state</th><th>order</th><th class="num">amount</th><th>since</th><th>tries</th><th>why</th></tr></thead><tbody>
    ${doubt.length === 0 ? '<tr><td colspan="7" class="muted">none</td></tr>' : doubt.map((o) => `<tr><td>${esc(o.key)}</td><td>${pill(o.state)}</td><td>${orderWhat(o)}</td><td class="num">${orderAmount(o)}</td><td>${timeCell(o.created_at)}</td><td>${o.attempts}</td><td>${esc(o.error_message ?? o.error_code ?? '')}</td></tr>`).join('')}
    </tbody></table></div>
  <div><h3>Recent orders</h3><table data-testid="orders-${esc(name)}"><thead><tr><th>order</th><th>state</th><th class="num">charged</th><th>placed</th></tr></thead><tbody>
    ${recent.length === 0 ? '<tr><td colspan="4" class="muted">none yet</td></tr>' : recent.map((o) => `<tr data-order="${esc(o.key)}"><td>${orderWhat(o)}</td><td>${pill(o.state)}</td><td class="num">${orderAmount(o)}</td><td>${timeCell(o.created_at)}</td></tr>`).join('')}
    </tbody></table></div>
  </div>
</section>`;
}

function render() {
  const s = state.status;
  if (!s) return;
  document.getElementById('mode').textContent = `${s.mode}${s.embedded ? ' · embedded simulator' : ''}`;
  document.getElementById('clock').textContent =
    `bot time ${new Date(now()).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  const pause = document.getElementById('pause');
  pause.hidden = !s.pause.paused;
  pause.textContent = s.pause.paused
    ? `Opening packs is paused (${s.pause.reasons.join(', ')})${s.pause.by ? ` by ${s.pause.by}` : ''}${s.pause.note ? `: ${s.pause.note}` : ''}${s.pause.paused_at ? `, ${rel(s.pause.paused_at)}` : ''}. Selling and listings go on.`
    : '';
  document.getElementById('accounts').innerHTML = s.accounts.map(accountSection).join('');
  // A card image the browser cannot load (offline, or the simulator's placeholder host) is hidden.
  for (const img of document.querySelectorAll('td img'))
    img.addEventListener('error', () => img.classList.add('broken'), { once: true });
}

// ---------------------------------------------------------------- loading and live updates

async function refresh() {
  try {
    const [status, pnl, pulls, orders, listings, scores] = await Promise.all(
      ['status', 'pnl', 'pulls?limit=40', 'orders?limit=100', 'listings', 'scores'].map(get),
    );
    serverOffsetMs = Date.parse(status.now) - Date.now();
    Object.assign(state, { status, pnl, pulls, orders, listings, scores });
    document.getElementById('error').hidden = true;
    render();
  } catch (e) {
    const el = document.getElementById('error');
    el.hidden = false;
    el.textContent = `Cannot read the bot: ${e.message}`;
  }
}

let pending = null;
function soon() {
  if (pending) return;
  pending = setTimeout(() => {
    pending = null;
    void refresh();
  }, 250);
}

/** Follows the events stream with fetch (EventSource cannot send the token); reconnects. */
async function follow() {
  const live = document.getElementById('live');
  for (;;) {
    try {
      const res = await fetch('/api/v1/events', { headers: headers(), cache: 'no-store' });
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      live.textContent = 'live';
      live.classList.add('on');
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let i = buf.indexOf('\n\n');
        while (i >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (/^event: /m.test(block)) soon();
          i = buf.indexOf('\n\n');
        }
      }
    } catch {
      // fall through: reconnect
    }
    live.textContent = 'reconnecting…';
    live.classList.remove('on');
    await new Promise((r) => setTimeout(r, 3000));
  }
}

void refresh();
void follow();
// Relative times move on, and a missed event is caught up.
setInterval(() => {
  for (const el of document.querySelectorAll('[data-rel]')) el.textContent = rel(el.dataset.rel || null);
  if (state.status)
    document.getElementById('clock').textContent =
      `bot time ${new Date(now()).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}, 5000);
setInterval(() => void refresh(), 30000);
