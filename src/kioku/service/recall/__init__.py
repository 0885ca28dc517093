"""Recall: finding, ranking and handing over the memories that matter for a query.

:mod:`.pipeline` runs a recall; :mod:`.scoring` scores each candidate; :mod:`.results` is what
a recall returns; :mod:`.traces` marks what was recalled; :mod:`.mood` is the session's mood.
"""
