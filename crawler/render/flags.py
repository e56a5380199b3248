"""Chromium's command line: what the crawl's browser turns off, and why.

Each flag costs or saves something measured (bench/render.py), or closes a way
for the browser to reach the network on its own (it has none: ``no_network.py``).
"""

from __future__ import annotations

# Measured on 300 pages of one site in 8 tabs (bench/render.py's notes): a new document
# per navigation (RenderDocument) cost the browser process a third of its CPU. One
# renderer process per site (--process-per-site) was cheaper still, and is not used:
# a page that loops or eats memory then holds or kills every other page of the site
# in the same process; a renderer a tab keeps each page's misbehaviour its own.
OUR_DISABLED_FEATURES = ("Translate", "RenderDocument", "BackForwardCache")
# Chromium honours only the last --disable-features it is given, and ours comes after
# Playwright's, so it repeats what Playwright disables (as of Playwright 1.65; a test
# compares with the installed one's). Without them Chromium upgraded every http://
# navigation of a public host to https://, so each page began with a navigation of the
# browser's own, aborted and reported; and it asked Google for the network time and
# search preconnects at start-up.
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding",
    "ThirdPartyStoragePartitioning", "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin", "OptimizationHints", "NetworkTimeServiceQuerying", "AimEnabled",
    "PreconnectToSearch")
FLAGS = ["--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-quic", "--mute-audio",
         # the browser has no network of its own (crawler.render.no_network): WebRTC
         # may not open UDP past the proxy, which leads nowhere
         "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
         "--webrtc-ip-handling-policy=disable_non_proxied_udp",
         "--dns-prefetch-disable",
         "--disable-features=" + ",".join(PLAYWRIGHT_DISABLED_FEATURES + OUR_DISABLED_FEATURES)]
