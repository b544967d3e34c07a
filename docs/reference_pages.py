"""The docs' generated pages, rendered from the code and the results files, never copied.

``docs/gen_pages.py`` writes them into the site at build time (mkdocs-gen-files); the tests import
this module by path to check that the references cover the code (every command and option).
"""

from __future__ import annotations

import argparse
import json
import re
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    """(name, parser) of every command and sub-command, depth first, the top-level parser first."""
    yield " ".join(prefix), parser
    for action in parser._actions:  # argparse lists a parser's subcommands only there
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, prefix + (name,))


def _default(action: argparse.Action) -> str:
    if action.default in (None, argparse.SUPPRESS, False) or action.nargs == 0:
        return ""
    if isinstance(action.default, (list, tuple)):
        return " ".join(map(str, action.default))
    return str(action.default)


def cli_reference() -> str:
    """Every command of ``linksim``: its usage, description and options, from the argparse parser."""
    from linksim.cli.main import build_parser

    parser = build_parser()
    parts = ["# Command line\n", "Generated from the `linksim` argument parser: what `--help` prints.\n"]
    for name, command in commands(parser):
        title = f"linksim {name}" if name else "linksim"
        parts.append(f"## `{title}`\n")
        if command.description:
            parts.append(command.description.strip() + "\n")
        usage = command.format_usage().removeprefix("usage: ").strip()
        parts.append(f"```text\n{usage}\n```\n")
        rows = []
        for action in command._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            flags = ", ".join(f"`{flag}`" for flag in action.option_strings) or f"`{action.metavar or action.dest}`"
            help_text = (action.help or "") if action.help != argparse.SUPPRESS else ""
            if action.choices and not isinstance(action.choices, dict):
                help_text += " (one of: " + ", ".join(map(str, action.choices)) + ")"
            rows.append(f"| {flags} | {_cell(help_text % vars(action) if '%(' in help_text else help_text)} "
                        f"| {_cell(_default(action))} |")
        if rows:
            parts.append("| option | meaning | default |\n|---|---|---|\n" + "\n".join(rows) + "\n")
        subs = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
        for sub in subs:
            listed = ", ".join(f"[`{n}`](#linksim-{'-'.join((name + ' ' + n).split())})" for n in sub.choices)
            parts.append(f"Commands: {listed}.\n")
    return "\n".join(parts)


def exit_codes_reference() -> str:
    """The exit codes' table, from :data:`linksim.cli.options.EXIT_CODES`."""
    from linksim.cli.options import EXIT_CODE_EXAMPLES, EXIT_CODES

    rows = "\n".join(f"| {code} | {_cell(meaning)} | {_cell(EXIT_CODE_EXAMPLES.get(code, ''))} |"
                     for code, meaning in EXIT_CODES.items())
    return ("# Exit codes\n\nThe same for every command; `linksim --help` lists them too.\n\n"
            "| code | meaning | for example |\n|---|---|---|\n" + rows + "\n")


def configuration_reference(notes: str = "") -> str:
    """The settings' table, from :data:`linksim.cli.options.SETTINGS`, then ``notes``."""
    from linksim.cli.options import SETTINGS

    rows = "\n".join(f"| {_cell(setting)} | {_cell(option)} | `{variable}` | {_cell(default)} |"
                     for setting, option, variable, default in SETTINGS)
    return ("# Configuration\n\n| setting | option | environment | default |\n|---|---|---|---|\n"
            + rows + "\n\n" + notes)


def _comment_block(lines: list[str]) -> str:
    return "\n".join(line.strip().removeprefix("//").strip() for line in lines)


def cypher_reference() -> str:
    """Every Cypher file shipped in ``linksim.cypher``: its opening comment, then its statements."""
    files = sorted(p for p in resources.files("linksim.cypher").iterdir() if p.name.endswith(".cypher"))
    parts = ["# Cypher queries\n",
             "The Cypher files that ship with linksim, loaded by name "
             "(`linksim.cypher.query(FILE, NAME)`). Every value is a parameter (`$url`, `$method`, ...).\n"]
    for path in files:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        opening = []
        for line in lines:
            if not line.strip().startswith("//"):
                break
            opening.append(line)
        parts.append(f"## `{path.name}`\n")
        if opening:
            parts.append(_comment_block(opening) + "\n")
        names = re.findall(r"^// name: (\S+)", text, re.M)
        if names:
            parts.append("Named queries: " + ", ".join(f"`{n}`" for n in names) + ".\n")
        body = "\n".join(lines[len(opening):]).strip()
        parts.append(f"```cypher\n{body}\n```\n")
    return "\n".join(parts)


def _results(name: str) -> dict:
    return json.loads((RESULTS / name).read_text(encoding="utf-8"))


def _provenance(result: dict, name: str) -> str:
    return (f"From `benchmarks/results/{name}`: commit `{str(result.get('commit', '?'))[:10]}`"
            f"{' (tree changed)' if result.get('tree_changed') else ''}, {result.get('machine', '?')}, "
            f"`{result.get('command', '?')}`, finished {result.get('finished', '?')}.\n")


def results_index() -> str:
    """One line for every results file: what wrote it, where and when."""
    parts = ["# Benchmark results\n",
             "Every figure of these pages comes from a results file a benchmark script wrote; a rerun "
             "of the script rewrites the file and the page. Each file records its commit, machine and "
             "command.\n", "| file | command | commit | machine | finished |", "|---|---|---|---|---|"]
    for path in sorted(RESULTS.glob("*.json")):
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if not isinstance(result, dict):
            continue
        parts.append(f"| `{path.name}` "
                     f"| `{_cell(result.get('command', ''))}` | `{str(result.get('commit', ''))[:10]}` "
                     f"| {_cell(result.get('machine', ''))} | {_cell(result.get('finished', ''))} |")
    return "\n".join(parts) + "\n"


def _by_size(sizes: dict) -> list:
    """The items of a mapping keyed by crawl sizes (``"1M"``, ``"30M"``), smallest first."""
    from linksim.parameters import _integer

    return sorted(sizes.items(), key=lambda item: _integer(item[0]))


def _gib(value: object) -> str:
    return f"{value / 2**30:.2f}" if isinstance(value, (int, float)) and value else ""


def _number(value: object, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, float) else ("" if value is None else str(value))


def quality_page(names: tuple[str, ...] = ("quality.json", "quality-labelled.json", "quality-hosts.json",
                                           "quality-other-hosts.json")) -> str:
    """The evaluation tables (P@10, hits@10, sibling Γ, coverage) of every data set, methods beside
    the anchors, from the quality benchmark's results files."""
    parts = ["# Quality\n",
             "Related pages graded against each crawl's labels by `benchmarks/quality.py` "
             "(`linksim evaluate` reads the same measures): precision and hits at 10, the sibling Γ "
             "of Fogaras & Rácz, and the share of labelled pages answered. Anchors are other tools' "
             "answers, graded alike.\n"]
    for name in names:
        if not (RESULTS / name).exists():
            continue
        result = _results(name)
        parts.append(_provenance(result, name))
        filtered = " (other hosts' pages only: `--targets other-hosts`)" if "--targets other-hosts" in \
            str(result.get("command", "")) else ""
        for dataset, rows in result.get("datasets", {}).items():
            parts.append(f"## {dataset}{filtered}\n")
            parts.append("| method | source | P@10 | hits@10 | sibling Γ | coverage |\n|---|---|---|---|---|---|")
            for row in sorted(rows, key=lambda r: -(r.get("precision_at_10") or 0)):
                parts.append(f"| {row.get('name')} | {row.get('source', '')} | {_number(row.get('precision_at_10'))} "
                             f"| {_number(row.get('hits_at_10'))} | {_number(row.get('gamma'))} "
                             f"| {_number(row.get('coverage'))} |")
            parts.append("")
    return "\n".join(parts) + "\n"


def scale_page(name: str = "scale.json") -> str:
    """The scale benchmark's stages per crawl size (wall time, linksim's peak PSS), its grade against
    the planted labels and the write against ``gds.knn.write``, from its results file."""
    result = _results(name)
    parts = ["# Scale\n",
             "Every stage of linksim on the labelled generator's crawls (`benchmarks/scale.py`, "
             f"method `{result.get('method')}`, Neo4j heap {result.get('heap')}, page cache "
             f"{result.get('pagecache')}).\n", _provenance(result, name)]
    for size, stages in _by_size(result.get("sizes", {})):
        parts.append(f"## {size} links\n")
        parts.append("| stage | seconds | linksim's peak PSS (GiB) | of which anonymous | estimate (GiB) "
                     "| peak / estimate (which peak) | memory cgroup peak / cap (GiB) | exit |\n"
                     "|---|---|---|---|---|---|---|---|")
        for stage, measured in stages.items():
            if stage == "attempts" or not isinstance(measured, dict):
                continue
            pss = measured.get("peakPss")
            # The anonymous PSS where the run recorded it (peakFile: the file pages kept apart).
            anon = measured.get("peakAnon") if "peakFile" in measured else None
            # The estimate of the stages it ran, against the peak it counts (the report's: an index on
            # disk is estimated without the page cache it maps).
            memory = result.get("summary", {}).get("memory", {}).get(size, {}).get(stage, {})
            low, high = memory.get("low"), memory.get("high")
            cap = (f"{_gib(measured['capPeak'])} / {_gib(measured['cap'])}" if measured.get("cap") else "")
            parts.append(f"| {stage} | {_number(measured.get('seconds'), 1)} | {_gib(pss)} | {_gib(anon) if anon else ''} "
                         f"| {f'{_gib(low)}-{_gib(high)}' if low and high else ''} "
                         f"| {_number(memory['measured'] / high, 2) if high else ''} {memory.get('compared', '')} "
                         f"| {cap} | {measured.get('exit', '')} |")
        parts.append("")
        tries = [(stage, attempt) for stage, attempts in result.get("summary", {}).get("attempts", {}).get(size, {}).items()
                 for attempt in attempts]
        if tries:
            parts.append("Attempts cut short or replaced, with their own figures (each phase's last progress line):\n")
            for stage, attempt in tries:
                progress = attempt.get("progress")
                lines = list(progress.values()) if isinstance(progress, dict) else [progress] if progress else []
                cap = f", memory cgroup {_gib(attempt.get('capPeak'))} of {_gib(attempt.get('cap'))} GiB" \
                    if attempt.get("cap") else ""
                parts.append(f"- {stage}, exit {attempt.get('exit')}, {_number(attempt.get('seconds'), 1)} s, peak PSS "
                             f"{_gib(attempt.get('peakPss'))} GiB (anonymous {_gib(attempt.get('peakAnon'))}){cap}: "
                             + "; ".join(f"`{line.removeprefix('linksim: ')}`" for line in lines))
            parts.append("")
    summary = result.get("summary", {})
    if summary.get("pipelineMinutes"):
        parts.append("## Pipeline and growth\n")
        parts.append("Minutes of every stage a size ran, and each stage's growth exponent b (time ~ links^b, "
                     "least squares over the sizes).\n")
        parts.append("| size | minutes |\n|---|---|")
        parts.extend(f"| {size} | {_number(minutes, 1)} |"
                     for size, minutes in _by_size(summary["pipelineMinutes"]))
        parts.append("\n| stage | b |\n|---|---|")
        parts.extend(f"| {stage} | {_number(b, 2)} |" for stage, b in summary.get("growth", {}).items())
        parts.append("")
    if summary.get("grade"):
        parts.append("## Graded against the planted labels\n")
        parts.append("| size | method | P@10 | hits@10 | coverage |\n|---|---|---|---|---|")
        for size, rows in _by_size(summary["grade"]):
            for method, row in sorted(rows.items(), key=lambda item: -item[1].get("precision_at_10", 0)):
                parts.append(f"| {size} | {method} | {_number(row.get('precision_at_10'))} "
                             f"| {_number(row.get('hits_at_10'))} | {_number(row.get('coverage'))} |")
        parts.append("")
    if summary.get("writeVsGds"):
        parts.append("## SIMILAR_TO written, against `gds.knn.write`\n")
        parts.append("| size | linksim (relationships/s) | GDS (relationships/s) | ratio |\n|---|---|---|---|")
        for size, row in _by_size(summary["writeVsGds"]):
            parts.append(f"| {size} | {row.get('linksim', 0):,.0f} | {row.get('gds', 0):,.0f} "
                         f"| {_number(row.get('ratio'), 2)} |")
        parts.append("")
    return "\n".join(parts) + "\n"


def estimate_page(name: str = "estimate.json") -> str:
    """Each method's memory estimate beside the peak PSS of the process tree that ran it, from
    ``benchmarks/estimate.py``'s results file."""
    result = _results(name)
    parts = ["# Memory estimates\n",
             "`linksim similar METHOD --estimate` beside the measured peak PSS of the run's process tree "
             f"(`benchmarks/estimate.py`; a run is within when its peak is at most "
             f"{_number(result.get('tolerance'), 2)} over the estimate's maximum).\n", _provenance(result, name),
             "| crawl | method | estimate (GiB) | peak PSS (GiB) | peak / estimate | peak stage | on disk | seconds | within |",
             "|---|---|---|---|---|---|---|---|---|"]
    for crawl, runs in result.get("runs", {}).items():
        for method, run in runs.items():
            parts.append(f"| {crawl} | {method} | {_gib(run.get('estimate_min'))}-{_gib(run.get('estimate_max'))} "
                         f"| {_gib(run.get('pss'))} | {_number(run.get('pss_over_estimate_max'), 2)} "
                         f"| {run.get('peak_stage', '')} | {run.get('on_disk', '')} "
                         f"| {_number(run.get('seconds'), 1)} | {run.get('within', '')} |")
    return "\n".join(parts) + "\n"


def serve_page(name: str = "serve.json") -> str:
    """Related pages served to concurrent Bolt clients, per query form, from ``benchmarks/serve.py``'s
    results file."""
    result = _results(name)
    parts = ["# Serving\n",
             f"The related pages of random pages asked by concurrent clients through Bolt on the "
             f"{result.get('size')}-link crawl ({result.get('pages', 0):,} pages, method `{result.get('method')}`, "
             "`benchmarks/serve.py`). The clients run on the server's machine, threads shared out over client "
             "processes; `floor` is a query that reads nothing, the latency no query can beat with those "
             "clients there.\n", _provenance(result, name),
             "| form | during | clients | queries/s | p50 (ms) | p99 (ms) | rows a query | errors |",
             "|---|---|---|---|---|---|---|---|"]
    for row in result.get("rows", []):
        parts.append(f"| {row.get('form')} | {row.get('during')} | {row.get('clients')} "
                     f"| {row.get('queriesPerSecond', 0):,.0f} | {_number(row.get('p50Ms'), 1)} "
                     f"| {_number(row.get('p99Ms'), 1)} | {_number(row.get('rowsPerQuery'), 1)} | {row.get('errors')} |")
    if result.get("rewriteRateShare") is not None:
        parts.append(f"\nDuring a rewrite, the short query at 32 clients keeps {_number(result['rewriteRateShare'], 2)} "
                     "of its rate at rest.")
    return "\n".join(parts) + "\n"


#: What each reader of ``benchmarks/load.py --warc`` does, in its results file's names.
_WARC_READERS = {
    "linksim": "linksim's reader: framing checked, HTML parsed, links resolved and normalised, titles and "
               "anchor texts, the crawl graph",
    "fastwarc": "FastWARC + Lexbor: every `<a href>` value, bare",
    "floor": "the floor of a reader that keeps linksim's graph: FastWARC + Lexbor, hrefs with anchor texts "
             "and a look-up each, nothing checked, resolved or recorded",
    "warcio": "warcio + Lexbor: every `<a href>` value, bare",
}


#: The parallel reads of ``benchmarks/load.py --warc`` in order, each two-at-once read with its
#: one-at-a-time counterpart (None for those).
_PARALLEL_READS = {"workers=1": None, "workers=2": "workers=1", "fastwarc, 1 process": None,
                   "fastwarc, 2 processes": "fastwarc, 1 process"}


def reading_page(warc: str = "warc-read.json", webgraph: str = "webgraph-read.json") -> str:
    """Archive reading speed from ``benchmarks/load.py --warc`` and ``--webgraph``'s results files."""
    parts = ["# Reading archives\n",
             "How fast a load reads its input before it writes to Neo4j (`benchmarks/load.py`). "
             "Pages a second are the median of the rounds, each reader in a process of its own.\n"]
    if (RESULTS / warc).exists():
        result = _results(warc)
        summary, runs = result.get("summary", {}), result.get("runs", {})
        median = summary.get("pages_per_second_median", {})
        best = summary.get("pages_per_second_best", {})
        fastwarc = median.get("fastwarc") or 0
        parts += ["## WARC files, one core\n",
                  f"A wget crawl of {len(summary.get('files', []))} WARC file{'s' * (len(summary.get('files', [])) != 1)}, "
                  f"{summary.get('bytes', 0):,} bytes, "
                  f"read on one core (`{result.get('one_core', '')}`), {result.get('rounds')} rounds.\n",
                  _provenance(result, warc),
                  "| reader | pages | links | pages/s (median) | best | over FastWARC |", "|---|---|---|---|---|---|"]
        for name, what in _WARC_READERS.items():
            if name in median:
                first = runs.get(name, [{}])[0]
                ratio = f"{median[name] / fastwarc:.3f}" if fastwarc else ""
                parts.append(f"| {what} | {first.get('pages', 0):,} | {first.get('links', 0):,} | {median[name]:,} "
                             f"| {best.get(name, 0):,} | {ratio} |")
        parallel = [name for name in _PARALLEL_READS if name in median]
        if parallel:
            parts += ["\n## WARC files, every core\n",
                      f"A load's whole read of {summary.get('files_read_by_workers')} files with one worker "
                      "and with two, beside FastWARC + Lexbor in one process and in two at once (each reading "
                      "half of the files: the machine's own scaling).\n",
                      "| read | pages/s (median) | best | two over one |", "|---|---|---|---|"]
            for name in parallel:
                one = median.get(_PARALLEL_READS[name])
                parts.append(f"| {name} | {median[name]:,} | {best.get(name, 0):,} "
                             f"| {f'{median[name] / one:.3f}' if one else ''} |")
    if (RESULTS / webgraph).exists():
        result = _results(webgraph)
        summary = result.get("summary", {})
        seconds, sizes = summary.get("seconds_median", {}), summary.get("bytes", {})
        parts += ["\n## WebGraph BV files\n",
                  f"`{summary.get('crawl')}` ({summary.get('nodes', 0):,} pages, {summary.get('links', 0):,} links) "
                  f"read as an edge list and as a BV graph; the two graphs equal: {summary.get('equal')}.\n",
                  _provenance(result, webgraph), "| input | bytes | seconds (median) |", "|---|---|---|"]
        for name, value in seconds.items():
            parts.append(f"| {name} | {sizes.get(name, 0):,} | {_number(value, 2)} |")
    return "\n".join(parts) + "\n"


def recrawl_files() -> list[tuple[str, str, str]]:
    """``benchmarks/recrawl.py --default``'s results files: (crawl size, fold limit of a calibration
    or "", file name), smallest crawl first, a size's own run before its calibrations
    (``recrawl-default-1M-fold-limit-1.json``: ``("1M", "1", ...)``)."""
    from linksim.parameters import _integer

    found = []
    for path in RESULTS.glob("recrawl-default-*.json"):
        size, _, limit = path.stem.removeprefix("recrawl-default-").partition("-fold-limit-")
        found.append((size, limit, path.name))
    return sorted(found, key=lambda file: (_integer(file[0]), file[1]))


def recrawl_page() -> str:
    """The default's update after a recrawl against a rebuild, from ``benchmarks/recrawl.py
    --default``'s results files, a section a crawl size, smallest first."""
    parts = ["# Recrawls\n",
             "The default's index and lists after a recrawl of the generated labelled crawl: its update (the walks "
             "updated, the changed pages folded into the embedding, the nearest pages in place, only the lists within "
             "reach made again) against a rebuild (the index from nothing and every list), both on every core, "
             "neither through Neo4j. The updated lists are judged against the rebuild's by an independent index; the "
             "floor is a rebuild with another seed judged the same way. P@10 is against the planted labels. `how`: an "
             "update, or a rebuild where the drift check asked for one.\n"]
    for size, limit, name in recrawl_files():
        result = _results(name)
        parts += [f"## {size} links{f' (fold limit {limit})' if limit else ''}\n", _provenance(result, name),
                  "| recrawl | how | update (s) | rebuild (s) | ratio | lists made | judged mean | judged p5 "
                  "| floor mean | floor p5 | P@10 updated | P@10 rebuilt | P@10 other seed |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for stage, row in result.get("stages", {}).items():
            steps = row.get("steps")
            update = sum(step["seconds"] for step in steps) if steps else row.get("update_seconds")
            label = f"{len(steps)} x 1 %" if steps else f"{float(stage):.1%}"
            how = ", ".join(sorted({step["how"] for step in steps})) if steps else row.get("how")
            parts.append(f"| {label} | {how} | {_number(update, 1)} | {_number(row.get('rebuild_seconds'), 1)} "
                         f"| {_number(row.get('ratio'))} | {row.get('lists_reached', '')} "
                         f"| {_number(row.get('judged_mean'), 4)} | {_number(row.get('judged_p5'))} "
                         f"| {_number(row.get('floor_mean'), 4)} | {_number(row.get('floor_p5'))} "
                         f"| {_number(row.get('p10_updated'), 4)} | {_number(row.get('p10_rebuilt'), 4)} "
                         f"| {_number(row.get('p10_other_seed'), 4)} |")
        parts.append("")
        judged_steps = [step for row in result.get("stages", {}).values() for step in row.get("steps", [])
                        if "judged_mean" in step]
        if judged_steps:
            parts += ["The chain judged after each step (the last is the chain's row above):\n",
                      "| step | how | seconds | lists made | folded since the build | drift | judged mean | judged p5 "
                      "| floor mean | floor p5 | P@10 updated | P@10 rebuilt |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
            parts += [f"| {step['step']} | {step['how']} | {_number(step['seconds'], 1)} | {step['lists_reached']} "
                      f"| {_number(step['folded_share'])} | {_number(step['drift'], 5)} "
                      f"| {_number(step['judged_mean'], 4)} | {_number(step['judged_p5'])} "
                      f"| {_number(step['floor_mean'], 4)} | {_number(step['floor_p5'])} "
                      f"| {_number(step['p10_updated'], 4)} | {_number(step['p10_rebuilt'], 4)} |" for step in judged_steps]
            parts.append("")
    parts.append("A chain's update time is the sum of its steps (each an update, or a rebuild where the drift "
                 "check asked); its rebuild time is one rebuild of the graph it ends on.")
    return "\n".join(parts) + "\n"


def spark_page(name: str = "spark.json") -> str:
    """The Spark jobs in local mode beside numpy, and the cluster they imply for a billion pages, from
    ``benchmarks/spark.py``'s results file."""
    result = _results(name)
    parts = ["# Spark\n",
             f"The Spark jobs on `{result.get('master')}` (Spark {result.get('spark')}) beside numpy on one "
             "core, in one run (`benchmarks/spark.py`). Spark pays its shuffles where numpy reads memory, so "
             "one machine stays the faster place for crawls that fit it; the columns say whether both "
             "paths gave the same arrays.\n", _provenance(result, name)]
    walks = [result[key] for key in ("cnr", "generated") if key in result] + result.get("partitions", [])
    if walks:
        parts += ["| run | pages | links | N | partitions | Spark (s) | numpy (s) | ratio | walk steps / core-second "
                  "| equal |", "|---|---|---|---|---|---|---|---|---|---|"]
    for row in walks:
        parts.append(f"| {row['graph']} SimRank | {row['pages']:,} | {row['links']:,} | {row['fingerprints']} "
                     f"| {row['partitions']} | {_number(row['spark_seconds'], 1)} | {_number(row['numpy_seconds'], 2)} "
                     f"| {_number(row['ratio'], 1)} | {row['walk_steps_per_core_second']:,} | {row['equal']} |")
    if "pagerank" in result:
        row = result["pagerank"]
        parts.append(f"\nPageRank on {row['graph']} (tol 1e-9): Spark {_number(row['spark_seconds'], 1)} s, numpy "
                     f"{_number(row['numpy_seconds'], 2)} s, iterations {row['iterations']}, L1 distance "
                     f"{row['l1']:.1e}.\n")
    if "lists" in result:
        row = result["lists"]
        parts.append(f"The all-pages PSimRank top 10 on {row['graph']}: Spark tasks {_number(row['spark_seconds'], 1)} s, "
                     f"the single machine {_number(row['numpy_seconds'], 1)} s; {row['identical']:,} of "
                     f"{row['lists']:,} lists identical.\n")
    if "clusterEstimate" in result:
        row = result["clusterEstimate"]
        parts.append(f"## A cluster for {row['pages']:,.0f} pages\n")
        parts.append(f"N = {row['fingerprints']} fingerprints in {row['hours']:g} hours, from the {row['from']} walk: "
                     f"{_number(row['walkStepsPerPageFingerprint'], 2)} walk steps a page and fingerprint "
                     f"({row['walkSteps']:.2e} steps), {row['clusterRatePerCore']:,.0f} steps a core-second "
                     f"(the measured rate halved for a cluster's network and stragglers), {row['batches']} batches "
                     f"of fingerprints: **{row['cores']:,.0f} cores**, {row['executorsOf8Cores']} executors of 8.\n")
    if "default" in result:
        row = result["default"]
        parts.append("\n## The default on Spark\n")
        parts.append(f"Spectral P-PSimRank on the crawl `{row['graph']}` ({row['pages']:,} pages, {row['links']:,} "
                     f"links), {row['partitions']} partitions on {row['cores']} cores:\n")
        parts.append("| stage | Spark (s) | numpy (s) | the same result |")
        parts.append("|---|---|---|---|")
        parts.append(f"| link embedding, on the executors | {_number(row['embedding_spark_seconds'], 1)} "
                     f"| {_number(row['embedding_numpy_seconds'], 1)} | {row['embedding_equal']} |")
        parts.append(f"| P-PSimRank walks (N = {row['fingerprints']}, L = {row['length']}) "
                     f"| {_number(row['walks_spark_seconds'], 1)} | {_number(row['walks_numpy_seconds'], 1)} "
                     f"| {row['walks_equal']} |")
        parts.append(f"| nearest pages, in the driver | | {_number(row['nearest_seconds'], 1)} | |")
        parts.append(f"| every page's list, Spark tasks over the stored index | {_number(row['lists_spark_seconds'], 1)} "
                     f"| {_number(row['lists_numpy_seconds'], 1)} | {row['lists_identical']:,} of {row['lists']:,} "
                     "lists |\n")
    if "defaultEstimate" in result:
        row = result["defaultEstimate"]
        hours = ", ".join(f"{stage} {value:,.0f}" for stage, value in row["coreHours"].items())
        parts.append(f"A build of the default for {row['pages']:,.0f} pages ({row['links']:,.0f} links at the "
                     f"measured links a page) in {row['hours']:g} hours, from these core-seconds a link (embedding, "
                     f"walks) and a page (nearest pages, lists), the rates halved for a cluster: **{row['cores']:,.0f} "
                     f"cores**, {row['executorsOf8Cores']} executors of 8 (core-hours: {hours}). The "
                     f"{', '.join(row['inDriver'])} run in the driver today: their share is what distributing them "
                     "would cost.\n")
    if (RESULTS / "spark-extract.json").exists():
        parts.append(_extract_part("spark-extract.json"))
    return "\n".join(parts) + "\n"


def _extract_part(name: str) -> str:
    """``spark extract`` of web archives and the cluster for Common Crawl's host graph, from
    ``benchmarks/spark.py --extract``'s results file."""
    result = _results(name)
    row, estimate = result["extract"], result["ccHostGraph"]
    parts = ["\n## From the archive: `spark extract`\n", _provenance(result, name),
             f"{len(row['files'])} WARC files read on `{row['master']}` into a link table in {_number(row['seconds'], 1)} s: "
             f"{row['pages']:,} pages, {row['links_seen']:,} links read ({row['links']:,} distinct), "
             f"{row['links_seen_per_core_second']:,} links a core-second; a table of {row['table_bytes'] / 2**20:,.1f} MiB. "
             f"The table loads as the local load of the same files: {row['equal_to_local_load']}.\n",
             f"Common Crawl's host graph ({estimate['hosts']:,.0f} hosts, {estimate['links']:,.0f} links) in "
             f"{estimate['hours']:g} hours, the rates halved for a cluster: reading archives that give that many links "
             f"takes **{estimate['extractCores']:,.0f} cores** ({estimate['extractExecutorsOf8Cores']} executors of 8; "
             f"{estimate['extractNote']}); its link table about {estimate['linkTableBytes'] / 2**30:,.0f} GiB."]
    if "default" in estimate:
        default = estimate["default"]
        hours = ", ".join(f"{stage} {value:,.0f}" for stage, value in default["coreHours"].items())
        parts.append(f" The default's build on it: **{default['cores']:,.0f} cores**, {default['executorsOf8Cores']} "
                     f"executors of 8 (core-hours: {hours}; from the default row of "
                     f"`{estimate['defaultFrom']['file']}`, commit `{str(estimate['defaultFrom']['commit'])[:10]}`).")
    return "".join(parts) + "\n"


def scripts_page(readme: Path = ROOT / "benchmarks" / "README.md") -> str:
    """The benchmark scripts, what each measures and its command: ``benchmarks/README.md``."""
    return readme.read_text(encoding="utf-8").replace("# Benchmarks", "# The benchmark scripts", 1)
