"""Hook tests: what a sample expects of its runs (the ``"expect"`` key of a sample file), judged
against a run's :class:`~studio.core.run_outcome.RunOutcome`.

- ``model``: the expectations of a sample, parsed with every finding (a malformed expectation
  is a problem of the sample, at its JSON path);
- ``json_match``: JSON pointers into a value, JSON equality and ``contains``;
- ``evaluate``: one run judged against the expectations that name its target;
- ``targets``: the targets of a workspace and the plan of a sample's tests;
- ``from_outcome``: a finished run turned into expectations, written into the sample file;
- ``report`` and ``junit``: the summary a person reads and the XML a CI server reads.
"""
