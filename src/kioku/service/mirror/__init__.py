"""The human-readable mirror: a scope exported as spec 001's tree of files, and read back.

``kioku export --layout files DIR`` (:func:`export_files`) writes every memory as a Markdown
file with YAML front matter, by kind (``episodes/YYYY-MM-DD/``, ``knowledge/``,
``procedures/``, ``users/``), the activity log as one JSONL file per day and a ``kioku.json``
manifest; ``kioku import --layout files DIR`` (:func:`import_files`) reads such a tree back,
checking all of it before writing any of it. Export, import and export again give the same
files (but for the export time in ``kioku.json``). The layout is described in
:mod:`kioku.service.mirror.layout`.
"""

from __future__ import annotations

from kioku.service.mirror.export_files import ExportReport, export_files, render_memory
from kioku.service.mirror.import_files import ImportReport, Mirror, import_files, read_mirror
from kioku.service.mirror.layout import MirrorError, MirrorFileError

__all__ = [
    "ExportReport",
    "ImportReport",
    "Mirror",
    "MirrorError",
    "MirrorFileError",
    "export_files",
    "import_files",
    "read_mirror",
    "render_memory",
]
