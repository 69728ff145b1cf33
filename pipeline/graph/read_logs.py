"""Log files as batches of lines: any Beam filesystem, gzip, bz2, xz and zstd streamed in small
chunks, a file that breaks off read up to the break and the rest of it handed on as
`UnreadableRest`, a line longer than `MAX_LINE_BYTES` handed on as a `LongLine` without ever being
held whole.

A large plain file is read in pieces (`LogPiece`) cut at line ends, so that one big access.log
is read and audited on every core like many files are; each piece knows the number of its first
line, and a piece of a W3C file starts with the `#Fields:` line in force there (`FieldsInForce`).
Compressed files and JSON exports are read whole."""
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

from matcher.logformats.json_text import json_bytes_text
from matcher.logformats.w3c import is_fields_directive
from pipeline.graph import progress
from pipeline.evidence.confined import require_regular

LINES_PER_BATCH = 2000
# No log format writes a request this long (servers cap a request line and its headers at 8 to
# 64 KiB); a longer "line" is junk, typically the zero-filled tail a crash leaves in a log file.
MAX_LINE_BYTES = 1 << 20
# What a dead letter keeps of a line over the maximum: enough to see what it was.
LONG_LINE_PREFIX_BYTES = 4096
# A plain file over this size is read in pieces of about this size. Smaller pieces spread one file
# more evenly over the workers; each costs a seek and a bundle.
PIECE_BYTES = 16 << 20


class ReadLogLines(beam.PTransform):
    """Files matching a glob -> (path, first line number, lines) batches.

    Compression follows the file extension. Batches keep Beam's per-element cost
    off the per-line path; each piece of a file (`file_pieces`) is read by one worker, in order.
    `piece_bytes` None reads every file whole.
    """

    def __init__(self, pattern: str, lines_per_batch: int = LINES_PER_BATCH, piece_bytes: int | None = PIECE_BYTES):
        super().__init__()
        self._pattern = pattern
        self._lines_per_batch = lines_per_batch
        self._piece_bytes = piece_bytes

    def expand(self, pbegin):
        return (
            pbegin
            | "MatchLogFiles" >> fileio.MatchFiles(self._pattern)
            | "CutLargeFiles" >> beam.FlatMap(file_pieces, self._piece_bytes)
            | "SpreadLogPieces" >> beam.Reshuffle()
            | "BatchLines" >> beam.FlatMap(piece_batches, self._lines_per_batch)
        )


@dataclass(frozen=True)
class LogPiece:
    """What one worker reads of a log file: the whole file, or of a large plain file the bytes
    from `start` to `end` (None: the file's end), which begin at a line's start and end at a
    line end. `first_line` is the number of its first line in the file, `fields` the W3C
    `#Fields:` line in force at `start` (None: none before it), `size` the file's size."""

    path: str
    size: int
    start: int = 0
    end: int | None = None
    first_line: int = 1
    fields: str | None = None

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.end is None


@dataclass(frozen=True)
class FieldsInForce:
    """The `#Fields:` line in force where a piece of a W3C file starts, handed on before the
    piece's first batch: the parser of that file takes it, and it is no line of the piece."""

    path: str
    line: str


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
) -> Iterator[tuple[str, int, list[str]] | UnreadableRest | LongLine]:
    """(path, first line number, lines) batches of one whole file, then an UnreadableRest if the
    file could not be read to its end."""
    return piece_batches(LogPiece(readable.metadata.path, readable.metadata.size_in_bytes), size)


def piece_batches(
    piece: LogPiece, size: int
) -> Iterator[tuple[str, int, list[str]] | UnreadableRest | LongLine | FieldsInForce]:
    """(path, first line number, lines) batches of one piece of a file, numbered as lines of the
    file, then an UnreadableRest if the piece could not be read to its end."""
    path = piece.path
    if piece.fields is not None:
        yield FieldsInForce(path, piece.fields)
    first, batch = piece.first_line, []
    position = _Position()
    if piece.whole:
        read, shown = log_lines(_chunks(path, position)), path
    else:
        # a piece is part of a file already known to be lines: no export to look for
        read, shown = split_lines(_chunks(path, position, piece.start, piece.end)), f"{path}@{piece.start}"
    length = (piece.size if piece.end is None else piece.end) - piece.start
    try:
        for raw in read:
            if isinstance(raw, _Overlong):
                if batch:
                    yield path, first, batch
                yield LongLine(path, first + len(batch), raw.length, decoded(raw.prefix))
                first, batch = first + len(batch) + 1, []
                continue
            batch.append(decoded(raw))
            if len(batch) == size:
                progress.file_read(shown, position.file_bytes(), size)
                yield path, first, batch
                first, batch = first + size, []
    # Whatever stops one file (any decompressor's complaint, an I/O error) stops that file only.
    except Exception as error:
        if batch:
            yield path, first, batch
        yield UnreadableRest(path, first + len(batch), f"{type(error).__name__}: {error}; {position}")
        return
    progress.file_read(shown, length, len(batch))
    if batch:
        yield path, first, batch


def file_pieces(metadata, piece_bytes: int | None) -> Iterator[LogPiece]:
    """The pieces one file is read in: a plain file over `piece_bytes` cut at the first line end
    after every `piece_bytes`, any other file whole. Cutting reads the file once, counting its
    lines, much faster than reading its lines; a file it cannot read is read whole, which reports
    why."""
    path, size = metadata.path, metadata.size_in_bytes
    if piece_bytes is None or not _may_cut(path, size, piece_bytes):
        yield LogPiece(path, size)
        return
    try:
        cuts = _cuts(path, size, piece_bytes)
    except Exception:
        cuts = None
    if not cuts:
        yield LogPiece(path, size)
        return
    starts = [(0, 1, None), *cuts]
    ends = [offset for offset, _, _ in cuts] + [None]  # the last to the file's end, should it have grown
    for (start, line, fields), end in zip(starts, ends):
        yield LogPiece(path, size, start, end, line, fields)


def pieces_expected(log_files: Iterable, piece_bytes: int = PIECE_BYTES) -> int:
    """About how many pieces `file_pieces` reads these files in (FileMetadata), from their names
    and sizes alone."""
    return sum(
        -(-f.size_in_bytes // piece_bytes) if _may_cut(f.path, f.size_in_bytes, piece_bytes) else 1 for f in log_files
    )


def _may_cut(path: str, size: int, piece_bytes: int) -> bool:
    """A file over one piece that its name says is plain, not compressed."""
    return size > piece_bytes and CompressionTypes.detect_compression_type(path) == CompressionTypes.UNCOMPRESSED


def _cuts(path: str, size: int, piece_bytes: int) -> list[tuple[int, int, str | None]] | None:
    """(offset, number of the line starting there, `#Fields:` line in force) of each cut of a
    plain file, the first after `piece_bytes`, the next `piece_bytes` after that one...; None
    when the file is a JSON export (read whole) or has no line end to cut at.

    Lines end as `split_lines` ends them (LF, CR LF, a lone CR); cuts fall after an LF only, so
    a CR LF is never cut in two. The file is scanned in segments that end at an LF, so that a
    directive never straddles two of them."""
    cuts: list[tuple[int, int, str | None]] = []
    offset = ended = 0  # bytes scanned, and the line ends in them
    after_cr = False
    fields: str | None = None
    target = piece_bytes
    carry = b""
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as handle:
        head = True
        while True:
            chunk = handle.read(_SCAN_BYTES)
            data = carry + chunk
            if not data:
                break
            cut_at = data.rfind(b"\n") + 1 if chunk else len(data)
            if cut_at == 0 and len(data) < MAX_LINE_BYTES + _SCAN_BYTES:
                carry = data  # no whole line yet: read on
                continue
            segment, carry = (data[:cut_at], data[cut_at:]) if cut_at else (data, b"")
            if head:
                if _export_verdict(segment):
                    return None
                head = False
            while target < offset + len(segment):
                found = segment.find(b"\n", max(0, target - offset))
                if found < 0:
                    break
                cut = found + 1
                ended, after_cr = ended + _line_ends(segment[:cut], after_cr), False
                fields = _last_fields(segment[:cut], fields)
                offset += cut
                segment = segment[cut:]
                if offset < size:
                    cuts.append((offset, ended + 1, fields))
                target = offset + piece_bytes
            if segment:
                ended, after_cr = ended + _line_ends(segment, after_cr), segment[-1:] == b"\r"
            fields = _last_fields(segment, fields)
            offset += len(segment)
            if not chunk:
                break
    return cuts or None


_SCAN_BYTES = 1 << 20


def _line_ends(data: bytes, after_cr: bool) -> int:
    """Line ends in `data`, a CR LF one, the LF of a CR LF begun before `data` none."""
    ends = data.count(b"\n")
    if b"\r" in data:
        ends += data.count(b"\r") - data.count(b"\r\n")
    return ends - 1 if after_cr and data[:1] == b"\n" else ends


def _last_fields(segment: bytes, fields: str | None) -> str | None:
    """The last `#Fields:` line of `segment` (whole lines), else `fields`. Only a `#` with nothing
    but blanks before it on its line can begin a directive, and most logs have none."""
    end = len(segment)
    while (mark := segment.rfind(b"#", 0, end)) >= 0:
        start = max(segment.rfind(b"\n", 0, mark), segment.rfind(b"\r", 0, mark)) + 1
        if not decoded(segment[start:mark]).replace("\ufeff", "").strip():
            ends = [found for found in (segment.find(b"\n", mark), segment.find(b"\r", mark)) if found >= 0]
            line = decoded(segment[start:min(ends, default=len(segment))])
            if is_fields_directive(line):
                return line
        end = mark
    return fields


def _export_verdict(data: bytes) -> bool | None:
    """Whether a file beginning with `data` is a JSON export, by parsing its first entry: an array
    whose first entry parses, or an object that parses over more than one line. A first line that
    is a whole JSON value makes the file JSON lines however long that line is, and a head that does
    not parse makes it lines (each line then its own outcome). None: `data` ends before the first
    entry does, and more of the file decides."""
    if not data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"{", b"[")):
        return False
    text = json_bytes_text(data).lstrip("\ufeff \t\r\n")
    is_array = text.startswith("[")
    entry = text[1:].lstrip(" \t\r\n") if is_array else text
    if is_array and entry.startswith("]"):
        return True
    try:
        _, end = json.JSONDecoder().raw_decode(entry)
    except ValueError as error:
        incomplete = "Unterminated string" in str(error) or getattr(error, "pos", 0) >= len(entry.rstrip())
        return None if incomplete else False
    if is_array:
        after = entry[end:].lstrip(" \t\r\n")
        return after[:1] in (",", "]") or (None if not after else False)
    return "\n" in entry[:end] or "\r" in entry[:end]


def first_lines(path: str, count: int) -> tuple[list[bytes], str | None]:
    """Up to `count` first non-blank lines of a log file, decompressed as reading it will be, lines
    over the maximum left out, and why reading stopped before them when it did: a file that breaks
    off or cannot be read (a `.gz` that is not gzip) gives the lines before the break, and reading
    it in full makes the break that file's dead letter."""
    lines: list[bytes] = []
    try:
        for raw in log_lines(_chunks(path, _Position())):
            if isinstance(raw, bytes) and raw.strip():
                lines.append(raw)
                if len(lines) == count:
                    break
    except Exception as error:
        return lines, f"{type(error).__name__}: {error}"
    return lines, None


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

    An export is told by parsing its first entry (`_export_verdict`): JSON lines, however long
    their first line, are lines. An export is read whole (exports are written whole, and are small
    next to the logs they come from)."""
    chunks = iter(chunks)
    head, export = b"", None
    for chunk in chunks:
        head += chunk
        if head.lstrip(b"\xef\xbb\xbf \t\r\n"):
            export = _export_verdict(head)
            if export is not None or len(head) > limit:
                break
    if not export:
        yield from split_lines(itertools.chain((head,), chunks), limit)
        return
    text = json_bytes_text(b"".join(itertools.chain((head,), chunks))).lstrip("\ufeff")
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


def _chunks(path: str, position: _Position, start: int = 0, end: int | None = None) -> Iterator[bytes]:
    """The bytes of a log file, decompressed; of a plain file's piece, those from `start` to `end`."""
    require_regular(path)  # a FIFO or device matched by the glob would block or never end
    with open_log(path, position) as handle:
        if start:
            handle.seek(start)
        left = None if end is None else end - start
        # read1 hands over what one member or block gave, so the lines before a break are kept.
        read = getattr(handle, "read1", handle.read)
        try:
            while left != 0 and (chunk := read(_CHUNK_BYTES if left is None else min(_CHUNK_BYTES, left))):
                position.decompressed += len(chunk)
                if left is not None:
                    left -= len(chunk)
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
