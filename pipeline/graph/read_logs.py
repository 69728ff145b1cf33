"""Log files as batches of lines: any Beam filesystem, gzip, bz2, xz and zstd streamed in small
chunks, a file that breaks off read up to the break and the rest of it handed on as
`UnreadableRest`, a line longer than `MAX_LINE_BYTES` handed on as a `LongLine` without ever being
held whole."""
from __future__ import annotations

import bz2
import gzip
import itertools
import json
import lzma
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterable, Iterator

import apache_beam as beam
import zstandard
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from pipeline.graph import progress
from pipeline.evidence.confined import require_regular

LINES_PER_BATCH = 2000
# No log format writes a request this long (servers cap a request line and its headers at 8 to
# 64 KiB); a longer "line" is junk, typically the zero-filled tail a crash leaves in a log file.
MAX_LINE_BYTES = 1 << 20
# What a dead letter keeps of a line over the maximum: enough to see what it was.
LONG_LINE_PREFIX_BYTES = 4096


class ReadLogLines(beam.PTransform):
    """Files matching a glob -> (path, first line number, lines) batches.

    Compression follows the file extension. Batches keep Beam's per-element cost
    off the per-line path; each file is read by one worker, in order.
    """

    def __init__(self, pattern: str, lines_per_batch: int = LINES_PER_BATCH):
        super().__init__()
        self._pattern = pattern
        self._lines_per_batch = lines_per_batch

    def expand(self, pbegin):
        return (
            pbegin
            | "MatchLogFiles" >> fileio.MatchFiles(self._pattern)
            | "SpreadLogFiles" >> beam.Reshuffle()
            | "OpenLogFiles" >> fileio.ReadMatches()
            | "BatchLines" >> beam.FlatMap(line_batches, self._lines_per_batch)
        )


@dataclass(frozen=True)
class UnreadableRest:
    """Where reading a log file broke off (a truncated gzip, trailing garbage, an I/O error):
    the lines before it are audited; the rest of the file becomes one dead letter."""

    path: str
    line: int  # the number the next line would have had
    message: str


@dataclass(frozen=True)
class LongLine:
    """A line longer than `MAX_LINE_BYTES`: its length, its first `LONG_LINE_PREFIX_BYTES`, and
    where it is. It counts as one line read and becomes one dead letter."""

    path: str
    line: int
    length: int
    prefix: str


@dataclass(frozen=True)
class _Overlong:
    prefix: bytes
    length: int


_CHUNK_BYTES = 1 << 16


def line_batches(
    readable: fileio.ReadableFile, size: int
) -> Iterator[tuple[str, int, list[str]] | UnreadableRest]:
    """(path, first line number, lines) batches of one file, then an UnreadableRest if the
    file could not be read to its end."""
    path = readable.metadata.path
    first, batch = 1, []
    position = _Position()
    try:
        for raw in log_lines(_chunks(path, position)):
            if isinstance(raw, _Overlong):
                if batch:
                    yield path, first, batch
                yield LongLine(path, first + len(batch), raw.length, decoded(raw.prefix))
                first, batch = first + len(batch) + 1, []
                continue
            batch.append(decoded(raw))
            if len(batch) == size:
                progress.file_read(path, position.file_bytes(), size)
                yield path, first, batch
                first, batch = first + size, []
    # Whatever stops one file (any decompressor's complaint, an I/O error) stops that file only.
    except Exception as error:
        if batch:
            yield path, first, batch
        yield UnreadableRest(path, first + len(batch), f"{type(error).__name__}: {error}; {position}")
        return
    progress.file_read(path, readable.metadata.size_in_bytes, len(batch))
    if batch:
        yield path, first, batch


def first_lines(path: str, count: int) -> list[bytes]:
    """Up to `count` first non-blank lines of a log file, decompressed as reading it will be, lines
    over the maximum left out; a file that breaks off gives the lines before the break (reading it
    in full reports the break)."""
    lines = []
    try:
        for raw in log_lines(_chunks(path, _Position())):
            if isinstance(raw, bytes) and raw.strip():
                lines.append(raw)
                if len(lines) == count:
                    break
    except OSError:
        raise
    except Exception:
        pass  # a decompressor's complaint: the audit's read makes it the file's dead letter
    return lines


def file_lines(path: str) -> Iterator[str | None]:
    """The lines of one log file as `line_batches` reads them, None for a line over the maximum."""
    for raw in log_lines(_chunks(path, _Position())):
        yield None if isinstance(raw, _Overlong) else decoded(raw)


def decoded(raw: bytes) -> str:
    # Undecodable bytes become \xNN, the escape servers use themselves.
    return raw.decode("utf-8", "backslashreplace")


def log_lines(chunks: Iterable[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[bytes | _Overlong]:
    """The lines of a log file (`split_lines`); a JSON export (an array of entries, or entries
    pretty-printed over many lines, as `gcloud logging read` and consoles give them) as one compact
    JSON line per entry, an entry longer than `limit` as an `_Overlong`.

    An export is told by its first non-blank line: `[`, or a `{` that does not close on that line.
    It is read whole (exports are written whole, and are small next to the logs they come from)."""
    chunks = iter(chunks)
    head = b""
    for chunk in chunks:
        head += chunk
        if b"\n" in head.lstrip() or len(head) > _CHUNK_BYTES:
            break
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0].strip()
    if not (first.startswith(b"[") or (first.startswith(b"{") and not first.endswith(b"}"))):
        yield from split_lines(itertools.chain((head,), chunks), limit)
        return
    text = b"".join(itertools.chain((head,), chunks)).decode("utf-8", "backslashreplace").lstrip("\ufeff")
    decoder = json.JSONDecoder()
    position = 0
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position == len(text):
            return
        value, position = decoder.raw_decode(text, position)  # a ValueError ends the file: its dead letter
        for entry in value if isinstance(value, list) else (value,):
            line = json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
            yield line if len(line) <= limit else _Overlong(line[:LONG_LINE_PREFIX_BYTES], len(line))


def split_lines(chunks: Iterable[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[bytes | _Overlong]:
    """Lines of a byte stream without their ends: LF, CR LF, and a lone CR each end a line (old
    Mac tools and some log shippers write CR alone). Linear in the input, whatever the chunking.

    A line longer than `limit` is an `_Overlong`: its prefix and length. Of it, no more than
    `limit` bytes and a chunk are held at any time, however long it runs."""
    head: list[bytes] = []  # pieces of a line that began in an earlier chunk
    held = 0  # bytes in head
    overlong: _Overlong | None = None  # the line being skipped, once it passed the limit
    after_cr = False
    for chunk in chunks:
        if after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]  # the LF of a CR LF split between chunks
            after_cr = False  # it ended that CR LF: a next LF ends a line of its own
        if not chunk:
            continue
        pieces = chunk.splitlines(keepends=True)  # bytes split at LF, CR LF and CR only
        after_cr = chunk[-1:] == b"\r"
        for piece in pieces:
            ended = piece[-1:] in (b"\n", b"\r")
            text = piece if not ended else piece.rstrip(b"\r\n") if piece[-2:] == b"\r\n" else piece[:-1]
            if overlong is None and held + len(text) > limit:
                overlong = _Overlong(b"".join(head)[:LONG_LINE_PREFIX_BYTES], held)
                head, held = [], 0
            if overlong is not None:
                prefix = overlong.prefix
                if len(prefix) < LONG_LINE_PREFIX_BYTES:
                    prefix += text[:LONG_LINE_PREFIX_BYTES - len(prefix)]
                overlong = _Overlong(prefix, overlong.length + len(text))
                if ended:
                    yield overlong
                    overlong = None
                continue
            if not ended:
                head.append(text)  # the last piece: the line goes on in the next chunk
                held += len(text)
                break
            if head:
                head.append(text)
                text, head, held = b"".join(head), [], 0
            yield text
    if overlong is not None:
        yield overlong
    elif head:
        yield b"".join(head)


class _Position:
    """How far reading got, for the dead letter of a file that breaks off."""

    def __init__(self) -> None:
        self.decompressed = 0
        self.raw: BinaryIO | None = None
        self.file_offset: int | None = None

    def stop(self) -> None:
        """Note the offset reached in the file itself, while it is still open."""
        try:
            self.file_offset = self.raw.tell() if self.raw is not None else None
        except (OSError, ValueError):
            self.file_offset = None

    def file_bytes(self) -> int:
        """Bytes of the file itself read so far (of a compressed file, the compressed bytes); 0 once
        it is closed, when the file's size says it all."""
        if self.raw is None:
            return self.decompressed
        return 0 if self.raw.closed else self.raw.tell()

    def __str__(self) -> str:
        where = f"{self.decompressed:,} bytes read"
        if self.file_offset is not None:
            where += f", at byte {self.file_offset:,} of the file"
        return where


def _chunks(path: str, position: _Position) -> Iterator[bytes]:
    require_regular(path)  # a FIFO or device matched by the glob would block or never end
    with open_log(path, position) as handle:
        # read1 hands over what one member or block gave, so the lines before a break are kept.
        read = getattr(handle, "read1", handle.read)
        try:
            while chunk := read(_CHUNK_BYTES):
                position.decompressed += len(chunk)
                yield chunk
        except Exception:
            position.stop()
            raise


# Beam's own decompressing reader takes 16 MiB of compressed input at a time and holds all of it
# decompressed, and logs compress about tenfold; these readers stream in small chunks instead,
# so memory stays flat however large a log file is.
_STREAMING_DECOMPRESSORS: dict[str, Callable[[BinaryIO], BinaryIO]] = {
    CompressionTypes.GZIP: lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    CompressionTypes.BZIP2: lambda raw: bz2.BZ2File(raw, "rb"),
    CompressionTypes.LZMA: lambda raw: lzma.LZMAFile(raw, "rb"),
    # zstandard comes with Beam; read_across_frames reads a file of several frames (zstd -c a b) to its end
    CompressionTypes.ZSTD: lambda raw: zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True),
}


@contextmanager
def open_log(path: str, position: _Position | None = None) -> Iterator[BinaryIO]:
    """A log file's bytes on any Beam filesystem, decompressed as its extension says."""
    decompress = _STREAMING_DECOMPRESSORS.get(CompressionTypes.detect_compression_type(path))
    if decompress is None:
        with FileSystems.open(path) as handle:
            yield handle
        return
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as raw, decompress(raw) as handle:
        if position is not None:
            position.raw = raw
        yield handle
