#!/usr/bin/python3
"""readability-lxml (Debian's python3-readability) on tests/data/real_pages, for
real_extract_bench, which scores its output with the same code as talaria's.

Prints one JSON line per page: {"name", "text" (the extraction as plain text), "wall_ms",
"cpu_ms" (medians over the repeats)}. A page is decoded from its Content-Type charset (with
the WHATWG meaning of the labels), as talaria decodes it; the timing covers the extraction
only (decoded text in, plain text out), as on talaria's side.

  bench/readability_real.py tests/data/real_pages [repeats] [name ...]
"""
import gzip
import json
import os
import statistics
import sys
import time

import lxml.html
from readability import Document

# Labels whose WHATWG decoder is a larger charset than Python's codec of the same name.
CODECS = {"gb2312": "gb18030", "gbk": "gb18030", "shift_jis": "cp932", "euc-kr": "cp949"}


def main():
    pages_dir = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    only = set(sys.argv[3:])
    gold = json.load(open(os.path.join(pages_dir, "gold.json"), encoding="utf-8"))
    for page in gold:
        if only and page["name"] not in only:
            continue
        raw = gzip.open(os.path.join(pages_dir, "pages", page["name"] + ".html.gz")).read()
        charset = page["content_type"].split("charset=")[1].strip().lower()
        html = raw.decode(CODECS.get(charset, charset), errors="replace")
        walls, cpus = [], []
        text = ""
        for _ in range(repeats):
            cpu_start = time.thread_time()
            start = time.perf_counter()
            summary = Document(html, url=page["url"]).summary(html_partial=True)
            text = lxml.html.fromstring(summary).text_content() if summary.strip() else ""
            walls.append(time.perf_counter() - start)
            cpus.append(time.thread_time() - cpu_start)
        out = {
            "name": page["name"],
            "text": text,
            "wall_ms": statistics.median(walls) * 1000,
            "cpu_ms": statistics.median(cpus) * 1000,
        }
        print(json.dumps(out, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
