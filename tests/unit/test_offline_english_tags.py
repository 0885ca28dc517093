"""English tags the labelling guide asks for: resignation and surprise in set phrases, irony's
anger, joy for a favourite thing.

Every sentence here was written for these tests; none comes from an evaluation set.
"""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.ports.analyzer import Turn


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("Gas prices up again. Not even surprised anymore.", "resignation"),
        ("Locked out of my own flat again. Story of my life.", "resignation"),
        ("Oh great, the printer jammed again.", "anger"),
        ("My favourite cafe reopened today!", "joy"),
        ("Can't sleep again, my interview is at nine.", "anxiety"),
        ("This song takes me back to summer camp.", "nostalgia"),
        ("Moved to a new town and I'm all alone here.", "loneliness"),
        ("I did it! Ran the whole 10k without stopping.", "pride"),
        ("Wow, octopuses have three hearts? Tell me more!", "curiosity"),
        ("The audacity of that man, cutting the queue.", "anger"),
        ("I snapped at my sister and I feel awful about it.", "guilt"),
        ("Still a bit shaken after the near miss on the motorway.", "fear"),
        ("Feeling glum and listless all weekend.", "sadness"),
        ("Thanks, that did the trick. You're a lifesaver!", "gratitude"),
        ("Still waiting for results from the biopsy.", "anxiety"),
    ],
)
def test_tag(analyzer: OfflineAnalyzer, text: str, tag: str) -> None:
    assert tag in analyzer.analyze(Turn(text)).tags


def test_emoji_added_for_english_posts(analyzer: OfflineAnalyzer) -> None:
    assert (
        "frustration"
        in analyzer.analyze(Turn("Got a parking ticket while paying for parking 🙃")).tags
    )
    assert "joy" in analyzer.analyze(Turn("my niece drew me a card 🥹")).tags
