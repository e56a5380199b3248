"""When a rendered page has settled: what the browser is told to track, and the test.

"Network idle" alone misses a link added by a 500 ms timer, and "no DOM change
for a while" alone misses a ``fetch()`` still in flight. A page has settled when
all of these hold at once:

* no request of the page is in flight, and none started or ended for
  :data:`QUIET` seconds (counted by the crawler, which answers every request);
* no ``fetch()`` or ``XMLHttpRequest`` of the page's scripts is waiting for its
  answer, nor a script for the body of one (``json()``, ``text()``...: a fetch
  settles with the answer's head, and the body reaches the page later, over
  another channel), counted in the page: the crawler hears of a request only
  once the browser has passed it on, and on a busy machine either can take
  longer than the quiet period, so a page read then would lack what the
  answer adds;
* no DOM mutation for :data:`QUIET` seconds (a ``MutationObserver``);
* no ``setTimeout`` of up to :data:`SHORT_TIMER_MS` is pending (a timer set
  for later than that is a poll or a carousel, not content on its way).

An endless ``setInterval`` that changes the DOM never settles: such a page is
read as it stands at ``--render-timeout`` and reported as such.
"""

from __future__ import annotations

QUIET = 0.1  # seconds of calm that count as settled
POLL = 0.05  # how often the test is made
SHORT_TIMER_MS = 5000

# Installed before any script of the page runs (Playwright's add_init_script).
TRACKER = """
(() => {
  if (window.__sitemapCrawler) return;
  const setTimer = window.setTimeout.bind(window);
  const clearTimer = window.clearTimeout.bind(window);
  const state = {changed: performance.now(), timers: new Set(), pending: 0, setTimer};
  window.__sitemapCrawler = state;
  const started = () => { state.pending += 1; };
  const ended = () => { state.pending -= 1; state.changed = performance.now(); };
  // a function returning a promise, counted as waiting until the promise settles
  const counted = (first) => function (...args) {
    started();
    let promise;
    try {
      promise = first.apply(this, args);
    } catch (error) {
      ended();
      throw error;
    }
    promise.then(ended, ended);
    return promise;
  };
  if (window.fetch) window.fetch = counted(window.fetch);
  // fetch() settles with the answer's head; the body reaches the page later, over
  // another channel: reading it is waiting too (json(), text() and the rest)
  for (const name of ["arrayBuffer", "blob", "bytes", "formData", "json", "text"]) {
    if (Response.prototype[name]) Response.prototype[name] = counted(Response.prototype[name]);
  }
  const sendFirst = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    started();
    this.addEventListener("loadend", ended, {once: true});
    try {
      return sendFirst.apply(this, args);
    } catch (error) {
      ended();
      throw error;
    }
  };
  window.setTimeout = function (handler, delay, ...args) {
    if (typeof handler !== "function" || Number(delay) > SHORT_MS) {
      return setTimer(handler, delay, ...args);
    }
    const id = setTimer(function () {
      state.timers.delete(id);
      return handler.apply(this, args);
    }, delay);
    state.timers.add(id);
    return id;
  };
  window.clearTimeout = function (id) {
    state.timers.delete(id);
    return clearTimer(id);
  };
  new MutationObserver(() => { state.changed = performance.now(); })
    .observe(document, {subtree: true, childList: true, attributes: true,
                        characterData: true});
})();
""".replace("SHORT_MS", str(SHORT_TIMER_MS))

# Waits in the page (one round trip, not one every few milliseconds: each costs the
# browser process a message) until the DOM has been still for ``quiet`` ms with no
# short timer or script request pending and ``network`` ms (what the network's quiet
# period still lacks) have passed, or ``most`` ms have passed; returns [ms since the
# last DOM change, short timers and script requests pending, the DOM serialised when
# it is calm (else null)]:
# serialising in the same round trip saves the browser a second one per page.
WAIT_CALM = """async ([quiet, most, network]) => {
  const serialise = () => {
    const type = document.doctype;
    const head = type ? "<!DOCTYPE " + type.name + ">" : "";
    return head + (document.documentElement ? document.documentElement.outerHTML : "");
  };
  const s = window.__sitemapCrawler;
  if (!s) return [1e9, 0, null];
  const start = performance.now();
  for (;;) {
    const since = performance.now() - s.changed;
    const waiting = s.timers.size + s.pending;
    const still = since >= quiet && waiting === 0 && performance.now() - start >= network;
    if (still || performance.now() - start >= most) {
      return [since, waiting, still ? serialise() : null];
    }
    const wait = Math.max(10, quiet - since, network - (performance.now() - start));
    await new Promise((done) => s.setTimer(done, wait));
  }
}"""


def calm(since_network: float, in_flight: int, since_dom_ms: float, waiting: int) -> bool:
    """The settle test, from what was measured (pure); ``waiting``: the page's short
    timers and script requests still pending."""
    return (in_flight == 0 and since_network >= QUIET and since_dom_ms >= QUIET * 1000
            and waiting == 0)
