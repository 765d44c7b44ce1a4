"""What the suite runs against: the embedded simulator (default) or a configured sandbox profile.

For the simulator the suite starts it on a free loopback port and stops it at the end.  A sandbox
profile needs a public ``callback_url`` that forwards to this machine's callback receiver
(``GATEKIT_CALLBACK_PORT``); without one, callback scenarios are skipped with that reason.  When scenarios run side
by side, each worker's receiver takes a free port and the run's ``CallbackFront`` (``toolkit.callbacks.front``)
listens on that one, handing each callback to the worker whose order it is for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit import demo

if TYPE_CHECKING:  # the simulator and the receiver are imported when a target starts, not with the plugin
    from toolkit.callbacks import CallbackReceiver
    from toolkit.config import GatewayConfig
    from toolkit.payer.reading import PayerSettings
    from toolkit.simcontrol import SimulatorControl
    from toolkit.simulator.server import SimulatorServer
    from toolkit.simulator.settings import SimulatorSettings


# The embedded simulator decides this long after a request, as a gateway decides later than it answers
# (behaviour section 3): a merchant's code sees ``processing`` first and must wait.  [profiles.NAME.simulator]
# latency = 0 in gatekit.toml turns it off (a profile based on "simulator").
EMBEDDED_LATENCY = 0.1


def embeds_simulator(config: GatewayConfig) -> bool:
    """The ``simulator`` profile (or one based on it): the suite runs the simulator itself."""
    return config.base_url == demo.BASE_URL


def has_control_api(config: GatewayConfig) -> bool:
    """A simulator the suite can steer: the embedded one, or one that runs elsewhere (a team's ``gatekit simulate``:
    a profile based on ``simulator`` with its own ``base_url``), whose control API answers at the URL's root."""
    return config.simulator


def outside_simulator(config: GatewayConfig) -> bool:
    return config.simulator and not embeds_simulator(config)


def no_callbacks_reason(config: GatewayConfig) -> str | None:
    """Why callbacks cannot arrive from this profile's gateway, or None when they can."""
    if embeds_simulator(config) or config.callback_url:
        return None
    if outside_simulator(config) and _on_this_machine(config.base_url):
        return None  # (a simulator calls back loopback addresses: the receiver listens there)
    return (
        f"profile {config.profile} sets no callback_url: the gateway cannot reach this machine's "
        "callback receiver (set callback_url / GATEWAY_CALLBACK_URL and GATEKIT_CALLBACK_PORT)"
    )


@dataclass
class GatewayTarget:
    """The gateway under test and the merchant's receiving side."""

    profile: str
    config: GatewayConfig
    receiver: CallbackReceiver
    server: SimulatorServer | None = None
    _control: SimulatorControl | None = field(default=None, repr=False)
    outside_latency: float | None = None  # an outside simulator's latency (its /_sim/health), None for others
    payer_settings: PayerSettings | None = field(default=None, repr=False)

    @property
    def payer(self) -> PayerSettings:
        """What the profile tells the payer (``[profiles.NAME.payer]``); the defaults without it."""
        from toolkit.payer.reading import PayerSettings

        return self.payer_settings or PayerSettings()

    def simulator_summary(self) -> dict[str, object]:
        """The embedded simulator's settings that shape what a run sees (for a recording's index)."""
        if self.server is None:
            return {}
        settings = self.server.settings
        names = ("latency", "method_timeout", "challenge_timeout", "form_timeout", "page_style", "lenient")
        return {name: getattr(settings, name) for name in names}

    @property
    def latency(self) -> float:
        """Seconds the simulator takes to decide (0 on a sandbox: not ours to know)."""
        if self.server is not None:
            return self.server.settings.latency
        return self.outside_latency or 0.0

    @property
    def is_simulator(self) -> bool:
        """The gateway is a gatekit simulator (embedded, or a team's elsewhere): its control API can steer it."""
        return self.server is not None or self._control is not None

    @property
    def control(self) -> SimulatorControl:
        """The simulator's control API; only ``@simulator`` scenarios use it (they are skipped on a sandbox)."""
        if self._control is None:
            if self.server is None:
                raise RuntimeError(
                    f"profile {self.profile} is not the simulator: it has no control API (tag @simulator)"
                )
            self._control = self.server.control()
        return self._control

    @property
    def callback_url(self) -> str | None:
        """Where the gateway can call the receiver back, or None when it cannot reach this machine."""
        from toolkit.callbacks import forwarded_callback_url

        if self.is_simulator:
            return self.receiver.callback_url
        return forwarded_callback_url(self.config.callback_url)

    def stop(self) -> None:
        self.receiver.stop()
        if self._control is not None:
            self._control.close()
        if self.server is not None:
            self.server.stop()


def start_target(profile: str | None, *, config_file: Path | None = None, lenient: bool = False) -> GatewayTarget:
    """Start the receiver (and the simulator for the ``simulator`` profile; None: ``GATEKIT_PROFILE``).

    ``lenient``: the embedded simulator forgives what the production gateway refuses.
    """
    from toolkit.callbacks import CallbackReceiver
    from toolkit.callbacks.front import ROUTES_ENV, register, worker_path
    from toolkit.config import load_config
    from toolkit.simulator.server import SimulatorServer

    base = load_config(profile, file=config_file)
    server = None
    control, latency = None, None
    if embeds_simulator(base):
        server = SimulatorServer(embedded_settings(profile, config_file=config_file, lenient=lenient)).start()
        config = base.with_overrides(base_url=server.base_url)
    else:
        config = base
        if outside_simulator(base):
            control, latency = outside_control(base)
    routes, worker = os.environ.get(ROUTES_ENV), os.environ.get("PYTEST_XDIST_WORKER")
    fronted = server is None and bool(routes and worker and config.callback_url)
    port = int(os.environ.get("GATEKIT_CALLBACK_PORT", "0")) if server is None and not fronted else 0
    payer = load_payer_settings(profile, config_file=config_file)
    receiver = CallbackReceiver(config.control_key, port=port).start()
    if fronted and routes and worker and config.callback_url:  # (scenarios side by side: toolkit.callbacks.front)
        register(Path(routes), worker, receiver.port_number)
        config = config.with_overrides(callback_url=worker_path(config.callback_url, worker))
    return GatewayTarget(profile=base.profile, config=config, receiver=receiver, server=server, payer_settings=payer,
                         _control=control, outside_latency=latency)  # fmt: skip


def outside_control(config: GatewayConfig) -> tuple[SimulatorControl, float]:
    """The control API of a simulator that runs elsewhere (``GATEKIT_CONTROL_TOKEN`` when it asks for one), and its
    latency; ConfigError in one line when it does not answer."""
    from toolkit.config import ConfigError
    from toolkit.simcontrol import SimulatorControl, SimulatorControlError

    root = config.base_url.removesuffix("/paynet")
    control = SimulatorControl(root, token=os.environ.get("GATEKIT_CONTROL_TOKEN") or None)
    try:
        health = control.health()
    except (SimulatorControlError, OSError) as exc:
        control.close()
        raise ConfigError(f"profile {config.profile}: the simulator at {root} does not answer its control API "
                          f"({exc}); start it, or set GATEKIT_CONTROL_TOKEN if it asks for one") from None  # fmt: skip
    except Exception as exc:  # requests' errors (no answer at all)
        control.close()
        raise ConfigError(f"profile {config.profile}: the simulator at {root} does not answer ({type(exc).__name__})"
                          ) from None  # fmt: skip
    return control, float(health.get("latency", 0.0) or 0.0)


def _on_this_machine(url: str) -> bool:
    from urllib.parse import urlsplit

    from toolkit.simulator.destinations import is_loopback

    return is_loopback(urlsplit(url).hostname or "")


def load_payer_settings(profile: str | None, *, config_file: Path | None = None) -> PayerSettings:
    """``[profiles.NAME.payer]`` as ``PayerSettings``; ConfigError naming an unknown setting or a bad selector."""
    from toolkit.config import ConfigError, payer_settings
    from toolkit.payer.reading import PayerSettings
    from toolkit.payer.selectors import SelectorError

    name = profile or os.environ.get("GATEKIT_PROFILE") or "simulator"
    table = payer_settings(profile, file=config_file)
    known = tuple(PayerSettings.__dataclass_fields__)
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ConfigError(f"profile {name}: [profiles.{name}.payer]: unknown settings {', '.join(unknown)}; known: "
                          f"{', '.join(known)}")  # fmt: skip
    if not all(isinstance(value, str) for value in table.values()):
        raise ConfigError(f"profile {name}: [profiles.{name}.payer]: every setting is a string")
    try:
        return PayerSettings(**table)
    except SelectorError as exc:
        raise ConfigError(f"profile {name}: [profiles.{name}.payer]: {exc}") from None


def embedded_settings(
    profile: str | None, *, config_file: Path | None = None, lenient: bool = False
) -> SimulatorSettings:
    """The embedded simulator's settings: the demo merchant, ``EMBEDDED_LATENCY``, then the profile's own
    ``[profiles.NAME.simulator]`` table (``ConfigError`` naming the setting when one is wrong)."""
    from toolkit.config import ConfigError, simulator_settings
    from toolkit.simulator.settings import SettingsError, default_settings, simulator_table

    name = profile or os.environ.get("GATEKIT_PROFILE") or "simulator"
    table = simulator_settings(profile, file=config_file)
    try:
        overrides = simulator_table(table, f"profile {name}: [profiles.{name}.simulator]")
    except SettingsError as exc:
        raise ConfigError(str(exc)) from None
    return default_settings(**{"latency": EMBEDDED_LATENCY, "lenient": lenient, **overrides})


def target_note(profile: str | None, *, config_file: Path | None = None) -> str:
    """What the reports say of the gateway under test: the embedded simulator's latency, or the sandbox's URL."""
    from toolkit.config import load_config

    config = load_config(profile, file=config_file)
    load_payer_settings(profile, config_file=config_file)  # (a profile whose payer settings are wrong stops here)
    if outside_simulator(config):
        return f"gatekit simulator at {config.base_url} (its control API steers the @simulator scenarios)"
    if not embeds_simulator(config):
        return f"gateway {config.base_url}"
    latency = embedded_settings(profile, config_file=config_file).latency
    if latency <= 0:
        return "embedded simulator, deciding at once: latency 0, status never says processing"
    return f"embedded simulator, deciding {latency:g} s after each request: status says processing first"
