"""``--stylesheet builtin``: our own small XSL, so a person who opens a sitemap in a
browser sees a table instead of raw XML.

Search engines ignore ``<?xml-stylesheet?>``. Browsers apply an XSL only from
the sitemap's own origin, so the file is written beside the sitemaps and named
relatively. One stylesheet serves every kind of file: the index becomes a
table of its sitemaps (URL, newest lastmod), a shard a table of its URLs
(URL, lastmod, changefreq, priority, language versions, images, videos), the
News sitemap a table of its articles (date, title, publication), each with
its count. XSLT 1.0 only: that is what browsers run.
"""

from __future__ import annotations

BUILTIN = "builtin"
STYLESHEET_NAME = "sitemap.xsl"

BUILTIN_XSL = b"""<?xml version="1.0" encoding="UTF-8"?>
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:xhtml="http://www.w3.org/1999/xhtml"
    xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
    xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"
    xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
    exclude-result-prefixes="sm xhtml image video news">
  <xsl:output method="html" encoding="UTF-8" indent="yes"/>
  <xsl:template match="/">
    <html lang="en">
      <head>
        <meta charset="utf-8"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <title>
          <xsl:choose>
            <xsl:when test="sm:sitemapindex">Sitemap index</xsl:when>
            <xsl:otherwise>Sitemap</xsl:otherwise>
          </xsl:choose>
        </title>
        <style>
          body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem;
                 padding: 0 1rem; color: #1f2328; }
          h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
          p.summary { color: #59636e; margin: 0 0 1.25rem; }
          table { border-collapse: collapse; width: 100%; }
          th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #d1d9e0;
                   vertical-align: top; }
          th { background: #f6f8fa; font-weight: 600; position: sticky; top: 0; }
          td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
          tr:nth-child(even) td { background: #fbfcfd; }
          a { color: #0969da; text-decoration: none; word-break: break-all; }
          a:hover { text-decoration: underline; }
          .muted { color: #59636e; }
        </style>
      </head>
      <body>
        <xsl:apply-templates/>
      </body>
    </html>
  </xsl:template>

  <xsl:template match="sm:sitemapindex">
    <h1>Sitemap index</h1>
    <p class="summary">
      <span id="count"><xsl:value-of select="count(sm:sitemap)"/></span> sitemap(s).
      Search engines read the XML; this table is for people.
    </p>
    <table id="sitemaps">
      <thead><tr><th class="n">#</th><th>Sitemap</th><th>Newest lastmod</th></tr></thead>
      <tbody>
        <xsl:for-each select="sm:sitemap">
          <tr>
            <td class="n"><xsl:value-of select="position()"/></td>
            <td><a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a></td>
            <td><xsl:value-of select="sm:lastmod"/><xsl:if test="not(sm:lastmod)">
              <span class="muted">none</span></xsl:if></td>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>

  <xsl:template match="sm:urlset[sm:url/news:news]">
    <h1>News sitemap</h1>
    <p class="summary">
      <span id="count"><xsl:value-of select="count(sm:url)"/></span> article(s) of the
      last two days. Search engines read the XML; this table is for people.
    </p>
    <table id="urls">
      <thead>
        <tr><th class="n">#</th><th>URL</th><th>Published</th><th>Title</th>
          <th>Publication</th></tr>
      </thead>
      <tbody>
        <xsl:for-each select="sm:url">
          <tr>
            <td class="n"><xsl:value-of select="position()"/></td>
            <td><a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a></td>
            <td><xsl:value-of select="news:news/news:publication_date"/></td>
            <td><xsl:value-of select="news:news/news:title"/></td>
            <td><xsl:value-of select="news:news/news:publication/news:name"/>
              (<xsl:value-of select="news:news/news:publication/news:language"/>)</td>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>

  <xsl:template match="sm:urlset">
    <h1>Sitemap</h1>
    <p class="summary">
      <span id="count"><xsl:value-of select="count(sm:url)"/></span> URL(s)
      <xsl:if test="sm:url/xhtml:link">, with
        <xsl:value-of select="count(sm:url/xhtml:link)"/> language version link(s)</xsl:if>
      <xsl:if test="sm:url/image:image">, with
        <xsl:value-of select="count(sm:url/image:image)"/> image(s)</xsl:if>
      <xsl:if test="sm:url/video:video">, with
        <xsl:value-of select="count(sm:url/video:video)"/> video(s)</xsl:if>.
      Search engines read the XML; this table is for people.
    </p>
    <table id="urls">
      <thead>
        <tr><th class="n">#</th><th>URL</th><th>Last modified</th>
          <xsl:if test="sm:url/sm:changefreq"><th>Change frequency</th></xsl:if>
          <xsl:if test="sm:url/sm:priority"><th class="n">Priority</th></xsl:if>
          <xsl:if test="sm:url/xhtml:link"><th>Languages</th></xsl:if>
          <xsl:if test="sm:url/image:image"><th class="n">Images</th></xsl:if>
          <xsl:if test="sm:url/video:video"><th>Videos</th></xsl:if>
        </tr>
      </thead>
      <tbody>
        <xsl:variable name="freq" select="boolean(sm:url/sm:changefreq)"/>
        <xsl:variable name="prio" select="boolean(sm:url/sm:priority)"/>
        <xsl:variable name="lang" select="boolean(sm:url/xhtml:link)"/>
        <xsl:variable name="imgs" select="boolean(sm:url/image:image)"/>
        <xsl:variable name="vids" select="boolean(sm:url/video:video)"/>
        <xsl:for-each select="sm:url">
          <tr>
            <td class="n"><xsl:value-of select="position()"/></td>
            <td><a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a></td>
            <td><xsl:value-of select="sm:lastmod"/></td>
            <xsl:if test="$freq"><td><xsl:value-of select="sm:changefreq"/></td></xsl:if>
            <xsl:if test="$prio"><td class="n"><xsl:value-of select="sm:priority"/></td></xsl:if>
            <xsl:if test="$lang">
              <td><xsl:for-each select="xhtml:link">
                <a href="{@href}"><xsl:value-of select="@hreflang"/></a>
                <xsl:if test="position() != last()"><xsl:text> </xsl:text></xsl:if>
              </xsl:for-each></td>
            </xsl:if>
            <xsl:if test="$imgs">
              <td class="n"><xsl:value-of select="count(image:image)"/></td>
            </xsl:if>
            <xsl:if test="$vids">
              <td><xsl:for-each select="video:video">
                <a href="{video:content_loc | video:player_loc[not(../video:content_loc)]}">
                  <xsl:value-of select="video:title"/></a>
                <xsl:if test="position() != last()"><br/></xsl:if>
              </xsl:for-each></td>
            </xsl:if>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>
</xsl:stylesheet>
"""
