"""@-file mentions: the workdir's files as completion candidates, fuzzy matching, and attaching.

All without a UI, in four parts:

- `listing`: what a mention can name (`list_candidates`): git's files, else a bounded walk.
- `matcher`: `FuzzyMatcher` ranks those paths per keystroke; `completer`'s `MentionCompleter`
  lists once (in a thread) and matches each keystroke against that listing.
- `syntax`: how a mention is written (`@path`, `@"with spaces"`), finding the mentions of a prompt
  (`find_mentions`) and the one at the cursor (`mention_at`).
- `attachment`: `expand_mentions` reads what a prompt mentions inside the workdir and puts it,
  in labelled blocks, before the prompt sent to the model; `image_fit` resizes an image over the
  API's limits (Pillow, imported by the first image only).

Importing this package loads neither Textual nor pydantic: the TUI imports it for completion
before its first frame.
"""

from __future__ import annotations

from tui_assist.session.mentions.attachment import (
    IMAGE_SUFFIXES,
    MAX_DIR_ENTRIES,
    MAX_FILE_CHARS,
    MAX_TOTAL_CHARS,
    Attached,
    Attachments,
    RefusalReason,
    Refused,
    UnsendableImageError,
    attach_documents,
    attach_prompt,
    expand_mentions,
    image_chips,
    without_documents,
)
from tui_assist.session.mentions.completer import MentionCompleter
from tui_assist.session.mentions.listing import (
    GIT_TIMEOUT,
    MAX_DEPTH,
    MAX_ENTRIES,
    SKIPPED_DIRS,
    CandidateListing,
    list_candidates,
)
from tui_assist.session.mentions.matcher import Completion, FuzzyMatcher
from tui_assist.session.mentions.syntax import (
    Mention,
    find_mentions,
    format_mention,
    mention_at,
)

__all__ = [
    "GIT_TIMEOUT",
    "MAX_DEPTH",
    "MAX_DIR_ENTRIES",
    "MAX_ENTRIES",
    "MAX_FILE_CHARS",
    "MAX_TOTAL_CHARS",
    "SKIPPED_DIRS",
    "Attached",
    "Attachments",
    "CandidateListing",
    "Completion",
    "FuzzyMatcher",
    "Mention",
    "MentionCompleter",
    "RefusalReason",
    "Refused",
    "UnsendableImageError",
    "attach_documents",
    "attach_prompt",
    "IMAGE_SUFFIXES",
    "expand_mentions",
    "image_chips",
    "find_mentions",
    "format_mention",
    "list_candidates",
    "mention_at",
    "without_documents",
]
