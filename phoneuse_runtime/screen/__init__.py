"""The screen model: the UI tree, selectors, refs, the compact text form, settling and marks.

Every backend produces the same hierarchy XML; everything that reads or names what is on the
screen lives here, so actions, queries and backends share one reading of it.
"""
