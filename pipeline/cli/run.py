"""`crawl-audit run`: audit access logs, batch or streaming.

A batch run checks everything it can before any work (settings, Beam's own flags, the log files,
the `--out` folder), runs the graph into a staging folder, moves the finished run into place with
its manifest, and prints the closing report and writes `report.html`. A streaming run builds the
same audit on a stream and runs until stopped. Exit codes: 0 done, 1 a run-health check named by --fail-on found a problem,
2 usage or input error.
"""
from __future__ import annotations

import argparse
import atexit
import contextlib
import io
import logging
import os
import re
import shutil
import socket
import tempfile

from pipeline.cli.terminal import say
from pipeline.cli.errors import EXIT_FINDINGS, EXIT_OK, InputError


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    # Beam is imported only now, so that the other commands answer without loading it; its
    # import-time warnings about optional cloud clients would bury the report.
    logging.getLogger().setLevel(logging.ERROR)
    # A failing step is logged by Beam with its traceback and then raised: the raised error is
    # reported (one line for an I/O error), so the log would only say it twice.
    logging.getLogger("apache_beam").setLevel(logging.CRITICAL)
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
    from matcher.logformats.inference import InferredFormat
    from pipeline.graph import build, progress
    from pipeline.graph.settings import with_file_formats
    from pipeline.report import html, text
    from pipeline.tables import run_folder

    log_files = build.log_files(settings.inputs.logs)
    inferred: dict[str, InferredFormat] = {}
    if settings.inputs.log_format == AUTO:
        detected = build.detect_file_formats(log_files)
        for path, candidate in detected.items():
            say(f"log format of {path}: {candidate}")
        inferred = {path: candidate for path, candidate in detected.items() if isinstance(candidate, InferredFormat)}
        settings = with_file_formats(settings, {
            path: candidate.name for path, candidate in detected.items() if not isinstance(candidate, build.Unreadable)
        }, {path: dict(candidate.field_map) for path, candidate in inferred.items() if candidate.field_map is not None})
    used = set((settings.inputs.file_formats or {}).values()) | {settings.inputs.log_format}
    for name in sorted(name for name in used if name != AUTO and is_zoneless(name)):
        say(f"{name} times carry no zone: read as {settings.inputs.log_timezone} (--log-timezone)")
    folder = run_folder.RunFolder.prepare(settings.outputs.out, settings.outputs.overwrite)
    try:
        with contextlib.ExitStack() as started:
            plan = started.enter_context(local.speedups(settings, options, log_files))
            started.enter_context(progress.reporting(sum(f.size_in_bytes for f in log_files), settings.outputs.progress))
            started.enter_context(_temporary_folder_of_its_own())
            auditor = build.line_auditor(settings)
            with beam.Pipeline(runner=plan.runner, options=options) as pipeline:
                outputs = build.build(pipeline, settings, plan.grouping, auditor)
                build.write_outputs(outputs, str(folder.staging), settings.outputs.format)
        chosen = settings.inputs.file_formats or {}
        files = [run_folder.LogFile(f.path, f.size_in_bytes, chosen.get(f.path), inferred.get(f.path)) for f in log_files]
        formats = build.table_formats(settings.outputs.format)
        folder.commit(run_folder.manifest(
            folder.staging, settings, files, formats, plan.worker_processes, auditor.ranges.problems))
    except BaseException as error:
        folder.discard()
        failure = _io_failure(error)
        if failure is not None:
            raise InputError(f"{failure}; nothing was written to {settings.outputs.out}") from error
        raise
    # The page is written before anything is printed, so a reader that leaves early (`| head`)
    # does not keep it from being written.
    try:
        written = html.write(settings.outputs.out)
    except ValueError as error:
        raise InputError(
            f"{error}; the run itself is complete in {settings.outputs.out}: make room and run"
            f" `crawl-audit report {settings.outputs.out}`"
        ) from error
    summary = text.load(settings.outputs.out)
    say(text.render(summary))
    say(f"\nreport: {written}")
    failing = sorted({finding.check for finding in summary.health} & settings.outputs.fail_on)
    if failing:
        say(f"run health: failing on {', '.join(failing)} (--fail-on)")
        return EXIT_FINDINGS
    return EXIT_OK


# How a worker's OSError reaches the launching process: as text, in the runner's own error.
_OS_ERROR = re.compile(r"(?:OSError|IOError|PermissionError|FileNotFoundError): \[Errno \d+\] ([^\[\n]+?)(?::\s*'([^'\n]+)')?\s*(?:\[while running '([^']+)'\])?$", re.M)


def _io_failure(error: BaseException) -> str | None:
    """What a run that failed on an I/O error (a full disk, a quota, a read-only or failing file
    system) says in one line: the error, the file when known, the step; None for other errors."""
    if not isinstance(error, Exception) or isinstance(error, (ValueError, InputError)):
        return None
    if isinstance(error, OSError) and error.strerror:
        where = f" {error.filename}" if error.filename else ""
        return f"I/O error{where}: {error.strerror}"
    found = _OS_ERROR.search(str(error))
    if found is None:
        return None
    reason, path, step = found.groups()
    where = f" {path}" if path else ""
    during = f" (step {step})" if step else ""
    return f"I/O error{where}: {reason.strip()}{during}"


@contextlib.contextmanager
def _temporary_folder_of_its_own():
    """Everything Beam's runners put in temporary folders (the pipeline's, its requirements cache,
    a worker's, which some runners leave even after a run that succeeded, and all of them after a
    stop before the run started) goes into one folder of the run's own, removed on leaving
    however the run ends. Workers started meanwhile inherit it through TMPDIR.

    A job service Beam starts for the run (Prism) stays up until the process exits and then
    removes its own `beam-temp*` folder itself: that folder is left to it, and what remains goes
    at exit, after the job service's own clean-up (exit handlers run last registered first)."""
    folder = tempfile.mkdtemp(prefix="crawl-audit-run-")

    def remove_the_rest() -> None:
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove_the_rest)
    saved = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir = os.environ["TMPDIR"] = folder
    try:
        yield
    finally:
        tempfile.tempdir = saved[0]
        if saved[1] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved[1]
        with os.scandir(folder) as entries:
            kept = [entry.name for entry in entries if entry.name.startswith(_JOB_SERVICE_FOLDER)]
        for name in set(os.listdir(folder)) - set(kept):
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(folder, name))
        if not kept:
            shutil.rmtree(folder, ignore_errors=True)
            atexit.unregister(remove_the_rest)


# What Beam's SubprocessJobServer names its temporary folder (tempfile.mkdtemp(prefix=...)).
_JOB_SERVICE_FOLDER = "beam-temp"


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
