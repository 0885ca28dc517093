"""The streaming journal: a crash-safe record of one streaming response while it streams.

Open a :class:`StreamingJournal` when a response starts, feed it the text and tool calls
as they arrive, and :meth:`~StreamingJournal.finalize` it once the response is stored. A
process that dies mid-stream leaves its journal behind; on the next start :func:`orphans`
lists such sessions, :func:`recover` reads one back (text, tool calls, session details) and
:func:`discard` deletes it once what was recovered is stored. kioku keeps journals in
``<home>/shortterm/``.
"""

from kioku.service.journal.files import (
    JournalClosedError,
    JournalCorruptError,
    JournalError,
    JournalInUseError,
    JournalNotFoundError,
    JournalRecovery,
    OrphanJournalError,
    ToolCall,
    discard,
    has_orphan,
    journal_filename,
    journal_path,
    orphans,
    recover,
)
from kioku.service.journal.journal import (
    FLUSH_INTERVAL_SEC,
    FLUSH_SIZE_CHARS,
    StreamingJournal,
)

__all__ = [
    "FLUSH_INTERVAL_SEC",
    "FLUSH_SIZE_CHARS",
    "JournalClosedError",
    "JournalCorruptError",
    "JournalError",
    "JournalInUseError",
    "JournalNotFoundError",
    "JournalRecovery",
    "OrphanJournalError",
    "StreamingJournal",
    "ToolCall",
    "discard",
    "has_orphan",
    "journal_filename",
    "journal_path",
    "orphans",
    "recover",
]
