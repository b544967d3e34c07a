"""mkdocs-gen-files script: writes the generated pages (references and benchmark tables) at build
time, so that the site shows what the code and the results files say today."""

import importlib.util
from pathlib import Path

import mkdocs_gen_files

_spec = importlib.util.spec_from_file_location("reference_pages", Path(__file__).with_name("reference_pages.py"))
pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pages)

notes = (Path(__file__).parent / "_snippets" / "configuration.md").read_text(encoding="utf-8")
for path, text in {
    "reference/cli.md": pages.cli_reference(),
    "reference/exit-codes.md": pages.exit_codes_reference(),
    "reference/configuration.md": pages.configuration_reference(notes),
    "reference/cypher.md": pages.cypher_reference(),
    "benchmarks/index.md": pages.results_index(),
    "benchmarks/quality.md": pages.quality_page(),
    "benchmarks/scale.md": pages.scale_page(),
    "benchmarks/estimate.md": pages.estimate_page(),
    "benchmarks/scripts.md": pages.scripts_page(),
    **({"benchmarks/spark.md": pages.spark_page()} if (pages.RESULTS / "spark.json").exists() else {}),
    **({"benchmarks/serve.md": pages.serve_page()} if (pages.RESULTS / "serve.json").exists() else {}),
    **({"benchmarks/recrawl.md": pages.recrawl_page()} if pages.recrawl_files() else {}),
    **({"benchmarks/reading.md": pages.reading_page()} if (pages.RESULTS / "warc-read.json").exists() else {}),
}.items():
    with mkdocs_gen_files.open(path, "w") as out:
        out.write(text)
