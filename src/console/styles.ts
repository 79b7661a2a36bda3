/**
 * The console's style sheet, a constant of this module so it ships in dist/ with the code.
 * Colours keep WCAG AA contrast on their backgrounds; focus is always visible.
 */
export const CONSOLE_CSS = `
*{box-sizing:border-box}
/* The hidden attribute wins over any display a class gives. */
[hidden]{display:none!important}
:root{--fg:#1b2430;--muted:#4f5b6b;--line:#d9dee6;--bg:#f4f6f9;--card:#fff;--accent:#1d4ed8;--ok:#146c34;--ok-bg:#dcf5e4;--bad:#a1261f;--bad-bg:#fde2e1;--warn:#7a4d00;--warn-bg:#fff1cc;--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
a{color:var(--accent)}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.skip{position:absolute;left:-9999px;top:0;background:#fff;padding:8px;z-index:10}
.skip:focus{left:8px}
.visually-hidden{position:absolute!important;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.top{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:8px 16px;background:#111827;color:#fff;padding:10px 16px}
.brand{color:#fff;font-weight:700;text-decoration:none;font-size:17px}
.brand span{font-weight:400;color:#cbd5e1}
.status-bar{display:flex;flex-wrap:wrap;align-items:center;gap:8px 12px}
.status-bar .secondary{background:transparent;color:#fff;border-color:#6b7280}
.live{font-size:13px;font-weight:600;border-radius:999px;padding:2px 10px}
.live.on{background:#166534;color:#fff}
.live.off{background:#4b5563;color:#fff}
#header-clock{color:#e5e7eb}
nav{background:#fff;border-bottom:1px solid var(--line)}
nav ul{display:flex;gap:2px;margin:0;padding:0 8px;list-style:none;overflow-x:auto}
nav a{display:block;padding:10px 12px;text-decoration:none;color:var(--fg);border-bottom:3px solid transparent;white-space:nowrap}
nav a[aria-current=page]{border-bottom-color:var(--accent);color:var(--accent);font-weight:600}
main{max-width:1180px;margin:0 auto;padding:16px}
#view:focus{outline:none}
h1{font-size:22px;margin:8px 0 14px}
h1:focus{outline:none}
h2{font-size:17px;margin:18px 0 8px}
h3{font-size:14px;margin:12px 0 4px}
.sign-in{max-width:420px;margin:40px auto;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:20px}
.sign-in form{display:grid;gap:8px}
label{font-weight:600;font-size:14px}
input,select,textarea{font:inherit;color:inherit;border:1px solid #8a94a3;border-radius:6px;padding:7px 9px;background:#fff;min-width:0;max-width:100%}
textarea{width:100%}
button{font:inherit;font-weight:600;border:1px solid var(--accent);background:var(--accent);color:#fff;border-radius:6px;padding:7px 14px;cursor:pointer}
button.secondary{background:#fff;color:var(--accent)}
button.primary{background:var(--ok);border-color:var(--ok)}
button:disabled{background:#e5e7eb;color:#4b5563;border-color:#c4c9d1;cursor:not-allowed}
a.button{display:inline-block;font-weight:600;border:1px solid var(--accent);background:var(--accent);color:#fff;border-radius:6px;padding:7px 14px;text-decoration:none}
#header-account{color:#e5e7eb}
#header-account strong{color:#fff}
.reason{color:var(--bad);font-weight:600;white-space:nowrap}
.sent pre.code{max-height:none}
.filters,.search{display:flex;flex-wrap:wrap;align-items:center;gap:6px 10px;margin:0 0 12px}
/* A label and its control wrap as one: a row of filters never ends on a label whose control starts the next. */
.pair{display:inline-flex;align-items:center;gap:6px;min-width:0;max-width:100%}
.pair>input,.pair>select{min-width:0}
.pair.grow{flex:1 1 360px;max-width:640px}
.pair.grow>input{flex:1 1 auto}
.nowrap{white-space:nowrap}
.row{display:flex;flex-wrap:wrap;align-items:center;gap:8px}
.buttons{margin:8px 0}
.stack{display:grid;gap:10px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:0 24px}
.grid>section{min-width:0}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px;min-width:0}
.card-head{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:center;gap:6px}
.card-head h2,.card-head h3{margin:0}
.meta{margin:6px 0;color:var(--muted);font-size:14px}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;background:var(--card)}
th,td{text-align:left;padding:7px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:13px;color:var(--muted);font-weight:600}
table.rate-limits th .small{font-weight:400}
.num{text-align:right;white-space:nowrap}
.list td:first-child a{font-weight:600}
.empty{color:var(--muted);padding:14px 0}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:0}
.facts dt{color:var(--muted)}
.facts dd{margin:0;min-width:0;overflow-wrap:break-word}
.usage{display:flex;flex-direction:column;gap:4px}
.usage progress{width:100%;max-width:360px;height:10px}
.mono,code,pre{font-family:var(--mono);font-size:13px}
/* Prose breaks between words; a single word breaks only when it is wider than its line. */
.wrap{overflow-wrap:break-word}
/* Long identifiers (uuids, end-to-end ids, URLs, Pix keys) break only where they must: whole
   where there is room, anywhere on a phone, where a column cannot hold one. */
.id{overflow-wrap:break-word}
pre.code,textarea.code{background:#0f172a;color:#e2e8f0;border-radius:6px;padding:10px;overflow:auto;max-height:420px;white-space:pre-wrap;word-break:break-word;margin:6px 0}
.small{font-size:13px}
.muted{color:var(--muted)}
.badge{display:inline-block;border-radius:999px;padding:1px 9px;font-size:12px;font-weight:700;letter-spacing:.02em;vertical-align:middle}
.badge.ok{background:var(--ok-bg);color:var(--ok)}
.badge.bad{background:var(--bad-bg);color:var(--bad)}
.badge.warn{background:var(--warn-bg);color:var(--warn)}
.badge.muted{background:#e8ebf0;color:#374151}
.tag{display:inline-block;margin-left:6px;font-size:11px;background:#e0e7ff;color:#1e3a8a;border-radius:4px;padding:0 5px}
.timeline{list-style:none;margin:0;padding:0 0 0 14px;border-left:2px solid var(--line)}
.timeline li{margin:0 0 6px;position:relative}
.timeline li::before{content:"";position:absolute;left:-20px;top:7px;width:10px;height:10px;border-radius:50%;background:var(--accent)}
summary{cursor:pointer;padding:3px 0}
.request>summary{display:flex;flex-wrap:wrap;gap:4px 6px;align-items:center}
.hint{background:var(--warn-bg);color:var(--warn);border-radius:6px;padding:6px 10px;margin:8px 0}
.note{background:#e0e7ff;color:#1e3a8a;border-radius:6px;padding:8px 12px}
.error{color:var(--bad);font-weight:600;min-height:1em;margin:0}
.note.warn{background:var(--warn-bg);color:var(--warn)}
.note p{margin:0}
/* A command to copy: whole on a wide screen, broken anywhere on a phone rather than overflowing. */
.note code.command{display:block;margin:6px 0 0;padding:6px 8px;background:#fff;color:var(--fg);border-radius:4px;overflow-wrap:anywhere}
.listening-region{margin:0 0 12px}
.delivery-modes{border:1px solid var(--line);border-radius:8px;padding:8px 12px;margin:0 0 10px;background:var(--card)}
.delivery-modes legend{font-weight:600;font-size:14px;padding:0 4px}
.choice{display:grid;grid-template-columns:auto 1fr;gap:0 8px;align-items:baseline;margin:4px 0}
.choice p{grid-column:2;margin:0 0 4px}
.attempts .via{margin-top:4px;color:var(--muted)}
.attempts .via strong{color:var(--fg)}
.attempts .offered{margin:2px 0 0;padding-left:16px}
.attempts .remedy{margin:4px 0 0;color:var(--warn)}
.delivery-reason{margin:4px 0 8px;color:var(--warn);overflow-wrap:anywhere}
.attempts .cell-at,.attempts .cell-time{white-space:nowrap}
.links a{font-weight:600}
/* As many columns as fit at 240 px or more (four in a desktop card), empty ones collapsed so a group
   of three fills the width: wide enough for every label on one line and every value and placeholder whole. */
.fields{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,240px),1fr));gap:10px 14px;margin:0 0 4px}
.field{display:grid;gap:3px;align-content:start;min-width:0}
.field input,.field select{width:100%}
.check{display:flex;align-items:center;gap:6px;font-weight:400}
.request-filters{margin:0 0 12px}
.fault-form h2{margin-top:0}
.request .headers summary{font-size:14px;font-weight:700}
.offers{margin:6px 0;padding-left:18px}
.toast{position:fixed;right:16px;bottom:16px;max-width:min(520px,calc(100vw - 32px));padding:10px 14px;border-radius:8px;box-shadow:0 4px 16px rgba(0,0,0,.2);font-weight:600;z-index:20}
.toast.ok{background:var(--ok);color:#fff}
.toast.bad{background:var(--bad);color:#fff}
footer{max-width:1180px;margin:0 auto;padding:16px}
@media (max-width:640px){
  main{padding:10px}
  /* The header in three short lines (brand, live and sign-out; who; the clock), the sections on
     one row that scrolls sideways: together about a third of what they took wrapped. */
  .top{display:grid;grid-template-columns:minmax(0,1fr) auto auto;grid-template-areas:"brand live out" "who who who" "clock clock clock";gap:2px 8px;padding:6px 10px}
  .status-bar{display:contents}
  .brand{grid-area:brand;font-size:16px;align-self:center;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
  .brand span{display:none}
  #live{grid-area:live;align-self:center}
  #sign-out{grid-area:out;padding:2px 10px}
  /* One line: a long account id ends in an ellipsis here (its title, and the Account view, hold it whole). */
  #header-account{grid-area:who;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
  #header-clock{grid-area:clock}
  nav ul{padding:0 4px;scrollbar-width:thin}
  nav a{padding:7px 9px}
  .hide-narrow{display:none}
  .id{overflow-wrap:anywhere}
  .facts{grid-template-columns:1fr}
  .facts dt{margin-top:6px}
  .grid{grid-template-columns:1fr}
  .filters>input,.filters>select,.search>input{flex:1 1 140px}
  .filters>.pair,.search>.pair{flex:1 1 auto}
  .pair>input,.pair>select{flex:1 1 120px}
  th,td{padding:6px 5px}
  /* The transactions list as one card per row: id and status, then method and amount, then the
     external id; every row whole within a phone's width, nothing to scroll sideways. */
  table.transactions,table.transactions tbody{display:block}
  table.transactions thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
  table.transactions tr{display:grid;grid-template-columns:minmax(0,1fr) auto;grid-template-areas:"id status" "method amount" "ref ref" "created created";gap:2px 10px;padding:8px 6px;border-bottom:1px solid var(--line)}
  table.transactions td{display:block;border:0;padding:0;min-width:0}
  table.transactions td.empty{grid-column:1/-1}
  table.transactions .cell-id{grid-area:id}
  table.transactions .cell-status{grid-area:status;text-align:right}
  table.transactions .cell-method{grid-area:method;color:var(--muted);font-size:14px}
  table.transactions .cell-amount{grid-area:amount}
  table.transactions .cell-ref{grid-area:ref;color:var(--muted);font-size:13px}
  table.transactions .cell-created{grid-area:created;color:var(--muted);font-size:13px}
  /* Attempts as cards too: number, answer (with who gave it) and time, then when, then the body. */
  table.attempts,table.attempts tbody{display:block}
  table.attempts thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
  table.attempts tr{display:grid;grid-template-columns:auto minmax(0,1fr) auto;grid-template-areas:"n answer time" "n at at" "n body body";gap:2px 10px;padding:8px 4px;border-bottom:1px solid var(--line)}
  table.attempts td{display:block;border:0;padding:0;min-width:0}
  table.attempts .cell-n{grid-area:n;font-weight:600}
  table.attempts .cell-answer{grid-area:answer}
  table.attempts .cell-time{grid-area:time;text-align:right;white-space:nowrap}
  table.attempts .cell-at{grid-area:at;color:var(--muted);font-size:13px}
  table.attempts .cell-body{grid-area:body}
}
`;
