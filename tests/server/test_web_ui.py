"""The web UI in a real browser: Debian's chromium driven by Playwright against `kioku serve`.

One server and one browser serve the whole module; each test opens its own page. The store is
seeded through the CLI. Skipped, with the way to install it, when /usr/bin/chromium is missing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kioku import Kioku
from tests.server.running import Served, kioku, make_key, serving

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ENV = {"KIOKU_NO_AUTO_BATCH": "1"}
INSTALL_HINT = (
    "the web UI tests need Debian's chromium at /usr/bin/chromium: run `python3 tasks.py test` "
    "as root (it installs it), or `apt-get install --no-install-recommends chromium`"
)

if not CHROMIUM.exists():
    pytest.skip(INSTALL_HINT, allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")


def _json(home: Path, *args: str) -> dict[str, Any]:
    done = kioku(home, *args, "--json", env=ENV)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def _add(home: Path, trigger: str, content: str, intensity: int, category: str, *more: str) -> str:
    args = ["add", "--trigger", trigger, "--content", content]
    args += ["--intensity", str(intensity), "--category", category, *more]
    return str(_json(home, *args)["id"])


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A store with episodes of different emotions, a knowledge item and a procedure."""
    home = tmp_path_factory.mktemp("webui") / "home"
    assert kioku(home, "init", env=ENV).returncode == 0
    ids = {"home": str(home)}
    turns = {
        "grief": ("My dog Koro died this morning.", "I'm so sorry, Koro was family."),
        "decision": ("We decided to move the launch to March.", "Noted: the launch is in March."),
        "casual": ("Had a coffee at the new cafe by the station.", "Sounds lovely!"),
    }
    for name, (user, assistant) in turns.items():
        memory = _json(home, "remember", "--user", user, "--assistant", assistant)
        ids[name] = str(memory.get("id") or memory["memory"]["id"])
    ids["joy"] = _add(
        home,
        "Got promoted to lead engineer!",
        "Joy and pride; celebrated with the team.",
        85,
        "emotional",
        "--valence",
        "positive",
        "--tags",
        "joy,pride",
    )
    assert kioku(home, "prime", "What happened to my dog Koro?", "--mark", env=ENV).returncode == 0
    ids["forget"] = _add(home, "Parked on level 3 of the garage", "Slot 3-B.", 20, "casual")
    ids["hostile"] = _add(
        home, "<b>bold</b> <script>alert(1)</script>\x07", "x\x1b[2J", 30, "casual"
    )
    ids["knowledge"] = str(
        _json(
            home, "write", "knowledge", "The staging DB is db-stg-2", "--title", "staging database"
        )["id"]
    )
    ids["procedure"] = str(
        _json(
            home,
            "write",
            "procedure",
            "--title",
            "deploy",
            "--description",
            "[deploy] release the web app",
            "--step",
            "run the tests",
            "--step",
            "push the tag",
        )["id"]
    )
    return ids


@pytest.fixture(scope="module")
def server(seeded: dict[str, str]) -> Iterator[Served]:
    with serving(Path(seeded["home"]), env=ENV) as served:
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any, server: Served) -> Iterator[Any]:
    context = browser.new_context(base_url=server.url.rstrip("/"))
    errors: list[str] = []
    opened = context.new_page()
    # Pages answered with 404 or 422 on purpose are logged as failed loads; anything else
    # (a script error, something the Content-Security-Policy blocked) fails the test.
    opened.on(
        "console",
        lambda m: (
            errors.append(m.text)
            if m.type == "error" and not m.text.startswith("Failed to load resource")
            else None
        ),
    )
    opened.on("pageerror", lambda e: errors.append(str(e)))
    opened.set_default_timeout(30_000)
    yield opened
    context.close()
    assert errors == [], errors


def rows(page: Any) -> str:
    return str(page.locator("table.memories").inner_text())


def test_browse_lists_every_kind_and_filters_by_kind(page: Any) -> None:
    page.goto("/")
    assert page.locator("html").get_attribute("lang") == "en"
    listed = rows(page)
    for words in ("Koro", "promoted", "staging database", "deploy"):
        assert words in listed
    koro = page.locator("table.memories tbody tr", has_text="Koro").first
    assert koro.locator("td").all_inner_texts()[2].isdigit()  # an episode's intensity
    page.select_option("#kind", "knowledge")
    page.click("text=Apply filters")
    page.wait_for_url(re.compile(r"kind=knowledge"))
    listed = rows(page)
    assert "staging database" in listed
    assert "Koro" not in listed
    assert "deploy" not in listed
    # Retention's category, intensity and score are an episode's; a knowledge row shows none.
    cells = page.locator("table.memories tbody tr").first.locator("td").all_inner_texts()
    assert cells[1:4] == ["–", "–", "–"]


def test_keyboard_reaches_the_search_box_and_enter_searches(page: Any) -> None:
    page.goto("/")
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement && document.activeElement.id") == "q":
            break
    else:
        pytest.fail("Tab never reached the search box")
    page.keyboard.type("Koro")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"q=Koro"))
    best = page.locator("table.memories tbody tr").first.inner_text()
    assert "Koro" in best


def test_memory_page_shows_curve_explanation_and_protection(
    page: Any, seeded: dict[str, str]
) -> None:
    page.goto("/")
    page.click("text=Got promoted to lead engineer!")
    page.wait_for_url(re.compile("/memories/" + seeded["joy"]))
    curve = page.locator("svg.curve")
    assert curve.count() == 1
    assert curve.locator("title").first.text_content()
    assert (page.locator("svg.curve path.past").get_attribute("d") or "").startswith("M")
    assert (page.locator("svg.curve path.forecast").get_attribute("d") or "").startswith("M")
    assert "if never recalled" in page.locator("#explanation").inner_text()
    assert "85" in page.locator("#score").inner_text()
    assert page.locator(".badge.protected").count() == 0

    page.click("button:has-text('Protect')")
    page.wait_for_selector(".notice")
    assert page.locator(".meta .badge.protected").count() == 1
    assert "protected: does not fade" in page.locator("#explanation").inner_text()

    page.click("button:has-text('Unprotect')")
    page.wait_for_selector(".notice")
    assert page.locator(".meta .badge.protected").count() == 0


def test_a_knowledge_page_says_how_it_is_kept_and_draws_no_fading(
    page: Any, seeded: dict[str, str]
) -> None:
    """Knowledge does not fade by spec 000's retention: its page has no curve or forecast."""
    page.goto("/memories/" + seeded["knowledge"])
    assert page.locator("svg.curve").count() == 0
    assert page.locator("#score").count() == 0
    assert "does not fade" in page.locator("#explanation").inner_text()
    kept = page.locator("section[aria-labelledby=kept-title]").inner_text()
    assert "Confidence" in kept
    assert (
        "Decay coefficient"
        not in page.locator("section[aria-labelledby=numbers-title]").inner_text()
    )
    page.goto("/memories/" + seeded["procedure"])
    assert page.locator("svg.curve").count() == 0
    assert "successes" in page.locator("#explanation").inner_text()


def test_a_knowledge_page_links_what_it_supersedes(page: Any, seeded: dict[str, str]) -> None:
    home = Path(seeded["home"])
    old = _json(home, "write", "knowledge", "The VPN gateway is vpn-1", "--title", "vpn")["id"]
    new = _json(home, "write", "knowledge", "The VPN gateway is vpn-2", "--title", "vpn")["id"]
    with Kioku.open(home, env=ENV) as k:
        k.supersede(str(old), str(new))
    page.goto(f"/memories/{new}")
    kept = page.locator("section[aria-labelledby=kept-title]")
    kept.locator(f"a[href='/memories/{old}']").click()
    page.wait_for_url(re.compile(f"/memories/{old}"))
    assert f"Superseded by {new}" in page.locator("#explanation").inner_text()


def test_edit_changes_the_text_and_search_finds_it(page: Any, seeded: dict[str, str]) -> None:
    page.goto("/memories/" + seeded["casual"])
    page.click("text=Edit")
    page.fill("#content", "A flat white and a quince tart at the zeppelin cafe.")
    page.fill("#intensity", "42")
    page.click("button:has-text('Save')")
    page.wait_for_url(re.compile("/memories/" + seeded["casual"]))
    assert "quince tart" in page.locator("#content").inner_text()
    assert "intensity 42" in page.content()
    page.goto("/?q=zeppelin+quince")
    best = page.locator("table.memories tbody tr").first.inner_text()
    assert "coffee at the new cafe" in best


def test_edit_refuses_what_is_not_valid(page: Any, seeded: dict[str, str]) -> None:
    page.goto(f"/memories/{seeded['casual']}/edit")
    page.fill("#tags", "not-an-emotion")
    page.click("button:has-text('Save')")
    assert page.locator("#edit-error").is_visible()


def test_forget_asks_first_and_cancel_keeps_it(page: Any, seeded: dict[str, str]) -> None:
    memory_id = seeded["forget"]
    page.goto("/memories/" + memory_id)
    page.click("text=Forget…")
    assert "Forget this memory?" in page.locator("h1").inner_text()
    page.click("a:has-text('Cancel')")
    page.wait_for_url(re.compile("/memories/" + memory_id + "$"))
    page.goto("/")
    assert "Parked on level 3" in rows(page)

    page.goto("/memories/" + memory_id)
    page.click("text=Forget…")
    page.click("button:has-text('Yes, forget it')")
    page.wait_for_url(re.compile(r"/\?notice=forgotten"))
    assert "Forgotten" in page.locator(".notice").inner_text()
    assert "Parked on level 3" not in rows(page)
    response = page.goto("/memories/" + memory_id)
    assert response is not None
    assert response.status == 404


def test_memory_text_is_escaped_and_cleaned(page: Any, seeded: dict[str, str]) -> None:
    page.goto("/memories/" + seeded["hostile"])
    title = page.locator("h1").inner_text()
    assert "<b>bold</b>" in title
    assert "<script>" in title
    assert page.locator("main b").count() == 0
    html = page.content()
    assert "\x07" not in html
    assert "\x1b" not in html


def test_timeline_and_stats_render(page: Any) -> None:
    page.goto("/timeline?days=7")
    assert page.locator("h1").inner_text() == "Timeline"
    assert page.locator("#lifecycle-title").is_visible()
    assert page.locator("#activity-title").is_visible()
    page.goto("/stats")
    assert page.locator("h1").inner_text() == "Statistics"
    assert page.locator("svg.barchart").count() == 3
    assert page.locator("svg.barchart rect.bar").count() >= 4
    kinds = page.locator("#kinds-title").locator("xpath=..").inner_text()
    assert "knowledge" in kinds
    assert "procedure" in kinds
    # The mood balance: a week of days, today's with the grief primed by the seed.
    days = page.locator("table#mood tbody tr")
    assert days.count() == 7
    today = days.nth(6).locator("td").all_inner_texts()
    assert int(today[2]) >= 1
    assert page.locator("table#mood tbody tr").nth(0).locator("td").last.inner_text() == "–"


def test_simulate_runs_and_charts_the_levels(page: Any) -> None:
    page.goto("/simulate")
    page.fill("#days", "20")
    page.fill("#per_day", "2")
    page.click("button:has-text('Run the simulation')")
    # The run goes on in the background; its own page follows it until the result is in.
    page.wait_for_selector("#result-title", timeout=120_000)
    assert re.search(r"/simulate/[A-Za-z0-9_-]{16}$", page.url)
    assert "20 days simulated" in page.locator("#result-title").inner_text()
    assert page.locator("svg.stacked path.band1").count() == 1
    page.goto(page.url[: page.url.rindex("/") + 1] + "not-a-run")
    assert "No such simulation" in page.locator("main").inner_text()


def test_ui_headers(server: Served) -> None:
    with server.client() as client:
        for path in ("/", "/stats", "/login", "/memories/nope", "/static/kioku.css"):
            response = client.get(path)
            csp = response.headers["content-security-policy"]
            assert "default-src 'none'" in csp
            assert "script-src 'self'" in csp
            assert response.headers["cache-control"] == "no-store"
        assert client.get("/memories/nope").status_code == 404


def test_posts_need_the_form_token_and_this_origin(server: Served, seeded: dict[str, str]) -> None:
    memory_id = seeded["decision"]
    with server.client() as client:
        page = client.get(f"/memories/{memory_id}").text
        token = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
        assert token is not None

        refused = client.post(f"/memories/{memory_id}/protect", data={})
        assert refused.status_code == 403
        refused = client.post(f"/memories/{memory_id}/protect", data={"csrf": "0" * 64})
        assert refused.status_code == 403
        refused = client.post(
            f"/memories/{memory_id}/forget",
            data={"csrf": token.group(1), "confirm": "yes"},
            headers={"Origin": "http://evil.example"},
        )
        assert refused.status_code == 403
        assert client.get(f"/memories/{memory_id}").status_code == 200
        assert "badge protected" not in client.get(f"/memories/{memory_id}").text

        done = client.post(f"/memories/{memory_id}/protect", data={"csrf": token.group(1)})
        assert done.status_code == 303
        assert "badge protected" in client.get(f"/memories/{memory_id}").text
        done = client.post(f"/memories/{memory_id}/unprotect", data={"csrf": token.group(1)})
        assert done.status_code == 303


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, str]]:
    """A server with keys: alice's key, and a memory of alice's and one of bob's."""
    home = tmp_path_factory.mktemp("webkeys") / "home"
    key = make_key(home, "alice-ui", "alice")
    make_key(home, "bob-ui", "bob")
    for user, words in (("alice", "Alice adopted a kitten"), ("bob", "Bob sold his bicycle")):
        done = kioku(home, "--user", user, "add", "--trigger", words, "--content", "c",
                     "--intensity", "60", "--category", "casual", env=ENV)  # fmt: skip
        assert done.returncode == 0, done.stderr
    with serving(home, env=ENV) as served:
        yield served, key


def test_keys_sign_in_shows_only_that_owners_memories(
    browser: Any, keyed: tuple[Served, str]
) -> None:
    served, key = keyed
    context = browser.new_context(base_url=served.url.rstrip("/"))
    try:
        page = context.new_page()
        page.goto("/")
        page.wait_for_url(re.compile(r"/login\?next=/"))
        page.fill("#key", "kk_wrong_key_000000000000")
        page.click("button:has-text('Sign in')")
        assert page.locator("#login-error").is_visible()

        page.fill("#key", key)
        page.click("button:has-text('Sign in')")
        page.wait_for_selector("table.memories")
        listed = rows(page)
        assert "Alice adopted a kitten" in listed
        assert "Bob" not in listed
        cookie = next(c for c in context.cookies() if c["name"] == "kioku_key")
        assert cookie["httpOnly"] is True
        assert cookie["sameSite"] == "Strict"

        page.click("button:has-text('Sign out')")
        page.wait_for_url(re.compile(r"/login"))
        page.goto("/stats")
        page.wait_for_url(re.compile(r"/login\?next=/stats"))
    finally:
        context.close()


def test_keys_without_cookie_redirect_and_api_stays_json(keyed: tuple[Served, str]) -> None:
    served, _ = keyed
    response = httpx.get(served.url, follow_redirects=False, timeout=30)
    assert response.status_code == 303
    assert response.headers["location"].startswith("/login")
