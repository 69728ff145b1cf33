"""The audit column by column, outside Beam: blocks of lines read by RE2 into Arrow columns, the
rules of `matcher` run once per distinct key, verdict columns gathered from their answers.

Arrow allocates through the C library's malloc here rather than its default allocator
(mimalloc), which keeps some twenty MiB per process that a run never reuses (bench/README.md);
a local run caps malloc's arenas as well (`pipeline.local.heap`)."""
import pyarrow as pa

pa.set_memory_pool(pa.system_memory_pool())
