"""Tag cues for the labelling guide's tag definitions: set phrases for surprise, satisfaction,
relief, resignation, nostalgia, hope, loneliness and confusion, and a few feeling words.

Most cues only name a tag (score 0): they refine a turn that other words make emotional and
never make one emotional themselves. Every sentence here was written for these tests; none
comes from an evaluation set.
"""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.adapters.analyzers.offline.emotion import context_tags
from kioku.core.model import Valence
from kioku.ports.analyzer import Turn


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("Wasn't expecting a promotion this year, I'm thrilled.", "surprise"),
        ("I was not expecting the lake to be this pretty, what a lovely day.", "surprise"),
        ("She quit on Friday, didn't see that coming. Bit of a shame.", "surprise"),
        ("My old friend called out of the blue, it made my day.", "surprise"),
        ("The layoffs caught me off guard, I'm pretty upset.", "surprise"),
        ("I was taken aback by the news, honestly a bit sad.", "surprise"),
        ("My jaw dropped when I saw the repair bill, ugh.", "surprise"),
        ("Honestly speechless, my team finished the whole project early. Amazing.", "surprise"),
        ("The new noodle place is not half bad.", "satisfaction"),
        ("The hotel wasn't half bad for the price.", "satisfaction"),
        ("The sequel isn't half bad.", "satisfaction"),
        ("The commute is not the worst, decent views at least.", "satisfaction"),
        ("The ferry ride wasn't the worst, decent views at least.", "satisfaction"),
        ("My new desk isn't the worst.", "satisfaction"),
        ("Decent weekend overall.", "satisfaction"),
        ("Dodged a bullet there, the storm missed our town.", "relief"),
        ("Crisis averted, the backup worked.", "relief"),
        ("Huge weight off my shoulders now that the visa came through.", "relief"),
        ("The exams are over and I can finally breathe again.", "relief"),
        ("The scan showed nothing serious.", "relief"),
        ("Grandma is on the mend after her fall.", "relief"),
        ("Printer's broken, here we go again.", "resignation"),
        ("The train is late. What else is new.", "resignation"),
        ("Same old traffic jam this morning, so tiring.", "resignation"),
        ("Yet again the bus was cancelled, I'm so sick of it.", "frustration"),
        ("At this point I'm too tired to care, it's hopeless.", "resignation"),
        ("The landlord ignored my email as usual, so annoying.", "frustration"),
        ("My boss yelled again, I'm used to it by now.", "resignation"),
        ("When I was a kid we spent every summer at that beach, I miss it.", "nostalgia"),
        ("When I was little my dad sang this song, it's so lovely.", "nostalgia"),
        ("When I was young this park felt huge, a shame it's gone.", "nostalgia"),
        ("When we were kids we loved this show.", "nostalgia"),
        ("As a kid I adored that cartoon.", "nostalgia"),
        ("Growing up, my gran made this soup every Sunday. Love it.", "nostalgia"),
        ("My childhood home was sold today, it hurts.", "nostalgia"),
        ("Looking at old photos tonight, good times.", "nostalgia"),
        ("Found my old letters from camp, so sweet to read.", "nostalgia"),
        ("Back then we were happy.", "nostalgia"),
        ("This song reminds me of my first flat, happy days.", "nostalgia"),
        ("Here's hoping the new job is better.", "hope"),
        ("Someday I'll see the northern lights, I'm sure it'll be wonderful.", "hope"),
        ("Things will get better, I know it.", "hope"),
        ("My knee is getting better, which is nice.", "hope"),
        ("Finally some light at the end of the tunnel with my recovery.", "hope"),
        ("I have no one to talk to about this.", "loneliness"),
        ("Nobody to talk to since the move, it's hard and sad.", "loneliness"),
        ("I keep going back and forth about the move and it's stressing me out.", "confusion"),
        ("I can't decide between the two flats and it's driving me crazy.", "confusion"),
        ("Torn between two job offers, a bit worried.", "confusion"),
        ("I just don't get it. She lied to me.", "confusion"),
        ("I don't know whether to call him, I'm so nervous.", "confusion"),
        ("I don't know what to do about my sister, it's upsetting.", "confusion"),
        ("I really don't know why I'm this upset.", "confusion"),
        ("I have mixed feelings about leaving, it's sad and scary.", "confusion"),
        ("I've never been prouder of my daughter.", "pride"),
        ("Proudest moment of my career, honestly.", "pride"),
        ("I'm so much prouder of this painting than the last one.", "pride"),
        ("I've never been happier.", "joy"),
        ("Counting down the days until the holiday!", "excitement"),
        ("Can't stop smiling after that phone call.", "joy"),
        ("Can't stop grinning, she said yes.", "joy"),
        ("So giddy about the concert tonight.", "excitement"),
        ("Totally psyched for the trip.", "excitement"),
        ("Bittersweet day, my best friend moved abroad. I'm a bit sad.", "sadness"),
        ("Resigned to working this weekend.", "resignation"),
        ("I'm intrigued by how octopuses learn.", "curiosity"),
        ("The gig was cancelled. Oh well, c'est la vie.", "resignation"),
        ("I felt invisible at work today.", "loneliness"),
        ("I feel invisible at work.", "loneliness"),
        ("My phone froze again, so annoying.", "frustration"),
        ("I miss my grandad so much.", "sadness"),
        ("So lonely these days.", "sadness"),
    ],
)
def test_english_cue_gives_its_tag(analyzer: OfflineAnalyzer, text: str, tag: str) -> None:
    assert tag in analyzer.analyze(Turn(text)).tags


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("子供の頃よく遊んだ公園がなくなってて、さみしい", "nostalgia"),
        ("子どもの頃に食べた駄菓子、懐かしくて嬉しい", "nostalgia"),
        ("小さい頃に住んでた町に行ったら、涙が出た", "nostalgia"),
        ("学生時代の写真を見つけた。楽しかったな", "nostalgia"),
        ("学生の頃の友達と会えて楽しかった", "nostalgia"),
        ("想定外の出費で、ほんとに困った", "surprise"),
        ("誕生日なのに誰からも連絡がない。悲しい", "loneliness"),
        ("説明を読んだら、余計に分からなくなった。つらい", "confusion"),
        ("ありがとう、おかげでもっとわからなくなったよ。困る", "confusion"),
        ("転職するか決められない。ちょっとつらい", "confusion"),
        ("誰にも言えないことがあって、ずっと寂しい", "loneliness"),
        ("誰にも相談できないまま、毎日つらい", "loneliness"),
        ("鳥肌が立った、感動した", "surprise"),
        ("肩の荷が下りた。本当によかった", "relief"),
        ("明日の旅行、胸が躍る", "excitement"),
        ("推しのライブ、心が弾む", "excitement"),
        ("胸が締め付けられるような話だった", "sadness"),
        ("テンションが上がった！", "excitement"),
        ("明日晴れるといいな", "hope"),
        ("来年は海外に行けたらいいな", "hope"),
        ("雨で洗濯物乾かない、ちょっと残念。まあ、いっか", "resignation"),
        ("ボーナス少なかった。まあ、そんなもんだよね。残念", "resignation"),
        ("週末もずっと一人きりで寂しい", "loneliness"),
        ("独りきりの誕生日、つらい", "loneliness"),
        ("いつの間にか桜が散ってた、ちょっと悲しい", "surprise"),
        ("初めて知った、面白い！", "surprise"),
        ("やればできるじゃん、私", "pride"),
        ("締め切りの仕事、なんとか間に合った", "relief"),
    ],
)
def test_japanese_cue_gives_its_tag(analyzer: OfflineAnalyzer, text: str, tag: str) -> None:
    assert tag in analyzer.analyze(Turn(text)).tags


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("I was expecting the parcel today.", "surprise"),
        ("The invoice arrived out of the blue, please file it.", "surprise"),
        ("Half the team was bad at estimating.", "satisfaction"),
        ("The worst part of the recipe is the chopping.", "satisfaction"),
        ("The bullet points are in the doc.", "relief"),
        ("As usual, the meeting is at nine.", "resignation"),
        ("At this point the function returns None.", "resignation"),
        ("Same old password as before, please.", "resignation"),
        ("Again, thanks for the help!", "frustration"),
        ("Can you run the tests again?", "frustration"),
        ("Growing up in Leeds, I went to a school near the river.", "nostalgia"),
        ("Back then the office was in Leeds.", "nostalgia"),
        ("This reminds me of the bug we fixed last week.", "nostalgia"),
        ("Someday is not a day of the week.", "hope"),
        ("The build is getting better at caching.", "hope"),
        ("I don't know why the build fails, can you check the log?", "confusion"),
        ("Can't decide on a name for the variable, suggestions?", "confusion"),
        ("I have never been proud of that essay.", "pride"),
        ("Miss Smith is our new teacher.", "sadness"),
        ("I'll do it by myself tomorrow.", "loneliness"),
        ("I live on my own and love it.", "loneliness"),
        ("子供の頃は大阪に住んでいました。", "nostalgia"),
        ("学生時代の専攻は物理です。", "nostalgia"),
        ("想定外の入力は400を返してください。", "surprise"),
        ("一人で行けます。", "loneliness"),
        ("分からなくなったら聞いてください。", "confusion"),
        ("誰からもらったの？", "loneliness"),
        # なんとか is not なんと ("what a surprise").
        ("締め切り、なんとか終わった！", "surprise"),
        ("いいな、それ", "hope"),
        ("そんなもんどこで買ったの？", "resignation"),
    ],
)
def test_near_miss_does_not_get_the_tag(analyzer: OfflineAnalyzer, text: str, tag: str) -> None:
    assert tag not in analyzer.analyze(Turn(text)).tags


@pytest.mark.parametrize(
    ("plain", "with_cue"),
    [
        ("The meeting is at nine.", "As usual, the meeting is at nine."),
        ("I grew up in Leeds.", "Growing up, I lived in Leeds."),
        ("The bus was late.", "The bus was late again."),
        ("My sister called.", "My sister called out of the blue."),
        ("大阪に住んでいました。", "子供の頃は大阪に住んでいました。"),
    ],
)
def test_a_cue_that_only_names_a_tag_sets_no_feeling(
    analyzer: OfflineAnalyzer, plain: str, with_cue: str
) -> None:
    a, b = analyzer.analyze(Turn(plain)), analyzer.analyze(Turn(with_cue))
    assert b.valence is a.valence is Valence.NEUTRAL
    assert b.tags == ()
    assert abs(b.arousal - a.arousal) <= 5


def test_a_degree_word_reaches_past_a_tag_cue(analyzer: OfflineAnalyzer) -> None:
    # "damn" modifies nothing after it, so it counts as a feeling of its own; "again" in
    # between only names a tag and does not take the degree word away.
    result = analyzer.analyze(Turn("this damn printer jammed again"))
    assert result.valence is Valence.NEGATIVE
    assert "frustration" in result.tags


def test_a_tag_cue_in_a_question_names_nothing(analyzer: OfflineAnalyzer) -> None:
    told = analyzer.analyze(Turn("I don't know why I feel so low lately, it's upsetting."))
    asked = analyzer.analyze(
        Turn("I don't know why I feel so low lately, can you help? It's upsetting.")
    )
    assert "confusion" in told.tags
    assert asked.valence is Valence.NEGATIVE
    assert "confusion" not in asked.tags


def test_loneliness_carries_sadness() -> None:
    tags = context_tags(
        ("loneliness",), Valence.NEGATIVE, affection=False, resolve=False, surprise=False
    )
    assert tags == ("loneliness", "sadness")
    full = ("loneliness", "anxiety", "fear")
    assert (
        context_tags(full, Valence.NEGATIVE, affection=False, resolve=False, surprise=False) == full
    )
