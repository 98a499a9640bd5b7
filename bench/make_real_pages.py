#!/usr/bin/python3
"""Builds tests/data/real_pages from a git mirror of mozilla/readability (Apache-2.0).

Run once by hand; its output is committed, and nothing is downloaded or built at test time.

  bench/make_real_pages.py MIRROR_GIT_DIR COMMIT OUT_DIR

Each chosen page of the mirror's test/test-pages/<name>/ gives
- pages/<name>.html.gz: source.html as served (a few transcoded to a legacy charset, below);
- its gold in gold.json: the main-text snippets (the text blocks of expected.html, the
  human-checked extraction) and the boilerplate snippets (text blocks of source.html's body
  that expected.html does not hold: navigation, footers, related links, comments, ...).

A text block is the text between two block-level boundaries (p, li, h1-h6, div, td, br, ...),
whitespace collapsed. Blocks shorter than MIN_WEIGHT (a CJK character counts 2) are left out:
"Home" or "Share" would be found by chance inside an article. A source block that shares half
or more of its 8-grams with expected.html is neither (a paragraph the reference trimmed is not
boilerplate). The page's title and byline are neither: an extractor may write them or not.
At most MAX_SNIPPETS of each kind per page, spread evenly over the page, so a 300-paragraph
encyclopedia article does not outweigh a short news item; each at most MAX_CHARS characters
(the block's start), which keeps the gold small.
"""
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys

import lxml.html

MIN_WEIGHT = 24
MAX_SNIPPETS = 30
MAX_CHARS = 160
URL = "http://fakehost/test/page.html"  # the URL the reference's own tests extract with

# name: (kind, language). Chosen for kinds and languages; the reference's feature tests (a few
# hundred bytes of synthetic markup), its two front pages and a duplicate are not here.
PAGES = {
    "aktualne": ("news", "cs"),
    "heise": ("news", "de"),
    "lemonde-1": ("news", "fr"),
    "liberation-1": ("news", "fr"),
    "videos-2": ("news", "fr"),
    "folha": ("news", "pt"),
    "la-nacion": ("news", "es"),
    "cnet-svg-classes": ("news", "es"),
    "gmw": ("news", "zh"),
    "qq": ("news", "zh"),
    "youth": ("news", "zh"),
    "pixnet": ("blog", "zh-TW"),
    "hukumusume": ("story", "ja"),
    "yahoo-4": ("news", "ja"),
    "002": ("blog", "en"),
    "mozilla-1": ("product", "en"),
    "mozilla-2": ("product", "en"),
    "google-sre-book-1": ("docs", "en"),
    "ietf-1": ("docs", "en"),
    "mercurial": ("docs", "en"),
    "mathjax": ("docs", "en"),
    "wikipedia": ("wiki", "en"),
    "wikipedia-3": ("wiki", "en"),
    "wikipedia-4": ("wiki", "en"),
    "toc-missing": ("blog", "en"),
    "keep-tabular-data": ("blog", "en"),
    "table-style-attributes": ("docs", "en"),
    "links-in-tables": ("blog", "en"),
    "001": ("blog", "en"),
    "daringfireball-1": ("blog", "en"),
    "tumblr": ("blog", "en"),
    "v8-blog": ("blog", "en"),
    "gitlab-blog": ("blog", "en"),
    "dropbox-blog": ("blog", "en"),
    "firefox-nightly-blog": ("blog", "en"),
    "medium-1": ("blog", "en"),
    "medium-2": ("blog", "en"),
    "keep-images": ("blog", "en"),
    "blogger": ("blog", "en"),
    "wordpress": ("blog", "en"),
    "simplyfound-1": ("blog", "en"),
    "topicseed-1": ("blog", "en"),
    "iab-1": ("blog", "en"),
    "ebb-org": ("blog", "en"),
    "lazy-image-1": ("blog", "en"),
    "spiceworks": ("forum", "en"),
    "archive-of-our-own": ("forum", "en"),
    "royal-road": ("forum", "en"),
    "lwn-1": ("forum", "en"),
    "ars-1": ("news", "en"),
    "herald-sun-1": ("news", "en"),
    "tmz-1": ("news", "en"),
    "wapo-1": ("news", "en"),
    "wapo-2": ("news", "en"),
    "telegraph": ("news", "en"),
    "webmd-1": ("news", "en"),
    "webmd-2": ("news", "en"),
    "medicalnewstoday": ("news", "en"),
    "lifehacker-working": ("news", "en"),
    "citylab-1": ("news", "en"),
    "salon-1": ("news", "en"),
    "theverge": ("news", "en"),
    "aclu": ("news", "en"),
    "seattletimes-1": ("news", "en"),
    "nytimes-1": ("news", "en"),
    "engadget": ("review", "en"),
    "ehow-1": ("howto", "en"),
    "ehow-2": ("howto", "en"),
}

# The reference stores every page as UTF-8. These are written in a legacy charset, so the
# benchmark also exercises decoding: qq declares gb2312 in its <meta> (the bytes the site
# served); the others are transcoded to their language's common legacy charset with the
# declaration changed to match. Characters the charset lacks become &#N; references.
TRANSCODE = {
    "qq": "gb2312",
    "hukumusume": "shift_jis",
    "aktualne": "windows-1250",
    "lemonde-1": "windows-1252",
}
# The WHATWG decoders for these labels are the larger charsets sites really write.
PYTHON_CODEC = {"gb2312": "gb18030", "shift_jis": "cp932"}

BLOCK = set(
    """address article aside blockquote body br caption center dd details dialog dir div dl dt
    fieldset figcaption figure footer form frameset h1 h2 h3 h4 h5 h6 header hgroup hr html li
    legend listing main menu nav noframes ol optgroup option p plaintext pre section summary
    table tbody td tfoot th thead tr ul xmp select iframe""".split()
)
NEVER_TEXT = {"script", "style", "noscript", "template", "head", "title", "svg", "math"}
SPACE = re.compile(r"[\s\u00a0\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]+")


# Permalink and backlink symbols ("Heading¶", "^ Cited work"): a markdown writer may drop them
# as link decoration, a plain-text one keeps them; a snippet without them matches both.
SYMBOLS = re.compile(r"\u00b6|\^(?=\s|$)")


def normalize(text):
    return SPACE.sub(" ", SYMBOLS.sub("", text)).strip()


def weight(text):
    return sum(2 if ord(c) >= 0x2E80 else 1 for c in text)


def text_blocks(root):
    """The page's text cut at block boundaries, in document order."""
    blocks = []
    current = []

    def flush():
        text = normalize("".join(current))
        if text:
            blocks.append(text)
        current.clear()

    def walk(element):
        tag = element.tag if isinstance(element.tag, str) else ""
        tag = tag.lower()
        if tag in NEVER_TEXT or not isinstance(element.tag, str):
            # Comments and processing instructions hold no text; their tails do.
            if element.tail:
                current.append(element.tail)
            return
        block = tag in BLOCK
        if block:
            flush()
        if element.text:
            current.append(element.text)
        for child in element:
            walk(child)
        if block:
            flush()
        if element.tail:
            current.append(element.tail)

    body = root.find("body") if root.tag == "html" else root
    walk(body if body is not None else root)
    flush()
    return blocks


def clip(text):
    """At most MAX_CHARS characters of a block, cut at a space where the text has spaces."""
    if len(text) <= MAX_CHARS:
        return text
    cut = text.rfind(" ", 0, MAX_CHARS + 1)
    return text[: cut if cut > MAX_CHARS // 2 else MAX_CHARS]


def grams(text, n=8):
    return {text[i : i + n] for i in range(max(1, len(text) - n + 1))}


def spread(items, limit):
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def git_show(mirror, commit, path):
    return subprocess.run(
        ["git", "-C", mirror, "show", f"{commit}:{path}"], check=True, capture_output=True
    ).stdout


def main():
    mirror, commit, out = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(os.path.join(out, "pages"), exist_ok=True)
    # Held-out: every third page of each group (the non-English pages are one group, the
    # English ones grouped by kind), in the order of a hash of their names: chosen before any
    # measurement, not by hand.
    groups = {}
    for name, (kind, lang) in PAGES.items():
        groups.setdefault(kind if lang == "en" else "not-en", []).append(name)
    split = {}
    for names in groups.values():
        names.sort(key=lambda n: hashlib.sha256(n.encode()).hexdigest())
        for i, n in enumerate(names):
            split[n] = "heldout" if i % 3 == 1 else "tuning"
    gold = []
    stats = []
    for name, (kind, lang) in PAGES.items():
        base = f"test/test-pages/{name}"
        source = git_show(mirror, commit, base + "/source.html").decode("utf-8")
        expected = git_show(mirror, commit, base + "/expected.html").decode("utf-8")
        meta = json.loads(git_show(mirror, commit, base + "/expected-metadata.json"))
        neutral = {normalize(meta.get(k) or "") for k in ("title", "byline")} - {""}

        main_blocks = [b for b in text_blocks(lxml.html.fromstring(expected)) if weight(b) >= MIN_WEIGHT]
        source_blocks = text_blocks(lxml.html.fromstring(source))
        source_text = " ".join(source_blocks)
        expected_text = " ".join(text_blocks(lxml.html.fromstring(expected)))
        expected_grams = grams(expected_text)
        main = []
        for b in main_blocks:
            # A block the reference rewrote (its text not in the source as such) cannot be
            # asked of any extractor.
            if b in source_text and b not in main and b not in neutral:
                main.append(b)
        boilerplate = []
        for b in source_blocks:
            if weight(b) < MIN_WEIGHT or b in boilerplate or b in neutral:
                continue
            if b in expected_text or any(b in n or n in b for n in neutral):
                continue
            g = grams(b)
            if len(g & expected_grams) * 2 >= len(g):
                continue
            boilerplate.append(b)
        main = [clip(b) for b in spread(main, MAX_SNIPPETS)]
        boilerplate = [clip(b) for b in spread(boilerplate, MAX_SNIPPETS)]

        charset = TRANSCODE.get(name, "utf-8")
        if name in TRANSCODE and charset != "gb2312":
            source = re.sub(r"charset=([\"']?)utf-8", r"charset=\g<1>" + charset, source, flags=re.I)
        data = source.encode(PYTHON_CODEC.get(charset, charset), errors="xmlcharrefreplace")
        with open(os.path.join(out, "pages", name + ".html.gz"), "wb") as f:
            # mtime 0: the same input gives the same bytes.
            f.write(gzip.compress(data, compresslevel=9, mtime=0))
        gold.append(
            {
                "name": name,
                "split": split[name],
                "kind": kind,
                "lang": lang,
                "url": URL,
                "content_type": f"text/html; charset={charset}",
                "main": main,
                "boilerplate": boilerplate,
            }
        )
        stats.append((name, split[name], len(main), len(boilerplate)))
    with open(os.path.join(out, "gold.json"), "w", encoding="utf-8") as f:
        f.write("[\n")
        f.write(",\n".join(json.dumps(g, ensure_ascii=False) for g in gold))
        f.write("\n]\n")
    for s in stats:
        print(*s)


if __name__ == "__main__":
    main()
