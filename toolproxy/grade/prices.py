"""What a model call cost, in dollars: a user price file first, then the price database
genai-prices ships (the pydantic team's, bundled in the wheel; never updated over the
network). Pure: the database is data in the package.

A price file (YAML; `toolproxy report --prices FILE`), first matching rule wins::

    prices:
      - model: "SmolLM2*"            # glob on the model name, case-insensitive
        host: "127.0.0.1:*"          # optional glob on the endpoint's host:port
        input_per_mtok: 0.10         # dollars per million input tokens
        output_per_mtok: 0.40
        cached_input_per_mtok: 0.05  # optional (default: input_per_mtok)
      - model: "llama-3.1-70b*"
        per_hour: 4.50               # a self-hosted endpoint's dollars per hour
        concurrency: 8               # requests it serves at once (default 1)
      - model: "*"
        host: "litellm.internal:*"
        provider: openai             # price as this genai-prices provider does

A rule prices per token (`input_per_mtok` and `output_per_mtok`), per hour (`per_hour`:
a call costs its duration x per_hour / concurrency) or as a provider (`provider`).
Without a matching rule the call is priced by genai-prices from its endpoint: a known
provider's API host (api.openai.com, api.anthropic.com, ...) and that provider's model.
Nothing is guessed: an endpoint genai-prices does not know (localhost, a gateway), a model
its provider does not list, or a call without token usage is unpriced, with the reason.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, NamedTuple

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from toolproxy.errors import UserError
from toolproxy.util.words import counted

MTOK = 1_000_000
UNPRICED = "unpriced: "  # how a lookup the database cannot answer begins


class PriceFileError(UserError):
    """A price file that cannot be used as written (exit 2)."""


class PriceRule(BaseModel):
    """One rule of a price file."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="glob on the model name (case-insensitive)")
    host: str | None = Field(default=None, description="glob on the endpoint's host:port")
    input_per_mtok: float | None = Field(default=None, ge=0)
    output_per_mtok: float | None = Field(default=None, ge=0)
    cached_input_per_mtok: float | None = Field(default=None, ge=0)
    per_hour: float | None = Field(default=None, ge=0)
    concurrency: int = Field(default=1, ge=1)
    provider: str | None = Field(default=None, description="price as this genai-prices provider")

    @model_validator(mode="after")
    def _one_kind(self) -> PriceRule:
        per_token = self.input_per_mtok is not None or self.output_per_mtok is not None
        kinds = [per_token, self.per_hour is not None, self.provider is not None]
        if sum(kinds) != 1:
            raise ValueError(
                "give exactly one of input_per_mtok + output_per_mtok, per_hour, provider"
            )
        if per_token and (self.input_per_mtok is None or self.output_per_mtok is None):
            raise ValueError("per-token prices need both input_per_mtok and output_per_mtok")
        if self.cached_input_per_mtok is not None and not per_token:
            raise ValueError("cached_input_per_mtok goes with per-token prices")
        return self

    def matches(self, model: str, host: str) -> bool:
        """The rule applies to `model` served at `host` (host:port)."""
        if not fnmatch.fnmatchcase(model.lower(), self.model.lower()):
            return False
        return self.host is None or fnmatch.fnmatchcase(host.lower(), self.host.lower())

    @property
    def kind(self) -> str:
        if self.per_hour is not None:
            return "per hour"
        return f"as {self.provider}" if self.provider else "per token"


class PriceFile(BaseModel):
    """A parsed price file."""

    model_config = ConfigDict(extra="forbid")

    prices: list[PriceRule] = Field(default_factory=list)


def load_price_file(text: str, name: str) -> list[PriceRule]:
    """The rules of a price file's text; PriceFileError naming the file and the rule."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise PriceFileError(f"{name}: not YAML: {e}".splitlines()[0]) from None
    if not isinstance(data, dict) or "prices" not in data:
        raise PriceFileError(f"{name}: expected a mapping with a `prices:` list of rules")
    try:
        return PriceFile.model_validate(data).prices
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise PriceFileError(f"{name}: {where}: {err['msg']}") from None


class Call(NamedTuple):
    """What pricing needs of one model call (build it by keyword). A named tuple, not a
    frozen pydantic model or dataclass: `report` builds one a case from the store's typed
    columns, and each of those set every field through a checked or frozen path."""

    model: str | None = None
    scheme: str = "https"
    host: str = ""
    port: int | None = None
    path: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    duration_ms: float | None = None
    at: datetime | None = None

    @property
    def hostport(self) -> str:
        return f"{self.host}:{self.port}" if self.port else self.host

    @property
    def url(self) -> str:
        default = {"https": 443, "http": 80}.get(self.scheme)
        port = f":{self.port}" if self.port and self.port != default else ""
        return f"{self.scheme}://{self.host}{port}{self.path}"


class Priced(NamedTuple):
    """A call's price: `cost` in dollars, or None with `how` saying why it is unpriced (a
    named tuple: one is made a case, as `Call`)."""

    cost: float | None
    how: str  # "genai-prices openai/gpt-4o-mini", "prices.yaml rule 2 (per token)", ...
    input_per_mtok: float | None = None
    output_per_mtok: float | None = None


class Pricer:
    """Prices calls: the rules of a price file (if any), then genai-prices by endpoint."""

    def __init__(self, rules: list[PriceRule] | None = None, source: str = "price file") -> None:
        self.rules = list(rules or [])
        self.source = source
        # per model, provider, endpoint and day: its rates (Linear), why the database has
        # no price for it whatever the usage (Priced), or None: tiered, priced per call
        self._linear: dict[tuple[Any, ...], Linear | Priced | None] = {}
        self._rules: dict[tuple[str, str], tuple[int, PriceRule] | None] = {}

    @property
    def database(self) -> str:
        """The bundled price database's name and version."""
        from importlib.metadata import version

        return f"genai-prices {version('genai-prices')}"

    def describe(self) -> str:
        """Where prices come from, for the report's heading."""
        n = len(self.rules)
        rules = f"{self.source} ({counted(n, 'rule')}), then " if n else ""
        return f"{rules}{self.database} (bundled; endpoint and model must both be known)"

    def price(self, call: Call) -> Priced:
        """What `call` cost, or why it is unpriced."""
        if not call.model:
            return Priced(None, "unpriced: the call names no model")
        key = (call.model, call.hostport)
        if key not in self._rules:
            self._rules[key] = next(
                ((i, r) for i, r in enumerate(self.rules, 1) if r.matches(*key)), None
            )
        found = self._rules[key]
        if found is None:
            return self._by_database(call, None)
        i, rule = found
        return self._by_rule(call, rule, f"{self.source} rule {i} ({rule.kind})")

    def _by_rule(self, call: Call, rule: PriceRule, how: str) -> Priced:
        if rule.provider is not None:
            priced = self._by_database(call, rule.provider)
            return Priced(priced.cost, f"{how}: {priced.how}", *_rates(priced))
        if rule.per_hour is not None:
            if call.duration_ms is None:
                return Priced(None, f"unpriced: {how} needs the call's duration, not recorded")
            cost = call.duration_ms / 3_600_000 * rule.per_hour / rule.concurrency
            return Priced(cost, how)
        assert rule.input_per_mtok is not None and rule.output_per_mtok is not None
        if call.input_tokens is None or call.output_tokens is None:
            return Priced(None, "unpriced: no token usage reported", *_rule_rates(rule))
        cached = min(call.cached_input_tokens or 0, call.input_tokens)
        cached_rate = rule.cached_input_per_mtok
        if cached_rate is None:
            cached_rate = rule.input_per_mtok
        cost = (
            (call.input_tokens - cached) * rule.input_per_mtok
            + cached * cached_rate
            + call.output_tokens * rule.output_per_mtok
        ) / MTOK
        return Priced(cost, how, *_rule_rates(rule))

    def _by_database(self, call: Call, provider: str | None) -> Priced:
        assert call.model is not None
        if call.input_tokens is None or call.output_tokens is None:
            return Priced(None, "unpriced: no token usage reported")
        at = call.at or datetime.now(tz=UTC)
        key = (call.model, provider, None if provider else call.url, at.date())
        if key not in self._linear:
            self._linear[key] = _linear_price(call, provider, at)
        linear = self._linear[key]
        if isinstance(linear, Linear):
            return linear.price(call)
        return linear or _genai_price(call, provider, at)  # unpriced, or tiered


def _rule_rates(rule: PriceRule) -> tuple[float | None, float | None]:
    return rule.input_per_mtok, rule.output_per_mtok


def _rates(priced: Priced) -> tuple[float | None, float | None]:
    return priced.input_per_mtok, priced.output_per_mtok


@dataclass(frozen=True, slots=True)
class Linear:
    """A database price without tiers, as dollars per token: what genai-prices computes,
    without its per-call cost (about 0.1 ms). `_linear_price` reads the rates off the
    database itself, by pricing a million tokens of each kind."""

    fixed: float  # per request
    input: float
    cached: float
    output: float
    how: str
    input_per_mtok: float | None
    output_per_mtok: float | None

    def price(self, call: Call) -> Priced:
        tin, tout = call.input_tokens or 0, call.output_tokens or 0
        cached = min(call.cached_input_tokens or 0, tin)
        cost = self.fixed + (tin - cached) * self.input + cached * self.cached
        cost += tout * self.output
        return Priced(cost, self.how, self.input_per_mtok, self.output_per_mtok)


def _linear_price(call: Call, provider: str | None, at: datetime) -> Linear | Priced | None:
    """The rates of `call`'s model at `at`, when its price has no tiers; why it is unpriced
    when the database has no price for its model or endpoint (a lookup that fails for any
    usage: a local model's 100,000 calls paid 5 s for it); None when it is tiered."""
    from genai_prices.types import TieredPrices

    def at_usage(tin: int, tout: int, cached: int) -> Priced:
        probe = call._replace(input_tokens=tin, output_tokens=tout, cached_input_tokens=cached)
        return _genai_price(probe, provider, at, check_tiers=TieredPrices)

    zero = at_usage(0, 0, 0)
    if zero.cost is None:
        return zero if zero.how.startswith(UNPRICED) else None
    fixed = zero.cost
    costs = [at_usage(*u).cost for u in ((MTOK, 0, 0), (MTOK, 0, MTOK), (0, MTOK, 0))]
    if any(c is None for c in costs):
        return None
    per = [(c or 0.0) - fixed for c in costs]
    return Linear(
        fixed, per[0] / MTOK, per[1] / MTOK, per[2] / MTOK, zero.how, zero.input_per_mtok,
        zero.output_per_mtok,
    )  # fmt: skip


def _genai_price(
    call: Call, provider: str | None, at: datetime, check_tiers: type | None = None
) -> Priced:
    from genai_prices import Usage, calc_price

    assert call.model is not None and call.input_tokens is not None
    usage = Usage(
        input_tokens=call.input_tokens,
        output_tokens=call.output_tokens,
        cache_read_tokens=min(call.cached_input_tokens or 0, call.input_tokens) or None,
    )
    try:
        if provider is not None:
            r = calc_price(usage, call.model, provider_id=provider, genai_request_timestamp=at)
        else:
            r = calc_price(usage, call.model, provider_api_url=call.url, genai_request_timestamp=at)
    except LookupError as e:
        return Priced(None, f"{UNPRICED}{_why(e, call, provider)}")
    mp = r.model_price
    if check_tiers is not None and any(isinstance(v, check_tiers) for v in vars(mp).values()):
        return Priced(None, "tiered")
    return Priced(
        float(r.total_price),
        f"genai-prices {r.provider.id}/{r.model.id}",
        _per_mtok(getattr(mp, "input_mtok", None)),
        _per_mtok(getattr(mp, "output_mtok", None)),
    )


def _per_mtok(value: Any) -> float | None:
    return float(value) if isinstance(value, (Decimal, int, float)) else None


def _why(error: LookupError, call: Call, provider: str | None) -> str:
    text = str(error)
    if provider is not None and "find provider" in text:
        return f"genai-prices has no provider {provider!r}"
    if "find provider" in text:
        return (
            f"endpoint {call.hostport} is not a provider genai-prices knows; add a rule "
            "to a price file (--prices)"
        )
    return f"genai-prices has no price for model {call.model!r} ({text})"
