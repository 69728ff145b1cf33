"""Beam's Python job service, running each job on as many SDK workers as asked.

`python -m apache_beam.runners.portability.local_job_service_main` runs every job on one SDK
worker: it hands the pipeline straight to the FnApiRunner, which reads `--direct_num_workers`
only on its other entry point. This serves the same Job API and gives each job `--sdk-workers`
workers of the job's environment (with `--environment_type=EXTERNAL`, that many workers started
by the worker pool at `--environment_config`).

    python tests/job_service.py --port 8099 --sdk-workers 2
"""
from __future__ import annotations

import argparse
import signal
import sys
import threading

from apache_beam.portability.api import beam_job_api_pb2
from apache_beam.runners.portability import local_job_service
from apache_beam.runners.portability.fn_api_runner import fn_runner


def serve(port: int, sdk_workers: int) -> None:
    class Job(local_job_service.BeamJob):
        def _invoke_runner(self):
            self.set_state(beam_job_api_pb2.JobState.RUNNING)
            runner = fn_runner.FnApiRunner(provision_info=self._provision_info)
            # The one setting run_via_runner_api leaves at its default of one worker.
            runner._num_workers = sdk_workers
            return runner.run_via_runner_api(self._pipeline_proto, self.pipeline_options())

    servicer = local_job_service.LocalJobServicer(beam_job_type=Job)
    bound = servicer.start_grpc_server(port)
    print(f"job service listening on port {bound} with {sdk_workers} SDK workers per job", flush=True)
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    try:
        stopping.wait()
    except KeyboardInterrupt:
        pass
    finally:
        servicer.stop()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=8099, help="the Job API port (0: any free one)")
    parser.add_argument("--sdk-workers", type=int, default=1, help="SDK workers per job")
    args = parser.parse_args(argv)
    if args.sdk_workers < 1:
        parser.error("--sdk-workers must be at least 1")
    serve(args.port, args.sdk_workers)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
