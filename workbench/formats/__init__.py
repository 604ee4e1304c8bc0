"""Readers and writers of the file formats the workbench exchanges (adapters).

* ``trec``: TREC run files, qrels and topic files (strict; errors name file:line).
* ``beir``: BEIR ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/*.tsv``.
* ``smart``: the Cranfield collection's SMART files.
* ``io``: atomic writes.

Every reader raises ``workbench.errors.InputFormatError`` with the file, the
1-based line and the problem; none of them knows about the store.
"""
