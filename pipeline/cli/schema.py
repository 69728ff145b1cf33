"""`crawl-audit schema`: a table's schema as BigQuery or JSON Schema takes it, derived from
`matcher/records.py`."""
from __future__ import annotations

import argparse
import json

from matcher import records
from pipeline.cli.errors import EXIT_OK


def schema(args: argparse.Namespace) -> int:
    """The record schema of one table, or of all by name."""
    from pipeline.tables.schema import bigquery_schema  # pyarrow: loaded only for this command

    names = [args.table] if args.table else list(records.TABLES)
    if args.format == "bigquery":
        schemas = {name: bigquery_schema(records.TABLES[name])["fields"] for name in names}
    else:
        schemas = {name: records.json_schema(records.TABLES[name], title=name) for name in names}
    print(json.dumps(schemas[args.table] if args.table else schemas, indent=2, ensure_ascii=False))
    return EXIT_OK
