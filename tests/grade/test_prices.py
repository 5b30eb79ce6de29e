"""Prices: price-file rules (per token, per hour, as a provider) before genai-prices'
bundled database by endpoint; nothing guessed, every refusal says why."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from genai_prices import Usage, calc_price
from hypothesis import given
from hypothesis import strategies as st

from toolproxy.grade.prices import (
    Call,
    PriceFileError,
    Pricer,
    PriceRule,
    _genai_price,
    load_price_file,
)

AT = datetime(2025, 6, 1, tzinfo=UTC)
OPENAI = {"scheme": "https", "host": "api.openai.com", "port": 443, "path": "/v1/chat/completions"}
LOCAL = {"scheme": "http", "host": "127.0.0.1", "port": 8000, "path": "/v1/chat/completions"}

FILE = """
prices:
  - model: "SmolLM2*"
    host: "127.0.0.1:*"
    input_per_mtok: 0.10
    output_per_mtok: 0.40
    cached_input_per_mtok: 0.05
  - model: "llama-70b"
    per_hour: 3.60
    concurrency: 4
  - model: "*"
    host: "gateway.internal:*"
    provider: openai
  - model: "smollm2-135m"
    input_per_mtok: 99
    output_per_mtok: 99
"""


def call(model: str, tokens: tuple[int, int] | None = (1000, 100), **kw: object) -> Call:
    fields = dict(LOCAL) | kw
    tin, tout = tokens or (None, None)
    return Call(model=model, input_tokens=tin, output_tokens=tout, at=AT, **fields)  # type: ignore[arg-type]


@pytest.fixture
def pricer() -> Pricer:
    return Pricer(load_price_file(FILE, "prices.yaml"), source="prices.yaml")


def test_per_token_rule_prices_cached_input_at_its_own_rate(pricer: Pricer) -> None:
    p = pricer.price(call("SmolLM2-135M-Instruct", cached_input_tokens=400))
    assert p.cost == pytest.approx((600 * 0.10 + 400 * 0.05 + 100 * 0.40) / 1e6)
    assert p.how == "prices.yaml rule 1 (per token)"
    assert (p.input_per_mtok, p.output_per_mtok) == (0.10, 0.40)


def test_first_matching_rule_wins_and_globs_ignore_case(pricer: Pricer) -> None:
    # rule 1 matches before rule 4 even though rule 4 names the model exactly
    assert pricer.price(call("smollm2-135m")).how.startswith("prices.yaml rule 1")
    # the host glob: the same model elsewhere falls through to rule 4
    other = pricer.price(call("smollm2-135m", host="10.0.0.9"))
    assert other.how.startswith("prices.yaml rule 4")
    assert other.cost == pytest.approx((1000 * 99 + 100 * 99) / 1e6)


def test_per_hour_rule_prices_the_duration_shared_by_concurrency(pricer: Pricer) -> None:
    p = pricer.price(call("llama-70b", duration_ms=2_000))
    assert p.cost == pytest.approx(2.0 / 3600 * 3.60 / 4)
    assert p.how == "prices.yaml rule 2 (per hour)"
    # a per-hour price needs no token usage, but it needs the duration
    assert pricer.price(call("llama-70b", tokens=None, duration_ms=1_000)).cost is not None
    missing = pricer.price(call("llama-70b"))
    assert missing.cost is None and "duration" in missing.how


def test_provider_rule_prices_a_gateway_as_that_provider(pricer: Pricer) -> None:
    p = pricer.price(call("gpt-4o-mini", host="gateway.internal", port=4000))
    want = calc_price(
        Usage(input_tokens=1000, output_tokens=100), "gpt-4o-mini", provider_id="openai",
        genai_request_timestamp=AT,
    )  # fmt: skip
    assert p.cost == pytest.approx(float(want.total_price)) and p.cost > 0
    assert p.how == "prices.yaml rule 3 (as openai): genai-prices openai/gpt-4o-mini"
    assert p.input_per_mtok == pytest.approx(float(want.model_price.input_mtok))  # type: ignore[arg-type]


def test_the_database_prices_a_known_endpoint_and_its_model() -> None:
    p = Pricer().price(call("gpt-4o-mini", cached_input_tokens=200, **OPENAI))
    want = calc_price(
        Usage(input_tokens=1000, output_tokens=100, cache_read_tokens=200), "gpt-4o-mini",
        provider_api_url="https://api.openai.com/v1/chat/completions", genai_request_timestamp=AT,
    )  # fmt: skip
    assert p.cost == pytest.approx(float(want.total_price))
    assert p.how == "genai-prices openai/gpt-4o-mini"
    cached = Pricer().price(call("gpt-4o-mini", **OPENAI))
    assert cached.cost is not None and p.cost < cached.cost  # cache reads cost less


@pytest.mark.parametrize(
    ("model", "where", "tokens", "why"),
    [
        ("gpt-4o-mini", LOCAL, (1, 1), "endpoint 127.0.0.1:8000 is not a provider genai-prices"),
        ("my-finetune-7b", OPENAI, (1, 1), "genai-prices has no price for model 'my-finetune-7b'"),
        ("gpt-4o-mini", OPENAI, None, "no token usage reported"),
        ("", OPENAI, (1, 1), "names no model"),
    ],
)
def test_nothing_is_guessed(
    model: str, where: dict[str, object], tokens: tuple[int, int] | None, why: str
) -> None:
    p = Pricer().price(call(model, tokens, **where))
    assert p.cost is None
    assert p.how.startswith("unpriced: ") and why in p.how


def test_an_unknown_provider_in_a_rule_is_said() -> None:
    rules = [PriceRule(model="*", provider="no-such-cloud")]
    p = Pricer(rules).price(call("gpt-4o-mini"))
    assert p.cost is None and "genai-prices has no provider 'no-such-cloud'" in p.how


def test_describe_names_the_file_and_the_database(pricer: Pricer) -> None:
    assert pricer.describe().startswith("prices.yaml (4 rules), then genai-prices 0.")
    assert Pricer().describe().startswith("genai-prices 0.")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("prices: [", "prices.yaml: not YAML"),
        ("rules: []", "prices.yaml: expected a mapping with a `prices:` list"),
        ("prices:\n  - model: m\n    per_hour: 1\n    input_per_mtok: 1\n    output_per_mtok: 1",
         "prices.yaml: prices.0: Value error, give exactly one of"),
        ("prices:\n  - model: m\n    input_per_mtok: 1", "need both input_per_mtok and output"),
        ("prices:\n  - model: m\n    per_hour: -1", "prices.yaml: prices.0.per_hour: Input should"),
        ("prices:\n  - model: m\n    per_hour: 1\n    cost: 2", "prices.0.cost: Extra inputs"),
        ("prices:\n  - per_hour: 1", "prices.0.model: Field required"),
        ("prices:\n  - model: m\n    per_hour: 1\n    cached_input_per_mtok: 1",
         "cached_input_per_mtok goes with per-token prices"),
    ],
)  # fmt: skip
def test_bad_price_files_say_where(text: str, said: str) -> None:
    with pytest.raises(PriceFileError) as e:
        load_price_file(text, "prices.yaml")
    assert said in str(e.value) and "\n" not in str(e.value)


@given(
    st.integers(0, 10**9), st.integers(0, 10**9), st.integers(0, 10**9),
    st.floats(0, 1000), st.floats(0, 1000),
)  # fmt: skip
def test_per_token_cost_is_additive_in_the_usage(
    tin: int, tout: int, cached: int, rate_in: float, rate_out: float
) -> None:
    rule = PriceRule(model="*", input_per_mtok=rate_in, output_per_mtok=rate_out)
    pricer = Pricer([rule])
    whole = pricer.price(call("m", (tin, tout), cached_input_tokens=cached)).cost
    parts = pricer.price(call("m", (tin, 0), cached_input_tokens=cached)).cost
    out = pricer.price(call("m", (0, tout))).cost
    assert whole is not None and parts is not None and out is not None
    assert whole == pytest.approx(parts + out) and whole >= 0


ANTHROPIC = {"scheme": "https", "host": "api.anthropic.com", "port": 443, "path": "/v1/messages"}


@given(
    st.sampled_from([("gpt-4o-mini", OPENAI), ("claude-sonnet-4-5", ANTHROPIC),
                     ("gpt-5.4", OPENAI), ("claude-haiku-5-5", ANTHROPIC)]),
    st.integers(0, 400_000), st.integers(0, 400_000), st.integers(0, 400_000),
)  # fmt: skip
def test_the_fast_path_prices_exactly_as_genai_prices(
    model_where: tuple[str, dict[str, object]], tin: int, tout: int, cached: int
) -> None:
    """Rates read off the database once per model (and tiered prices, which gpt-5.4 and
    claude-haiku-5-5 have, priced call by call) give genai-prices' own figure."""
    model, where = model_where
    p = Pricer().price(call(model, (tin, tout), cached_input_tokens=cached, **where))
    want = calc_price(
        Usage(input_tokens=tin, output_tokens=tout, cache_read_tokens=min(cached, tin) or None),
        model, provider_api_url=Call(**where).url, genai_request_timestamp=AT,  # type: ignore[arg-type]
    )  # fmt: skip
    assert p.cost == pytest.approx(float(want.total_price), rel=1e-9, abs=1e-15)


SHARED = Pricer()  # one pricer for every example: all but the first read what it remembered


@given(
    st.sampled_from([("my-finetune-7b", OPENAI), ("gpt-4o-mini", LOCAL),
                     ("claude-sonnet-4-5", OPENAI)]),
    st.integers(0, 400_000), st.integers(0, 400_000), st.integers(0, 400_000),
)  # fmt: skip
def test_an_unpriced_model_is_said_as_genai_prices_says_it_for_any_usage(
    model_where: tuple[str, dict[str, object]], tin: int, tout: int, cached: int
) -> None:
    """The database's refusal is remembered per model and endpoint (a local model's 100,000
    calls each paid genai-prices' lookup): for every usage, the same words as asking it."""
    model, where = model_where
    c = call(model, (tin, tout), cached_input_tokens=cached, **where)
    p = SHARED.price(c)
    with pytest.raises(LookupError):
        calc_price(
            Usage(input_tokens=tin, output_tokens=tout), model, provider_api_url=c.url,
            genai_request_timestamp=AT,
        )  # fmt: skip
    assert p == _genai_price(c, None, AT)  # the lookup of this very call
    assert p.cost is None and p.how.startswith("unpriced: ")
