"""A full disk, for real: a small tmpfs mounted for the test. `run`, `report` and `whatif` say so in
one line naming the path (exit 2) and leave nothing that looks complete: no `OUT` from a run cut
short, no `report.html` or what-if summary cut short, no temporary file."""
from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import REPO
from pipeline.cli.main import main

SAMPLE = [
    f"--logs={REPO / 'samples/logs/*.log.gz'}", "--log-format=host_combined",
    f"--robots={REPO / 'samples/robots/history.jsonl'}", f"--ranges={REPO / 'samples/ranges'}",
    "--runner=FnApiRunner", "--progress=never",
]


@pytest.fixture
def small_disk(tmp_path):
    """Mounts a tmpfs of the given size under tmp_path; unmounted after the test."""
    mounted = []

    def mount(size: str) -> Path:
        folder = tmp_path / f"disk{len(mounted)}"
        folder.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            message = f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode}): the full-disk tests need root"
            if os.environ.get("CI") == "true":
                pytest.fail(message)
            pytest.skip(message)
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _fill(disk: Path) -> None:
    """Take every free block of `disk`; a disk the output already filled may refuse the filler
    file itself."""
    try:
        with open(disk / "filler", "wb") as filler:
            while True:
                filler.write(b"\0" * (64 << 10))
                filler.flush()
    except OSError as error:
        if error.errno != errno.ENOSPC:
            raise


def _one_line(capsys, *said: str) -> None:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("crawl-audit: "), err
    for words in said:
        assert words in err, err


@pytest.mark.slow
def test_a_run_on_a_full_disk_says_so_and_leaves_no_out(small_disk, capsys):
    disk = small_disk("1m")
    out = disk / "out"
    capsys.readouterr()
    assert main(["run", *SAMPLE, f"--out={out}"]) == 2
    _one_line(capsys, "No space left on device", f"nothing was written to {out}")
    assert list(disk.iterdir()) == []


@pytest.fixture
def finished_on(small_disk, sample_run):
    """A copy of the sample's run on a small disk of its own (the run takes 8 MiB)."""
    def finished(size: str) -> Path:
        disk = small_disk(size)
        shutil.copytree(sample_run, disk / "out")
        return disk / "out"

    return finished


@pytest.mark.slow
def test_report_on_a_full_disk_leaves_the_page_it_had(finished_on, capsys):
    out = finished_on("12m")
    before = (out / "report.html").read_bytes()
    (out / "report.html").write_bytes(before[: len(before) // 2])  # an earlier page, whatever it was
    earlier = (out / "report.html").read_bytes()
    _fill(out.parent)
    capsys.readouterr()
    assert main(["report", str(out)]) == 2
    _one_line(capsys, f"cannot write {out / 'report.html'}: No space left on device")
    assert (out / "report.html").read_bytes() == earlier
    assert not [name for name in os.listdir(out) if name.startswith(".")]


@pytest.mark.slow
def test_whatif_on_a_full_disk_leaves_no_summary_for_its_flips(finished_on, tmp_path, capsys):
    out = finished_on("12m")
    proposal = tmp_path / "proposed.txt"
    proposal.write_text("User-agent: *\nDisallow: /\n")
    argv = ["whatif", str(out), "--host", "www.example.com", "--proposed", str(proposal)]
    assert main(argv) == 0
    assert (out / "whatif" / "summary.json").exists()
    _fill(out.parent)
    capsys.readouterr()
    assert main(argv) == 2
    _one_line(capsys, f"cannot write {out / 'whatif'}", "No space left on device")
    assert not (out / "whatif" / "summary.json").exists()
    assert not [name for name in os.listdir(out / "whatif") if name.startswith(".")]
