"""Payers made by faker, and merchant order ids that never collide between runs or xdist workers.

Field lengths follow the registry (``toolkit.fields``): phone up to 15 characters, zip up to
10, names and address lines up to 50.  E-mail addresses are on faker's reserved example
domains, so a test never writes to a real person.
"""

from __future__ import annotations

import itertools
import os
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

_MAX_ORDERID = 39  # "under 40 characters"
_PREFIX = re.compile(r"^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$")


@dataclass(frozen=True)
class Payer:
    """The customer of an order, with the request field names of ``toolkit.fields``."""

    first_name: str
    last_name: str
    email: str
    phone: str
    address1: str
    city: str
    state: str
    zip_code: str
    country: str
    ipaddress: str

    @property
    def full_name(self) -> str:
        return f"{self.first_name} {self.last_name}"

    def fields(self) -> dict[str, str]:
        """Every field of the payer, ready to merge into a request."""
        return asdict(self)


def new_payer(seed: int | None = None, *, locale: str = "en_US") -> Payer:
    """A plausible US payer; the same ``seed`` gives the same payer."""
    from faker import Faker  # here, not at the top: the outcome table must stay cheap to import

    fake = Faker(locale)
    if seed is not None:
        fake.seed_instance(seed)
    return Payer(
        first_name=fake.first_name()[:50],
        last_name=fake.last_name()[:50],
        email=fake.safe_email(),
        phone=fake.numerify("+1555#######"),
        address1=fake.street_address()[:50],
        city=fake.city()[:50],
        state=fake.state_abbr(),
        zip_code=fake.zipcode()[:10],
        country="US",
        ipaddress=fake.ipv4_public(),
    )


class OrderIds:
    """``client_orderid`` values: ``<prefix>-<run>-<worker>-<process>-<counter>``, charset [A-Za-z0-9-].

    ``run`` is shared by every xdist worker of one run (``PYTEST_XDIST_TESTRUNUID``), else random;
    ``worker`` (``PYTEST_XDIST_WORKER``, e.g. ``gw3``; ``m`` outside xdist) is read at every call;
    ``process`` is random, so that a restarted worker with the same name cannot repeat an id.
    """

    def __init__(self, *, env: Mapping[str, str] | None = None, run: str | None = None) -> None:
        self._env = os.environ if env is None else env
        self.run = _clean(run or self._env.get("PYTEST_XDIST_TESTRUNUID", "") or secrets.token_hex(4))[:8]
        self.process = secrets.token_hex(2)
        self._counter = itertools.count(1)
        self.made = 0  # the counter of the last id made

    def worker(self) -> str:
        return _clean(self._env.get("PYTEST_XDIST_WORKER", ""))[:6] or "m"

    def new(self, prefix: str = "gk") -> str:
        """The next id; ValueError when ``prefix`` has other characters than [A-Za-z0-9-] or is too long."""
        if not _PREFIX.match(prefix):
            raise ValueError(f"client_orderid prefix {prefix!r}: use letters, digits and single hyphens only")
        self.made = next(self._counter)
        orderid = f"{prefix}-{self.run}-{self.worker()}-{self.process}-{self.made}"
        if len(orderid) > _MAX_ORDERID:
            raise ValueError(f"client_orderid {orderid!r} is longer than {_MAX_ORDERID} characters: shorten the prefix")
        return orderid

    def made_from_now(self) -> Callable[[str], bool]:
        """Whether a ``client_orderid`` is one that ``new`` makes from now on (any prefix)."""
        since, tail = self.made, f"-{self.run}-{self.worker()}-{self.process}"

        def made(client_orderid: str) -> bool:
            head, _, counter = client_orderid.rpartition("-")
            return head.endswith(tail) and counter.isdigit() and int(counter) > since

        return made


def _clean(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", text)


_RUN = OrderIds()  # one per process: its counter makes the ids of this process unique


def new_client_orderid(prefix: str = "gk") -> str:
    """A ``client_orderid`` unique in this run and across runs and xdist workers (``gk-1a2b3c4d-gw0-9f3a-17``)."""
    return _RUN.new(prefix)


def made_from_now() -> Callable[[str], bool]:
    """Whether a ``client_orderid`` is one ``new_client_orderid`` of this process makes from now on (a callback
    plan for a scenario's own orders: ``CallbackReceiver.fail_next(of=...)``)."""
    return _RUN.made_from_now()
