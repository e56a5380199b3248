"""The HTML report's style sheet and script, inline in the page: it fetches nothing.

The script sorts a table by a click on a column, filters the URL table by what is
typed, and unfolds a folded finding when a link ("Fix first") leads to it; the
page reads the same without it, the findings folded.
"""

# the opening every page of ours shares (the audit report, the history of runs)
OPENING = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%TITLE%</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem auto; max-width: 80rem;
       padding: 0 1rem; color: #1f2328; }
"""
HEAD = OPENING + """h1 { font-size: 1.35rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
h2 small { color: #59636e; font-weight: normal; }
a { color: #0969da; text-decoration: none; word-break: break-all; }
.cards { display: flex; flex-wrap: wrap; gap: .6rem; }
.card { border: 1px solid #d1d9e0; border-radius: 6px; padding: .5rem .8rem; min-width: 7rem; }
.card b { display: block; font-size: 1.3rem; } .card span { color: #59636e; }
.card.bad { border-color: #cf222e; } .card.bad b { color: #cf222e; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5rem; margin-top: 1rem; }
figure.chart { margin: 0; } figcaption { font-weight: 600; margin-bottom: .3rem; }
svg rect { fill: #54aeff; } svg text { font: 12px system-ui, sans-serif; fill: #1f2328; }
table { border-collapse: collapse; width: 100%; margin-top: .5rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #d1d9e0;
         vertical-align: top; }
th { background: #f6f8fa; cursor: pointer; user-select: none; position: sticky; top: 0; }
th.asc::after { content: " ▲"; } th.desc::after { content: " ▼"; }
tr.not-listed td:first-child { border-left: 3px solid #d4a72c; }
#filter { width: 100%; padding: .4rem; font: inherit; margin-top: .3rem; }
.badge { display: inline-block; border-radius: 1rem; padding: 0 .55rem; font-size: .8rem;
         font-weight: 600; color: #fff; text-transform: uppercase; letter-spacing: .03em; }
.badge.error { background: #cf222e; } .badge.warning { background: #9a6700; }
.badge.notice { background: #0969da; }
ol.fix-first { list-style: none; padding: 0; margin: 0; display: grid; gap: .5rem;
               grid-template-columns: repeat(auto-fill, minmax(34rem, 1fr)); }
ol.fix-first > li { border: 1px solid #d1d9e0; border-left-width: 4px; border-radius: 6px;
                    padding: .4rem .7rem; font-size: .92rem; }
ol.fix-first > li.sev-error { border-left-color: #cf222e; }
ol.fix-first > li.sev-warning { border-left-color: #bf8700; }
ol.fix-first > li.sev-notice { border-left-color: #0969da; }
ol.fix-first > li > a { font-weight: 600; font-size: 1.02rem; }
ol.fix-first > li > b { margin-left: .3rem; }
ol.fix-first p { margin: .2rem 0; } .why { color: #1f2328; } .how, .where { color: #59636e; }
p.sample { font-size: .88rem; } h2 small .badge { margin-left: .3rem; }
.clean, .unchecked { color: #59636e; } .clean b { color: #1a7f37; }
.banner { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px;
          padding: .5rem .8rem; }
p.more { color: #59636e; }
#probes { margin: 1rem 0; } #probes details.more > summary { color: #0969da; }
details > summary { cursor: pointer; } details > summary > h2, details > summary > h3 {
  display: inline; } section > details { margin-top: 1.2rem; }
.card.out { background: #f6f8fa; } table.compact { width: auto; }
td.bad { color: #cf222e; font-weight: 600; }
</style></head><body>"""

SCRIPT = """<script>
for (const table of document.querySelectorAll("table.sortable")) {
  table.querySelectorAll("th").forEach((th, column) => th.addEventListener("click", () => {
    const rows = Array.from(table.tBodies[0].rows);
    const ascending = !th.classList.contains("asc");
    table.querySelectorAll("th").forEach(h => h.classList.remove("asc", "desc"));
    th.classList.add(ascending ? "asc" : "desc");
    const value = row => {
      const cell = row.cells[column];
      const text = cell.dataset.sort ?? cell.textContent;
      return text !== "" && !isNaN(text) ? Number(text) : text.toLowerCase();
    };
    rows.sort((a, b) => {
      const x = value(a), y = value(b);
      const order = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0)
                                          : (typeof x === "number" ? -1 : 1);
      return ascending ? order : -order;
    });
    table.tBodies[0].append(...rows);
  }));
}
// a link to a folded finding ("Fix first" → its rows) opens it
const unfold = () => {
  const target = location.hash && document.getElementById(location.hash.slice(1));
  const folded = target && (target.querySelector("details") || target.closest("details"));
  if (folded) folded.open = true;
};
addEventListener("hashchange", unfold);
unfold();
const filter = document.getElementById("filter");
filter.addEventListener("input", () => {
  const needle = filter.value.toLowerCase();
  let shown = 0;
  for (const row of document.getElementById("url-table").tBodies[0].rows) {
    const hit = row.textContent.toLowerCase().includes(needle);
    row.hidden = !hit;
    shown += hit;
  }
  document.getElementById("shown").textContent = shown.toLocaleString();
});
</script>"""
