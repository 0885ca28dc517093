"""Store contract: token usage is kept per call and summed per provider, model and purpose."""

from __future__ import annotations

from datetime import timedelta

from kioku.core.usage import Usage
from kioku.ports.store import Store
from tests.contract.conftest import BASE_TIME


def test_usage_is_summed_per_provider_model_and_purpose(store: Store) -> None:
    assert store.usage_totals() == []
    for i in range(3):
        store.record_usage(
            Usage("anthropic", "claude-haiku-4-5", "analyze", 100 + i, 10, BASE_TIME)
        )
    store.record_usage(Usage("anthropic", "claude-haiku-4-5", "summarize", 500, 60, BASE_TIME))
    store.record_usage(
        Usage("openai", "gpt-4o-mini", "analyze", 7, 1, BASE_TIME + timedelta(days=2))
    )
    totals = {(t.provider, t.purpose): t for t in store.usage_totals()}
    assert totals["anthropic", "analyze"].calls == 3
    assert totals["anthropic", "analyze"].input_tokens == 303
    assert totals["anthropic", "analyze"].output_tokens == 30
    assert totals["anthropic", "summarize"].input_tokens == 500
    recent = store.usage_totals(BASE_TIME + timedelta(days=1))
    assert [(t.provider, t.calls) for t in recent] == [("openai", 1)]


def test_usage_survives_a_rolled_back_transaction_only_when_outside_it(store: Store) -> None:
    try:
        with store.atomic():
            store.record_usage(Usage("openai", "m", "keywords", 1, 1, BASE_TIME))
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert store.usage_totals() == []
