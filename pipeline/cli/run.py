"""`crawl-audit run`: audit access logs, batch or streaming.

A batch run checks everything it can before any work (settings, Beam's own flags, the log files,
the `--out` folder), runs the graph into a staging folder, moves the finished run into place with
its manifest, and prints the closing report and writes `report.html`. A streaming run builds the
same audit on a stream and runs until stopped. Exit codes: 0 done, 1 a run-health check named by --fail-on found a problem,
2 usage or input error.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import logging
import socket

from matcher.printable import printable
from pipeline.cli.errors import EXIT_FINDINGS, EXIT_OK, InputError


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    # Beam is imported only now, so that the other commands answer without loading it; its
    # import-time warnings about optional cloud clients would bury the report.
    logging.getLogger().setLevel(logging.ERROR)
    from pipeline.graph import build

    try:
        settings, options = read_run(args, beam_args)
        if settings.streaming:
            build.run_streaming(settings, options)
            return EXIT_OK
        return _run_batch(settings, options)
    except BrokenPipeError:
        raise  # the reader of the report left: `main` ends quietly
    except (ValueError, OSError) as error:
        raise InputError(str(error)) from error


def _run_batch(settings, options) -> int:
    import apache_beam as beam

    from pipeline import local
    from matcher.logformats import AUTO, is_zoneless
    from pipeline.graph import build, progress
    from pipeline.graph.settings import with_file_formats
    from pipeline.report import html, text
    from pipeline.tables import run_folder

    log_files = build.log_files(settings.inputs.logs)
    if settings.inputs.log_format == AUTO:
        detected = build.detect_file_formats(log_files)
        for path, candidate in detected.items():
            print(f"log format of {printable(path)}: {candidate}")
        settings = with_file_formats(settings, {path: candidate.name for path, candidate in detected.items()})
    used = set((settings.inputs.file_formats or {}).values()) | {settings.inputs.log_format}
    for name in sorted(name for name in used if name != AUTO and is_zoneless(name)):
        print(f"{name} times carry no zone: read as {settings.inputs.log_timezone} (--log-timezone)")
    folder = run_folder.RunFolder.prepare(settings.outputs.out, settings.outputs.overwrite)
    try:
        with (
            local.speedups(settings, options, log_files) as plan,
            progress.reporting(sum(f.size_in_bytes for f in log_files), settings.outputs.progress),
            beam.Pipeline(runner=plan.runner, options=options) as pipeline,
        ):
            outputs = build.build(pipeline, settings, plan.grouping)
            build.write_outputs(outputs, str(folder.staging), settings.outputs.format)
        chosen = settings.inputs.file_formats or {}
        files = [run_folder.LogFile(f.path, f.size_in_bytes, chosen.get(f.path)) for f in log_files]
        formats = build.table_formats(settings.outputs.format)
        folder.commit(run_folder.manifest(folder.staging, settings, files, formats, plan.worker_processes))
    except BaseException:
        folder.discard()
        raise
    # The page is written before anything is printed, so a reader that leaves early (`| head`)
    # still finds it.
    written = html.write(settings.outputs.out)
    summary = text.load(settings.outputs.out)
    print(text.render(summary))
    print(f"\nreport: {written}")
    failing = sorted({finding.check for finding in summary.health} & settings.outputs.fail_on)
    if failing:
        print(f"run health: failing on {', '.join(failing)} (--fail-on)")
        return EXIT_FINDINGS
    return EXIT_OK


def read_run(args: argparse.Namespace, beam_args: list[str]):
    """The run's settings and Beam options from a parsed `run` command line and the flags it
    hands to Beam, both checked; a ValueError says what is wrong."""
    from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions

    from pipeline.graph.settings import read_settings

    options = PipelineOptions([*beam_args, *(["--streaming"] if args.streaming else [])])
    _check_beam_flags(options, beam_args)
    _check_job_endpoint(options)
    workers = options.view_as(DirectOptions).direct_num_workers
    if workers is not None and workers < 0:
        raise ValueError(f"--direct_num_workers: expected a number of at least 0, got {workers}")
    return read_settings(args, options, beam_args), options


def _check_job_endpoint(options) -> None:
    """The job service `--job_endpoint` names answers. Beam would wait `--job_server_timeout`
    (five minutes by default) for it, then fail with a traceback."""
    from apache_beam.options.pipeline_options import PortableOptions, StandardOptions

    endpoint = options.view_as(PortableOptions).job_endpoint
    if options.view_as(StandardOptions).runner != "PortableRunner" or endpoint in (None, "embed"):
        return
    host, _, port = endpoint.rpartition(":")
    if not port.isdigit():
        raise ValueError(f"--job_endpoint {endpoint}: expected HOST:PORT or embed")
    try:
        socket.create_connection((host.strip("[]") or "localhost", int(port)), timeout=10).close()
    except OSError as error:
        raise ValueError(f"no job service answers at {endpoint} (--job_endpoint): {error.strerror or error}") from None


def _check_beam_flags(options, beam_args: list[str]) -> None:
    """Every flag left for Beam is one of Beam's, with a value it takes."""
    parsers = []
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            options.get_all_options(add_extra_args_fn=parsers.append)
    except SystemExit:
        said = errors.getvalue().strip().splitlines()
        reason = said[-1].split("error: ", 1)[-1] if said else "not accepted"
        raise ValueError(f"Beam option {reason}") from None
    with contextlib.redirect_stderr(io.StringIO()):
        _, unknown = parsers[0].parse_known_args(beam_args)
    flags = [arg.split("=", 1)[0] for arg in unknown if arg.startswith("-")]
    if flags or unknown:
        shown = flags[0] if flags else unknown[0]
        raise ValueError(
            f"unknown option {shown}: neither crawl-audit's (crawl-audit run --help) nor Apache Beam's"
        )
