"""The audit column by column, outside Beam: blocks of lines read by RE2 into Arrow columns, the
rules of `matcher` run once per distinct key, verdict columns gathered from their answers."""
