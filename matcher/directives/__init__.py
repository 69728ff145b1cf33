"""Page-level directives: the indexing facet, kept apart from the crawl decision
(docs/semantics.md § Page directives).

Directives come from `X-Robots-Tag` header values and `<meta name="robots">` /
`<meta name="BOTNAME">` contents. One module per concept:

- `vocabulary`: the directive names and their values;
- `dates`: the date forms of `unavailable_after`;
- `parser`: a header value or meta element -> `Directives`, with lint;
- `model` and `strictness`: the parsed directives, and the most restrictive value of each for
  one crawler (the record's `indexing` object);
- `page_table`: the page-directives table and the row in effect for a request;
- `indexing`: a request's `indexing` object and the findings drawn from it.

Code outside this package imports from here.
"""
from matcher.directives.indexing import (
    effective_indexing,
    indexing_unseen,
    noindex_unseen,
    unavailable_after_passed,
)
from matcher.directives.model import Directive, Directives, Lint, combine
from matcher.directives.page_table import (
    PageDirectives,
    PageDirectivesError,
    PageDirectivesTable,
    page_directives_from_row,
)
from matcher.directives.parser import parse_meta, parse_x_robots_tag, x_robots_tag_directives

__all__ = [
    "Directive",
    "Directives",
    "Lint",
    "PageDirectives",
    "PageDirectivesError",
    "PageDirectivesTable",
    "combine",
    "effective_indexing",
    "indexing_unseen",
    "noindex_unseen",
    "page_directives_from_row",
    "parse_meta",
    "parse_x_robots_tag",
    "unavailable_after_passed",
    "x_robots_tag_directives",
]
