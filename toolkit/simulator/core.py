"""What a simulator is without its web app: the engine, the store, the scheduler and the parts around them.

``build_state`` puts them on one ``State`` (what ``app.state`` holds: engine, store, settings, clock,
scheduler, journal, thread pools, fault hook, transport finder, delivery and destinations), which the app
(``web.app.create_app``) serves.  ``start`` and ``stop`` run the background work (the scheduler, the callback
pool): the app's lifespan calls them.
"""

from __future__ import annotations

from starlette.datastructures import State

from toolkit.simulator import delivery, faults
from toolkit.simulator.clock import SimClock
from toolkit.simulator.journal import open_journal
from toolkit.simulator.pools import Pools
from toolkit.simulator.rules import cards, followups, hosted_fields, payments, payouts, threeds, transfers
from toolkit.simulator.rules.engine import Engine
from toolkit.simulator.scheduler import Scheduler
from toolkit.simulator.settings import SimulatorSettings, default_settings
from toolkit.simulator.state import SimulatorState
from toolkit.simulator.storage import Store
from toolkit.simulator.storage.sqlite import SqliteStore


def build_engine(settings: SimulatorSettings, store: Store, clock: SimClock, scheduler: Scheduler) -> Engine:
    engine = Engine(settings, store, clock, wake=scheduler.wake)
    for module in (payments, followups, cards, payouts, transfers, threeds, hosted_fields):
        module.install(engine)
    clock.on_change(scheduler.wake)
    return engine


def build_state(
    settings: SimulatorSettings | None = None, store: Store | None = None, *, clock: SimClock | None = None
) -> State:
    """A simulator's state, ready for ``start``."""
    state = SimulatorState()
    state.settings = settings = settings or default_settings()
    state.store = store = store or SqliteStore()
    state.clock = clock = clock or SimClock(shared=store if store.shared else None)
    state.scheduler = scheduler = Scheduler()
    state.engine = engine = build_engine(settings, store, clock, scheduler)
    state.journal = open_journal(store, settings)
    state.pools = Pools()
    faults.install_state(state)
    delivery.install(state, engine)
    scheduler.on_take_over.append(state.delivery.take_over)  # what another process left sending is due again
    return state


def start(state: State) -> None:
    """The callback pool, then the scheduler (what falls due is done, callbacks go out)."""
    state.delivery.start()
    state.scheduler.start(state.engine)


def stop(state: State) -> None:
    """The scheduler, the callbacks and the journal stopped, each one's last writes made; none waits long for a
    database that does not answer (``Store.stopping``), and such a database stops none of them (their last writes
    are lost, said on the log)."""
    state.store.stopping()
    state.scheduler.stop()
    state.delivery.stop()
    close = getattr(state.journal, "close", None)
    if close is not None:  # (a journal written in batches: what waits is written before the store closes)
        close()
