#!/usr/bin/python3
"""readability-lxml (Debian's python3-readability) on the extraction benchmark's pages.

Prints, like html_extract_bench: precision, recall and F of the manifest's expected snippets
against its boilerplate snippets (train and held-out), median ms per page (wall clock and this
thread's CPU time) and MB/s, as
`METRIC name value unit` lines. Same text normalisation as the C++ side: markup characters
removed, whitespace collapsed.

  bench/readability_baseline.py tests/data/html_pages [repeats]
"""
import json
import os
import re
import statistics
import sys
import time

import lxml.html
from readability import Document

MARKUP = re.compile(r"[*`#>|\[\]!_]")
SPACE = re.compile(r"\s+")


def normalize(text):
    return SPACE.sub(" ", MARKUP.sub("", text)).strip()


def main():
    pages_dir = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    manifest = json.load(open(os.path.join(pages_dir, "manifest.json"), encoding="utf-8"))
    counts = {"train": [0, 0, 0], "heldout": [0, 0, 0]}  # tp, fp, fn
    times = []
    cpu_times = []
    total_bytes = 0
    total_seconds = 0.0
    for page in manifest:
        html = open(os.path.join(pages_dir, page["file"]), encoding="utf-8").read()
        samples = []
        cpu_samples = []
        for _ in range(repeats):
            cpu_start = time.thread_time()
            start = time.perf_counter()
            summary = Document(html, url=page.get("url")).summary(html_partial=True)
            text = lxml.html.fromstring(summary).text_content() if summary.strip() else ""
            samples.append(time.perf_counter() - start)
            cpu_samples.append(time.thread_time() - cpu_start)
        times.append(statistics.median(samples))
        cpu_times.append(statistics.median(cpu_samples))
        total_bytes += len(html.encode("utf-8"))
        total_seconds += statistics.median(samples)
        got = normalize(text)
        c = counts[page["split"]]
        for s in page["expect"]:
            if normalize(s) in got:
                c[0] += 1
            else:
                c[2] += 1
        for s in page["reject"]:
            if normalize(s) in got:
                c[1] += 1
    for split, suffix in (("train", ""), ("heldout", "_heldout")):
        tp, fp, fn = counts[split]
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        print(f"METRIC readability_lxml_precision{suffix} {p:.3f} ratio")
        print(f"METRIC readability_lxml_recall{suffix} {r:.3f} ratio")
        print(f"METRIC readability_lxml_f{suffix} {f:.3f} ratio")
    print(f"METRIC readability_lxml_median_ms {statistics.median(times) * 1000:.3f} ms")
    print(f"METRIC readability_lxml_cpu_median_ms {statistics.median(cpu_times) * 1000:.3f} ms")
    print(f"METRIC readability_lxml_mb_s {total_bytes / total_seconds / 1e6:.3f} MB/s")


if __name__ == "__main__":
    main()
