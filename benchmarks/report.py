"""Turn measurements into the results document, the console tables, the chart and the README block.

Everything downstream of :func:`document` reads only that JSON-ready dict, so tables, chart and README always
show the numbers that were written to ``benchmarks/results/*.json``. Ratios compare contenders measured in the
same run: ``vs ssewire`` is a contender's speed divided by ssewire's in the same group (ssewire = the compiled
scanner when built, else the pure twin); the README shows the inverse, ssewire's speed-up.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from pathlib import Path
from typing import Any, Optional

from .check import Verdict
from .contenders import E2E, FRAMING, REFERENCE
from .environment import one_line
from .generate import GENERATOR_VERSION, SEED, STREAMS
from .measure import StreamResult

__all__ = [
    "README_END",
    "README_START",
    "document",
    "draw_chart",
    "format_checks",
    "format_scaling",
    "format_tables",
    "readme_block",
    "update_readme",
    "write_json",
]

README_START = "<!-- bench:start -->"
README_END = "<!-- bench:end -->"
MB = 1e6


def _reference(rows: list[dict[str, Any]], group: str) -> Optional[dict[str, Any]]:
    for impl in ("cython", "python"):
        for row in rows:
            if row["group"] == group and row["implementation"] == impl and row["median_s"]:
                return row
    return None


def document(
    results: list[StreamResult],
    scaling: list[dict[str, Any]],
    verdicts: list[Verdict],
    env: dict[str, Any],
    settings: dict[str, Any],
) -> dict[str, Any]:
    """The results document: environment, settings, and per stream every contender's median and ratios."""
    streams = []
    for result in results:
        s = result.stream
        rows = []
        for row in result.rows:
            median = row.median
            rows.append(
                {
                    "contender": row.contender,
                    "group": row.group,
                    "floor": row.floor,
                    "implementation": row.implementation,
                    "status": row.status,
                    "note": row.note,
                    "median_s": median,
                    "runs_s": row.times,
                    "mb_per_s": s.size / MB / median if median else None,
                    "events_per_s": s.events / median if median else None,
                    "peak_bytes": row.peak,
                }
            )
        for group in (FRAMING, E2E):
            ref = _reference(rows, group)
            for row in rows:
                if row["group"] == group:
                    ok = ref is not None and row["median_s"]
                    row["vs_ssewire"] = ref["median_s"] / row["median_s"] if ok else None
                    row["ssewire_reference"] = ref["contender"] if ref else None
        streams.append(
            {
                "name": s.name,
                "title": STREAMS[s.name].title,
                "provider": s.provider,
                "framing": s.framing,
                "bytes": s.size,
                "events": s.events,
                "largest_event_bytes": s.largest_event,
                "sha256": s.sha256,
                "notes": result.notes,
                "results": rows,
            }
        )
    return {
        "schema": 1,
        "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "settings": {**settings, "seed": SEED, "generator_version": GENERATOR_VERSION},
        "environment": env,
        "streams": streams,
        "memory_scaling": scaling,
        "checks": [v.__dict__ for v in verdicts],
    }


def write_json(doc: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


# --- console ----------------------------------------------------------------------------------------------------


def _num(value: Optional[float], unit: str = "") -> str:
    if value is None:
        return "—"
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.2f}{suffix}{unit}"
    return f"{value:.1f}{unit}"


def format_tables(doc: dict[str, Any]) -> str:
    """One plain-text table per stream: contender, MB/s, events/s, x vs ssewire, peak memory."""
    out = []
    for s in doc["streams"]:
        out.append(
            f"\n{s['name']} — {s['title']}\n"
            f"  {s['bytes'] / MB:.2f} MB, {s['events']:,} events, largest event {s['largest_event_bytes']:,} B, "
            f"sha256 {s['sha256'][:12]}"
        )
        out.extend(f"  ! {note}" for note in s["notes"])
        out.append(f"  {'group':<11}{'contender':<30}{'MB/s':>9}{'events/s':>10}{'vs ssewire':>12}{'peak MB':>9}  note")
        for r in s["results"]:
            ratio = f"{r['vs_ssewire']:.2f}x" if r.get("vs_ssewire") else "—"
            peak = f"{r['peak_bytes'] / MB:.2f}" if r["peak_bytes"] is not None else "—"
            mbs = f"{r['mb_per_s']:.1f}" if r["mb_per_s"] else r["status"]
            note = r["note"] if len(r["note"]) <= 70 else r["note"][:67] + "..."
            rate = _num(r["events_per_s"])
            out.append(f"  {r['group']:<11}{r['contender']:<30}{mbs:>9}{rate:>10}{ratio:>12}{peak:>9}  {note}")
    return "\n".join(out)


def format_scaling(doc: dict[str, Any]) -> str:
    out = ["\nssewire peak memory vs stream size (tracemalloc)"]
    for entry in doc["memory_scaling"]:
        for group, data in entry["groups"].items():
            label = f"  {entry['stream']:<20}{group:<11}[{entry['implementation']}]"
            if "error" in data:
                out.append(f"{label} error: {data['error']}")
                continue
            pts = " -> ".join(
                f"{p['size'] / MB:.0f} MB: peak {p['peak'] / MB:.2f} MB (largest event {p['largest_event'] / MB:.2f})"
                for p in data["points"]
            )
            out.append(f"{label} {pts}  {'bounded' if data['bounded'] else 'GROWS WITH THE STREAM'}")
    return "\n".join(out)


def format_checks(doc: dict[str, Any]) -> str:
    out = ["\nCI floors (speed ratios measured in this run) and memory ceilings"]
    for v in doc["checks"]:
        ratio = f"{v['ratio']:.2f}x" if v["ratio"] is not None else "—"
        reason = f"  ({v['reason']})" if v["reason"] else ""
        bound = f"{v.get('op', '>=')} {v['floor']:g}x"
        out.append(f"  {v['status'].upper():<5}{v['label']:<50}{v['stream']:<20}{ratio:>8} {bound}{reason}")
    return "\n".join(out)


# --- chart ------------------------------------------------------------------------------------------------------


_COLORS = {  # one colour per library, the same in both panels; floors are grey and hatched
    "ssewire[cython]": "#1f77b4",
    "ssewire[python]": "#6baed6",
    "ssewire collect()": "#17becf",
    "ssewire StreamTap": "#bcbd22",
    "httpx-sse": "#2ca02c",
    "openai SDK": "#d62728",
    "anthropic SDK": "#9467bd",
    "sseclient-py": "#8c564b",
    "ijson": "#e377c2",
    "botocore": "#ff7f0e",
    "boto3": "#ffbb78",
}


def _color(name: str) -> str:
    return next((c for prefix, c in _COLORS.items() if name.startswith(prefix)), "#7f7f7f")


def draw_chart(doc: dict[str, Any], stem: Path) -> list[Path]:
    """Horizontal grouped bars of MB/s (log scale), framing and end to end, one group of bars per stream;
    writes ``stem``.png and ``stem``.svg."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "ssewire-bench"
    streams = doc["streams"]
    fig, axes = plt.subplots(1, 2, figsize=(15, 1.0 * len(streams) + 3.0), sharey=True)
    for ax, group in zip(axes, (FRAMING, E2E)):
        names: list[str] = []
        for s in streams:
            names += [r["contender"] for r in s["results"] if r["group"] == group and r["contender"] not in names]
        height = 0.84 / max(1, len(names))
        for k, name in enumerate(names):
            ys, xs = [], []
            for i, s in enumerate(streams):
                row = next((r for r in s["results"] if r["group"] == group and r["contender"] == name), None)
                if row and row["mb_per_s"]:
                    ys.append(i - 0.42 + height * (k + 0.5))
                    xs.append(row["mb_per_s"])
            floor = name.startswith("floor")
            hatch = ("//", "..", "xx")[k % 3] if floor else None
            ax.barh(ys, xs, height=height, label=name, color=_color(name), alpha=0.5 if floor else 1.0, hatch=hatch)
        ax.set_xscale("log")
        ax.set_title(f"{group}: MB/s, higher is better")
        ax.grid(axis="x", which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.05), ncol=2, frameon=False)
    axes[0].set_yticks(range(len(streams)), [s["name"] for s in streams])
    axes[0].invert_yaxis()
    env = doc["environment"]
    impl = "compiled" if env["ssewire"]["compiled_available"] else "pure-Python only"
    fig.suptitle(
        f"ssewire {env['ssewire']['version']} ({impl}) — {env['machine']['cpu']}, Python {env['python']['version']} — "
        f"~{doc['settings']['size_mb']:g} MB streams in {doc['settings']['chunk_size'] // 1024} KiB chunks, "
        "median runs",
        fontsize=10,
    )
    fig.tight_layout()
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    fig.savefig(paths[0], dpi=110, metadata={"Software": None})
    fig.savefig(paths[1], metadata={"Date": None})
    plt.close(fig)
    return paths


# --- README -----------------------------------------------------------------------------------------------------


def _speedup(s: dict[str, Any], group: str, other: str) -> str:
    rows = {r["contender"]: r for r in s["results"] if r["group"] == group}
    row = rows.get(other)
    if row is None:
        return "—"
    if not row["median_s"] or not row.get("vs_ssewire"):
        return "n/a"
    return f"{1 / row['vs_ssewire']:.1f}x"


_DECODE_FLOORS = ("floor: json.loads payloads", "floor: orjson payloads", "floor: msgspec payloads")


def decode_floor(s: dict[str, Any]) -> Optional[dict[str, Any]]:
    """The fastest plain decode of every payload measured for stream ``s`` (json, orjson or msgspec)."""
    rows = [r for r in s["results"] if r["group"] == E2E and r["contender"] in _DECODE_FLOORS and r["median_s"]]
    return min(rows, key=lambda r: r["median_s"]) if rows else None


#: The ways users read a stream end to end, after ``iter_unified`` (the reference row): their time over the
#: fastest plain decode is shown next to it.
_APIS = ("ssewire collect()", "ssewire StreamTap")


def _decode_ratio(s: dict[str, Any], ref: Optional[dict[str, Any]]) -> str:
    """ssewire's end-to-end time over the fastest decoder's plain decode of the same payloads (1.0: as fast):
    ``iter_unified``, then ``collect()`` and ``StreamTap`` where they were measured."""
    floor = decode_floor(s)
    if ref is None or floor is None:
        return "n/a"
    rows = {r["contender"]: r for r in s["results"] if r["group"] == E2E and r["median_s"]}
    ratios = [ref["median_s"] / floor["median_s"]] + [
        rows[name]["median_s"] / floor["median_s"] for name in _APIS if name in rows
    ]
    return " · ".join(f"{r:.2f}x" for r in ratios) + f" ({floor['contender'].split()[1]})"


#: Below this size an event is smaller than the fixed working set (buffers, caches), so peak / event says nothing.
_LARGE_EVENT = 64 * 1024


def _peak_ratio(s: dict[str, Any], ref: Optional[dict[str, Any]]) -> str:
    """ssewire's end-to-end peak memory over the stream's largest event (streams with events of 64 KiB or more;
    "—" for the others, whose peak is the fixed working set, not a multiple of an event)."""
    if ref is None or ref.get("peak_bytes") is None or not s.get("largest_event_bytes"):
        return "n/a"
    if s["largest_event_bytes"] < _LARGE_EVENT:
        return "—"
    return f"{ref['peak_bytes'] / s['largest_event_bytes']:.1f}x"


def _mb_per_s(s: dict[str, Any], contender: str) -> Optional[float]:
    for row in s["results"]:
        if row["group"] == FRAMING and row["contender"] == contender and row["median_s"]:
            return float(row["mb_per_s"])
    return None


def _twin_table(doc: dict[str, Any]) -> list[str]:
    """The framing speed of the compiled scanner, its pure-Python twin and (when it was found) the design
    documents' reference module, with the ratios that matter: compiled / twin and twin / reference."""
    with_seed = any(_mb_per_s(s, REFERENCE) for s in doc["streams"])
    rows = []
    for s in doc["streams"]:
        compiled, twin, seed = (_mb_per_s(s, name) for name in ("ssewire[cython]", "ssewire[python]", REFERENCE))
        if compiled is None or twin is None:
            continue
        cells = [s["name"], f"{compiled:.0f}", f"{twin:.0f}"]
        if with_seed:
            cells.append(f"{seed:.0f}" if seed else "—")
        cells.append(f"{compiled / twin:.1f}x")
        if with_seed:
            cells.append(f"{twin / seed:.2f}x" if seed else "—")
        rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return []
    if with_seed:
        intro = (
            "The compiled scanner against its pure-Python twin (the fallback on PyPy and where no wheel exists) and "
            "the reference module of the design documents, framing only, same run:"
        )
        head = "| Stream | compiled MB/s | pure twin MB/s | seed reference MB/s | compiled / twin | twin / reference |"
        rule = "|---|---:|---:|---:|---:|---:|"
    else:
        intro = (
            "The compiled scanner against its pure-Python twin (the fallback on PyPy and where no wheel exists), "
            "framing only, same run:"
        )
        head = "| Stream | compiled MB/s | pure twin MB/s | compiled / twin |"
        rule = "|---|---:|---:|---:|"
    return ["", intro, "", head, rule, *rows]


#: The SDKs' own Bedrock readers, end to end: the streams they apply to get a row in :func:`_sdk_table`.
_SDK_READERS = ("boto3 EventStream", "anthropic SDK Bedrock decoder + json.loads")


def _sdk_table(doc: dict[str, Any]) -> list[str]:
    """ssewire end to end against what the SDKs hand a Bedrock user (boto3's ``EventStream`` of event dicts, the
    Anthropic SDK's Bedrock decoder), for the streams where they were measured."""
    rows = []
    for s in doc["streams"]:
        measured = {r["contender"] for r in s["results"] if r["group"] == E2E}
        if not measured.intersection(_SDK_READERS):
            continue
        ref = _reference(s["results"], E2E)
        cells = [s["name"], f"{ref['mb_per_s']:.0f}" if ref else "n/a"]
        cells += [_speedup(s, E2E, name) for name in _SDK_READERS]
        rows.append("| " + " | ".join(cells) + " |")
    if not rows:
        return []
    return [
        "",
        "End to end against the SDKs' own Bedrock readers (botocore's buffer, then its shape-driven parser into "
        "event dicts; the Anthropic SDK's decoder, then `json.loads` of each event), same run:",
        "",
        "| Stream | ssewire end-to-end MB/s | x boto3 EventStream | x anthropic SDK Bedrock decoder |",
        "|---|---:|---:|---:|",
        *rows,
    ]


def readme_block(doc: dict[str, Any], chart: str = "benchmarks/results/throughput.svg") -> str:
    """The Markdown between the README markers: headline speed-ups, the chart and where they were measured."""
    env = doc["environment"]
    impl = (
        "compiled scanner" if env["ssewire"]["compiled_available"] else "pure-Python twin (compiled scanner not built)"
    )
    settings = doc["settings"]
    lines = [
        README_START,
        "<!-- generated by `python -m benchmarks`; do not edit by hand -->",
        "",
        f"How many times faster ssewire ({impl}) is than what users run today, on the same bytes fed in "
        f"{settings['chunk_size'] // 1024} KiB chunks: ~{settings['size_mb']:g} MB generated streams, median of "
        f"{settings['repeats']} to {settings['max_runs']} runs, every ratio measured within one run. Each contender's "
        "output was checked against ssewire's before its time counted. *Framing* is bytes to events; *end-to-end* "
        "adds JSON decoding (ssewire also normalises to its unified events). *End-to-end / fastest decode* is "
        "ssewire's end-to-end time over the fastest installed decoder's bare loop decoding every payload (1.0x: as "
        "fast as decoding alone), for `iter_unified` · `collect()` · `StreamTap`; *peak / largest event* is its "
        "end-to-end peak memory (tracemalloc) over the "
        "stream's largest event, for streams whose events reach 64 KiB.",
        "",
        "| Stream | ssewire framing MB/s | x httpx-sse | x openai SDK | x anthropic SDK | x sseclient-py "
        "| x httpx iter_lines | x botocore EventStreamBuffer | ssewire end-to-end MB/s | x httpx-sse + json.loads "
        "| x ijson (C) | x httpx iter_lines + json.loads | x botocore + json.loads | end-to-end / fastest decode "
        "| peak / largest event |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in doc["streams"]:
        ref_f = _reference(s["results"], FRAMING)
        ref_e = _reference(s["results"], E2E)
        cells = [
            s["name"],
            f"{ref_f['mb_per_s']:.0f}" if ref_f else "n/a",
            _speedup(s, FRAMING, "httpx-sse"),
            _speedup(s, FRAMING, "openai SDK SSEDecoder"),
            _speedup(s, FRAMING, "anthropic SDK SSEDecoder"),
            _speedup(s, FRAMING, "sseclient-py"),
            _speedup(s, FRAMING, "httpx iter_lines"),
            _speedup(s, FRAMING, "botocore EventStreamBuffer"),
            f"{ref_e['mb_per_s']:.0f}" if ref_e else "n/a",
            _speedup(s, E2E, "httpx-sse + json.loads"),
            _speedup(s, E2E, "ijson yajl2_c items"),
            _speedup(s, E2E, "httpx iter_lines + json.loads"),
            _speedup(s, E2E, "botocore EventStreamBuffer + json.loads"),
            _decode_ratio(s, ref_e),
            _peak_ratio(s, ref_e),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += _twin_table(doc)
    lines += _sdk_table(doc)
    lines += [
        "",
        f"![Throughput by stream and contender]({chart})",
        "",
        f"Measured {doc['created'][:10]} on {one_line(env)}. Reproduce with `pip install -e '.[bench]'` and "
        "`python -m benchmarks`; full tables in `benchmarks/results/results.json`.",
        README_END,
    ]
    return "\n".join(lines)


def update_readme(path: Path, block: str) -> bool:
    """Replace the text between the markers in ``path``; ``False`` (file untouched) when they are missing."""
    if not path.exists():
        return False
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(README_START) + r".*?" + re.escape(README_END), re.S)
    if not pattern.search(text):
        return False
    path.write_text(pattern.sub(lambda _m: block, text, count=1), encoding="utf-8")
    return True
