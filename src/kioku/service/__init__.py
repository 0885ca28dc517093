"""The service layer: the use cases, grouped by capability, behind the ``Kioku`` facade.

``remember``, ``recall``, ``lifecycle``, ``erasure``, ``context`` and ``inspection`` hold the
use cases as functions of an :class:`~kioku.service.engine.Engine`; ``kioku.py`` is the facade
that delegates to them; ``runtime.py`` opens the parts an engine is made of.
"""
